"""Published studies whose identities polyprobe's groups correspond to (lexicons/studies/<id>.yaml).

A group names the study identities it corresponds to in its ``study`` field; a study file maps
polyprobe's regions to the study's and gives the reason for every study identity no group
corresponds to. The study's own identity list is read from the user's copy (a CSV with the
columns region, term, english_gloss, attribute_standing), never committed: with it, the match
is counted per region (matched / total) and checked both ways.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from toolkit.catalog.identities import Group, IdentityList, Standing
from toolkit.catalog.loader import Catalog
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import load_yaml_collecting, read_text
from toolkit.core.project import Project
from toolkit.core.records import ID_PATTERN, Record, parse_record

STUDIES_DIR = "studies"
IDENTITY_COLUMNS = ("region", "term", "english_gloss", "attribute_standing")


class StudyFile(Record):
    """A study file (lexicons/studies/<id>.yaml), as written."""

    version: str
    id: str = Field(pattern=ID_PATTERN)
    name: str
    citation: str
    description: str = ""
    regions: dict[str, str] = Field(min_length=1)
    """polyprobe region -> the study's name for it."""
    left_out: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Study region -> study term -> why no group corresponds to it."""


@dataclass(frozen=True)
class StudyIdentity:
    """One row of the study's identity list."""

    region: str
    term: str
    gloss: str
    attribute_standing: str
    line: int

    @property
    def standing(self) -> Standing:
        """The study's standing as polyprobe's: non-marginalized is dominant, anything else marginalized."""
        label = self.attribute_standing.lower()
        return "dominant" if label.endswith("non_marginalized") else "marginalized"


@dataclass
class RegionMatch:
    """One region's correspondence with the study: terms matched, left out with a reason, or neither."""

    region: str
    study_region: str
    matched: dict[str, list[str]] = field(default_factory=dict)
    """Study term -> the groups that correspond to it."""
    left_out: dict[str, str] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)
    """Study terms with neither a group nor a reason."""
    total: int | None = None

    @property
    def share(self) -> float | None:
        """The share of the study's terms that a group corresponds to, once the study's list is known."""
        return len(self.matched) / self.total if self.total else None


@dataclass
class StudyMatch:
    """The whole correspondence with one study, as `catalog study` reports it."""

    study: StudyFile
    regions: dict[str, RegionMatch]
    standing_differences: list[dict[str, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def study_ids(project: Project) -> list[str]:
    """The studies the catalog has files for."""
    folder = project.lexicons / STUDIES_DIR
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def load_study(project: Project, study_id: str) -> StudyFile:
    """Load and check one study file; an unknown study or a file with problems is refused."""
    known = study_ids(project)
    if study_id not in known:
        raise InputError(
            f"unknown study {study_id!r}; known: {', '.join(known) or 'none'} (lexicons/studies/)"
        )
    path = project.lexicons / STUDIES_DIR / f"{study_id}.yaml"
    rel = project.rel(path)
    problems: list[Problem] = []
    raw = load_yaml_collecting(path, rel, problems)
    study = parse_record(StudyFile, raw, file=rel, record="(file)", problems=problems)
    if study is not None and study.id != study_id:
        problems.append(Problem(rel, "(file)", "id", f"must be the file's name {study_id!r}"))
    if problems or study is None:
        raise CatalogError(problems or [Problem(rel, "(file)", "", "not a study file")])
    return study


def read_identities(path: Path) -> list[StudyIdentity]:
    """The study's identity list; a file that cannot be read whole is refused, naming the line."""
    rel = str(path)
    text = read_text(path, rel)
    rows = list(csv.reader(text.splitlines()))
    if not rows or tuple(c.strip() for c in rows[0]) != IDENTITY_COLUMNS:
        raise InputError(f"{rel}: line 1: the header must be {','.join(IDENTITY_COLUMNS)}")
    out = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(IDENTITY_COLUMNS) or not all(cell.strip() for cell in (row[0], row[1], row[3])):
            raise InputError(
                f"{rel}: line {number}: needs {len(IDENTITY_COLUMNS)} columns ({', '.join(IDENTITY_COLUMNS)})"
            )
        out.append(StudyIdentity(row[0].strip(), row[1].strip(), row[2].strip(), row[3].strip(), number))
    return out


def linked_groups(catalog: Catalog, study_id: str) -> list[tuple[IdentityList, Group]]:
    """Every group of the catalog that names an identity of the study, in list then id order."""
    return [
        (ilist, group)
        for ilist in sorted(catalog.identity_lists.values(), key=lambda il: il.path)
        for group in sorted(ilist.groups, key=lambda g: g.id)
        if study_id in group.study
    ]


def link_problems(catalog: Catalog) -> list[Problem]:
    """What can be checked without the study's own list: known studies, mapped regions, and no
    study term both linked by a group and listed as left out."""
    known = set(study_ids(catalog.project))
    studies = {sid: load_study(catalog.project, sid) for sid in sorted(known)}
    out = []
    for ilist in sorted(catalog.identity_lists.values(), key=lambda il: il.path):
        for group in ilist.groups:
            for sid, link in sorted(group.study.items()):
                if sid not in studies:
                    out.append(
                        Problem(
                            ilist.path,
                            group.id,
                            f"study.{sid}",
                            f"study-link: unknown study (known: {', '.join(sorted(known)) or 'none'})",
                        )
                    )
                    continue
                study = studies[sid]
                region = study.regions.get(ilist.region)
                if region is None:
                    out.append(
                        Problem(
                            ilist.path,
                            group.id,
                            f"study.{sid}",
                            f"study-link: the study has no region for {ilist.region!r} (it maps {', '.join(study.regions)})",
                        )
                    )
                    continue
                for term in link.terms:
                    if term in study.left_out.get(region, {}):
                        out.append(
                            Problem(
                                ilist.path,
                                group.id,
                                f"study.{sid}",
                                f"study-link: {term!r} is linked here but listed as left out in lexicons/studies/{sid}.yaml",
                            )
                        )
    return out


def match_study(catalog: Catalog, study: StudyFile, identities: list[StudyIdentity] | None) -> StudyMatch:
    """The groups that correspond to the study, per region; with the study's list, the counts,
    the identities left out and every disagreement between the two."""
    rel = f"lexicons/{STUDIES_DIR}/{study.id}.yaml"
    regions = {r: RegionMatch(r, sr) for r, sr in study.regions.items()}
    by_study_region = {sr: regions[r] for r, sr in study.regions.items()}
    result = StudyMatch(study, regions)
    for ilist, group in linked_groups(catalog, study.id):
        if ilist.region in regions:
            for term in group.study[study.id].terms:
                regions[ilist.region].matched.setdefault(term, []).append(group.id)
    for sr, reasons in study.left_out.items():
        if sr not in by_study_region:
            result.problems.append(
                Problem(
                    rel,
                    "(file)",
                    f"left_out.{sr}",
                    f"not one of the study's regions ({', '.join(by_study_region)})",
                )
            )
            continue
        by_study_region[sr].left_out.update(reasons)
    if identities is None:
        return result
    listed: dict[str, dict[str, StudyIdentity]] = {}
    for row in identities:
        listed.setdefault(row.region, {})[row.term] = row
    for sr, match in by_study_region.items():
        result.problems.extend(_count_region(match, sr, listed.get(sr, {}), study.id, rel))
    _compare_standings(catalog, study.id, by_study_region, listed, result)
    return result


def _count_region(
    match: RegionMatch, study_region: str, terms: dict[str, StudyIdentity], study_id: str, rel: str
) -> list[Problem]:
    """Hold one region's matches and reasons against the study's own list for that region: keep
    the terms the list has, count them, and name the terms on one side only."""
    problems = []
    match.total = len(terms)
    for term in sorted(set(match.matched) - set(terms)):
        problems.append(
            Problem(
                rel,
                ", ".join(match.matched[term]),
                f"study.{study_id}",
                f"{term!r} is not in the study's {study_region} list",
                "",
            )
        )
    for term in sorted(set(match.left_out) - set(terms)):
        problems.append(
            Problem(
                rel,
                "(file)",
                f"left_out.{study_region}",
                f"{term!r} is not in the study's {study_region} list",
            )
        )
    match.matched = {t: g for t, g in sorted(match.matched.items()) if t in terms}
    match.left_out = {t: r for t, r in sorted(match.left_out.items()) if t in terms}
    match.unmatched = sorted(set(terms) - set(match.matched) - set(match.left_out))
    for term in match.unmatched:
        problems.append(
            Problem(
                rel,
                "(file)",
                f"left_out.{study_region}",
                f"{term!r} ({terms[term].gloss}): no group corresponds to it and no reason is given",
            )
        )
    return problems


def _compare_standings(
    catalog: Catalog,
    study_id: str,
    by_study_region: dict[str, RegionMatch],
    listed: dict[str, dict[str, StudyIdentity]],
    result: StudyMatch,
) -> None:
    """Record every matched group whose standing differs from the study's (or that records the
    study's call) in ``result``; a difference neither recorded nor right is a problem."""
    groups = {g.id: (il, g) for il, g in linked_groups(catalog, study_id)}
    for sr, match in by_study_region.items():
        for term, gids in match.matched.items():
            theirs = listed[sr][term].standing
            for gid in gids:
                ilist, group = groups[gid]
                recorded = group.study[study_id].standing
                if group.standing == theirs and recorded is None:
                    continue
                result.standing_differences.append(
                    {
                        "region": match.region,
                        "term": term,
                        "group": gid,
                        "ours": group.standing,
                        "study": theirs,
                        "recorded": recorded or "",
                    }
                )
                if recorded != theirs and group.standing != theirs:
                    result.problems.append(
                        Problem(
                            ilist.path,
                            gid,
                            f"study.{study_id}",
                            f"the study calls {term!r} {theirs}, this group is {group.standing}: record the study's call "
                            f"(study: {{{study_id}: {{terms: [...], standing: {theirs}}}}})",
                        )
                    )
                elif recorded is not None and recorded != theirs:
                    result.problems.append(
                        Problem(
                            ilist.path,
                            gid,
                            f"study.{study_id}",
                            f"records the study's standing as {recorded}, but the study calls {term!r} {theirs}",
                        )
                    )


def study_manifest(catalog: Catalog, suites: list[str]) -> dict[str, Any]:
    """For a release: per study, the groups of the released suites that correspond to its
    identities (group id -> study terms), so a run can be limited to them."""
    paths = {f"lexicons/{p}" for sid in suites for p in catalog.suites[sid].spec.identities}
    out: dict[str, Any] = {}
    for study_id in study_ids(catalog.project):
        groups = {
            group.id: list(group.study[study_id].terms)
            for ilist, group in linked_groups(catalog, study_id)
            if ilist.path in paths
        }
        if groups:
            study = load_study(catalog.project, study_id)
            out[study_id] = {
                "version": study.version,
                "name": study.name,
                "citation": study.citation,
                "groups": dict(sorted(groups.items())),
            }
    return out

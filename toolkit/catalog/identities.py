"""Identity lists: attributes, protected groups, their standing in a region and the words that
name them in each locale (lexicons/identities/**.yaml, lexicons/taxonomy.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from toolkit.catalog.locales import Locales
from toolkit.core.errors import Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.project import Project
from toolkit.core.records import ID_PATTERN, SEMVER_RE, Record, parse_record, record_name
from toolkit.core.text import text_problems

Standing = Literal["dominant", "marginalized", "none"]
Variant = Literal["f", "m", "n"]
VARIANTS: tuple[Variant, ...] = ("f", "m", "n")
STANDINGS: tuple[Standing, ...] = ("dominant", "marginalized", "none")
TAXONOMY_FILE = "lexicons/taxonomy.yaml"


class Attribute(Record):
    """A protected attribute (gender, religion...) every group belongs to one of."""

    id: str = Field(pattern=ID_PATTERN)
    name: str
    description: str = ""


class Region(Record):
    """A region whose identity lists say where each group stands there."""

    id: str = Field(pattern=ID_PATTERN)
    name: str
    description: str = ""


class TaxonomyFile(Record):
    """lexicons/taxonomy.yaml, as written."""

    version: str
    description: str
    attributes: tuple[Attribute, ...]
    regions: tuple[Region, ...]


class Source(Record):
    """A cited source of an identity list."""

    id: str = Field(pattern=ID_PATTERN)
    citation: str
    url: str | None = None
    note: str = ""
    kind: Literal["evidence", "terms"] = "evidence"
    """What the source supports: evidence for a group's standing (statistics, reports, law,
    surveys), or only the words for the group (a terminology or style guide)."""


class StudyLink(Record):
    """The identities of a published study that one group corresponds to."""

    terms: tuple[str, ...] = Field(min_length=1)
    """The study's own identity terms, exactly as the study's list writes them."""
    standing: Standing | None = None
    """The study's standing, recorded beside ours where the two differ."""


class Group(Record):
    """One protected group: its attribute, its standing in the list's region, the sources for both,
    and the words that name it in each locale."""

    id: str = Field(pattern=ID_PATTERN)
    attribute: str
    name: str
    """English label for reports."""
    standing: Standing
    source: tuple[str, ...] = Field(min_length=1)
    """Ids of the list's sources that justify the group and its standing."""
    variants: tuple[Variant, ...] | None = None
    """Restrict the group to these variants (e.g. a 'female' group only renders female-subject variants)."""
    bare: bool = False
    """The template's person noun alone names the group (e.g. 'woman'): it has no terms, every form is ''."""
    terms: dict[str, dict[str, str]] = Field(default_factory=dict)
    note: str = ""
    judgement: str = ""
    """The project's own reasoning for the standing, where no cited source states it."""
    study: dict[str, StudyLink] = Field(default_factory=dict)
    """Per study (lexicons/studies/<id>.yaml): the study identities this group corresponds to.
    A plain list is short for ``{terms: [...]}``."""

    @field_validator("study", mode="before")
    @classmethod
    def _terms_shorthand(cls, value: object) -> object:
        if isinstance(value, dict):
            return {k: {"terms": v} if isinstance(v, list) else v for k, v in value.items()}
        return value


class IdentityListFile(Record):
    """One identity list file, as written."""

    version: str
    description: str
    region: str = Field(pattern=ID_PATTERN)
    locales: tuple[str, ...]
    sources: tuple[Source, ...] = Field(min_length=1)
    reference_groups: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Per attribute, per locale: the group other groups are compared with (MBCM's majority religion)."""
    groups: tuple[Group, ...]


@dataclass(frozen=True)
class IdentityList:
    """A checked identity list, as templates are filled from it."""

    path: str
    version: str
    region: str
    locales: tuple[str, ...]
    sources: dict[str, Source]
    reference_groups: dict[str, dict[str, str]]
    groups: tuple[Group, ...]
    description: str = ""

    def terms(self, group: Group, locale: str, forms: frozenset[str]) -> dict[str, str]:
        """The forms a template sees for ``group`` in ``locale``."""
        if group.bare:
            return dict.fromkeys(sorted(forms), "")
        return dict(group.terms[locale])


@dataclass
class Taxonomy:
    """The closed sets every identity list and template draws from: attributes and regions."""

    version: str
    by_id: dict[str, Attribute] = field(default_factory=dict)
    regions: dict[str, Region] = field(default_factory=dict)
    broken: bool = False
    """The file could not be used whole: problems about unknown attributes or regions follow
    from it and are reported under it, not one by one."""

    @property
    def cause(self) -> str:
        """What unknown attributes and regions are blamed on: the taxonomy when it is broken."""
        return TAXONOMY_FILE if self.broken else ""


def load_taxonomy(project: Project, problems: list[Problem]) -> Taxonomy:
    """Load and check the taxonomy; an unusable file gives an empty one marked ``broken``, so the
    problems that follow from it are blamed on it."""
    raw = load_yaml_collecting(project.root / TAXONOMY_FILE, TAXONOMY_FILE, problems)
    if raw is None:
        return Taxonomy(version="0.0.0", broken=True)
    parsed = parse_record(TaxonomyFile, raw, file=TAXONOMY_FILE, record="(file)", problems=problems)
    if parsed is None:
        return Taxonomy(version="0.0.0", broken=True)
    out = Taxonomy(version=parsed.version)
    for name in ("attributes", "regions"):
        if not getattr(parsed, name):
            problems.append(
                Problem(TAXONOMY_FILE, "(file)", name, f"has no {name}: every list and template needs them")
            )
            out.broken = True
    for attr in parsed.attributes:
        if attr.id in out.by_id:
            problems.append(Problem(TAXONOMY_FILE, attr.id, "id", "duplicate attribute id"))
        out.by_id[attr.id] = attr
    for region in parsed.regions:
        if region.id in out.regions:
            problems.append(Problem(TAXONOMY_FILE, region.id, "id", "duplicate region id"))
        out.regions[region.id] = region
    return out


def _check_terms(
    group: Group, ilist: IdentityListFile, rel: str, locales: Locales, problems: list[Problem]
) -> None:
    if group.bare:
        if group.terms:
            problems.append(
                Problem(rel, group.id, "terms", "a bare group has no terms (its forms are all empty)")
            )
        return
    for code in ilist.locales:
        if code not in group.terms:
            problems.append(
                Problem(
                    rel,
                    group.id,
                    f"terms.{code}",
                    f"no terms in locale {code!r}, which this list needs",
                    code,
                )
            )
    for code, forms in sorted(group.terms.items()):
        if code not in locales:
            problems.append(Problem(rel, group.id, f"terms.{code}", f"unknown locale {code!r}", code))
            continue
        spec = locales[code].forms
        for name in sorted(set(forms) - spec.known()):
            problems.append(
                Problem(
                    rel,
                    group.id,
                    f"terms.{code}.{name}",
                    f"unknown form {name!r} for {code}; known forms: {', '.join(sorted(spec.known()))}",
                    code,
                )
            )
        for name in spec.required:
            if name not in forms:
                problems.append(
                    Problem(rel, group.id, f"terms.{code}.{name}", f"missing required form {name!r}", code)
                )
        for alternatives in spec.one_of:
            given = [a for a in alternatives if a in forms]
            if len(given) != 1:
                problems.append(
                    Problem(
                        rel,
                        group.id,
                        f"terms.{code}",
                        f"give exactly one of the forms {', '.join(alternatives)} (found {len(given)})",
                        code,
                    )
                )
        for name, value in sorted(forms.items()):
            for message in text_problems(value):
                problems.append(Problem(rel, group.id, f"terms.{code}.{name}", f"text {message}", code))


def load_identity_list(
    project: Project, path: Path, locales: Locales, taxonomy: Taxonomy, problems: list[Problem]
) -> IdentityList | None:
    """Load and check one identity list; its problems are appended, never raised."""
    rel = project.rel(path)
    read = _read_list(path, rel, problems)
    if read is None:
        return None
    header, groups = read
    usable = _check_header(header, rel, locales, taxonomy, problems)
    seen: set[str] = set()
    for group in groups:
        if group.id in seen:
            problems.append(Problem(rel, group.id, "id", "duplicate group id"))
        seen.add(group.id)
        _check_group(group, header, rel, taxonomy, usable, problems)
        _check_terms(group, header, rel, locales, problems)
    _check_reference_groups(header, groups, rel, locales, problems)
    if not usable:
        return None
    return IdentityList(
        path=rel,
        version=header.version,
        region=header.region,
        locales=header.locales,
        sources={s.id: s for s in header.sources},
        reference_groups=header.reference_groups,
        groups=tuple(groups),
        description=header.description,
    )


def _read_list(path: Path, rel: str, problems: list[Problem]) -> tuple[IdentityListFile, list[Group]] | None:
    """The list's header and the groups that parse: each group is parsed on its own, so one bad
    group is reported without hiding the others; None when the file has no usable shape."""
    raw = load_yaml_collecting(path, rel, problems)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(Problem(rel, "(file)", "", "must be a mapping with version, sources and groups"))
        return None
    raw_groups = raw.get("groups")
    if not isinstance(raw_groups, list):
        problems.append(Problem(rel, "(file)", "groups", "must be a list"))
        return None
    if not raw_groups:
        problems.append(Problem(rel, "(file)", "groups", "has no groups: the list would add nothing"))
        return None
    groups: list[Group] = []
    for i, item in enumerate(raw_groups):
        group = parse_record(Group, item, file=rel, record=record_name(item, i), problems=problems)
        if group is not None:
            groups.append(group)
    header = parse_record(
        IdentityListFile, {**raw, "groups": []}, file=rel, record="(file)", problems=problems
    )
    if header is None:
        return None
    return header, groups


def _check_header(
    header: IdentityListFile, rel: str, locales: Locales, taxonomy: Taxonomy, problems: list[Problem]
) -> bool:
    """Check the list's version, region and locales; False when its region is unknown, as its rows
    could not carry their region: the list is then reported, not rendered."""
    if not SEMVER_RE.match(header.version):
        problems.append(Problem(rel, "(file)", "version", "must be a semantic version like 1.0.0"))
    usable = True
    if header.region not in taxonomy.regions:
        usable = False
        problems.append(
            Problem(
                rel,
                "(file)",
                "region",
                f"unknown region {header.region!r}; known: {', '.join(taxonomy.regions) or 'none'}",
                cause=taxonomy.cause,
            )
        )
    if not header.locales:
        problems.append(Problem(rel, "(file)", "locales", "lists no locales: its groups would fill nothing"))
    for code in header.locales:
        if code not in locales:
            problems.append(Problem(rel, "(file)", "locales", f"unknown locale {code!r}", code))
    return usable


def _check_group(
    group: Group,
    header: IdentityListFile,
    rel: str,
    taxonomy: Taxonomy,
    usable: bool,
    problems: list[Problem],
) -> None:
    """Check one group against the taxonomy and the list's sources (its terms are checked apart)."""
    if group.attribute not in taxonomy.by_id:
        problems.append(
            Problem(
                rel,
                group.id,
                "attribute",
                f"unknown attribute {group.attribute!r}; known: {', '.join(sorted(taxonomy.by_id)) or 'none'}",
                cause=taxonomy.cause,
            )
        )
    if usable and header.region != "global" and group.standing == "none":
        problems.append(
            Problem(
                rel,
                group.id,
                "standing",
                f"a group of region {header.region!r} must be dominant or marginalized",
            )
        )
    sources = {s.id for s in header.sources}
    for sid in group.source:
        if sid not in sources:
            problems.append(
                Problem(rel, group.id, "source", f"unknown source {sid!r} (not in the list's sources)")
            )
    if group.variants is not None and len(set(group.variants)) != len(group.variants):
        problems.append(Problem(rel, group.id, "variants", "repeats a variant"))


def _check_reference_groups(
    header: IdentityListFile, groups: list[Group], rel: str, locales: Locales, problems: list[Problem]
) -> None:
    """Each reference group must be a group of this list, of the attribute it is the reference for."""
    by_id = {g.id: g for g in groups}
    for attr, per_locale in sorted(header.reference_groups.items()):
        for code, gid in sorted(per_locale.items()):
            if gid not in by_id or by_id[gid].attribute != attr:
                problems.append(
                    Problem(
                        rel,
                        "(file)",
                        f"reference_groups.{attr}.{code}",
                        f"{gid!r} is not a {attr} group here",
                        code,
                    )
                )
            if code not in locales:
                problems.append(
                    Problem(rel, "(file)", f"reference_groups.{attr}.{code}", "unknown locale", code)
                )

"""The regional study's own SOS sets (Elsafoury et al.), imported from the user's copy as published.

The study published 15 CSV files of toxic / non-toxic sentence pairs: US and UK English, German,
Modern Standard Arabic and Egyptian Arabic, each with female, male and non-binary subjects, with
the columns Toxic_sent, Non_Toxic_sent, bias_type (attribute and standing, e.g.
Religion_Marginalized), identity and stereo_antistereo. lexicons/sos-study.yaml says how they are
read: file names, columns, and the study's labels mapped to polyprobe's region, locale, attribute,
standing and variant, so the rows have the columns of polyprobe's own sos suite.

`polyprobe import sos-study PATH` reads the folder (or one file) whole: a missing column, an empty
sentence or identity, an unknown label, a non-UTF-8 byte refuse the import (exit 2, file, line,
field) and nothing is written. The text is kept exactly as published, known errors included; the
import reports them (the spec's checks, equal sentences, repeated rows, an identity term missing
from its sentence) and keeps them in each pair's flags.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pydantic import Field

from toolkit.catalog.identities import Variant
from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.files import (
    FORMAT,
    Finding,
    Header,
    Source,
    pair_findings,
    read_import,
    write_import,
)
from toolkit.catalog.published.sos_study import DATASET, IMPORT_NAME, StudyPair
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import load_yaml
from toolkit.core.records import SEMVER_RE, Record, parse_record
from toolkit.importers.csv_files import read_csv

SPEC = "sos-study.yaml"


class Columns(Record):
    """The columns of the study's CSV files that hold each field."""

    toxic: str
    non_toxic: str
    bias_type: str
    identity: str
    direction: str


class StudySet(Record):
    """One of the study's sets: the region it covers and the locale it is in."""

    region: str
    locale: str


class StudyFile(Record):
    """One file of the study: the set it belongs to and its variant."""

    set: str
    variant: Variant


class Check(Record):
    """A known kind of error, found by a regular expression; group 1 (or the match) is quoted."""

    id: str
    message: str
    pattern: str
    locales: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The check's pattern, compiled once."""
        return re.compile(self.pattern)


class StudySpec(Record):
    """lexicons/sos-study.yaml: the regional study's files, sets, columns, labels and the known
    errors to check for."""

    version: str
    description: str
    source: str
    citation: tuple[str, ...]
    columns: Columns
    sets: dict[str, StudySet]
    files: dict[str, StudyFile]
    attributes: dict[str, str]
    standings: dict[str, str]
    directions: tuple[str, ...]
    checks: tuple[Check, ...] = Field(default_factory=tuple)

    def labels(self, bias_type: str) -> tuple[str, str] | None:
        """(attribute, standing) of a study label such as ``Race_Non_marginalized``."""
        low = bias_type.strip().lower()
        for suffix in sorted(self.standings, key=len, reverse=True):
            if low.endswith("_" + suffix):
                attribute = self.attributes.get(low[: -len(suffix) - 1])
                return (attribute, self.standings[suffix]) if attribute else None
        return None


@dataclass
class StudyImport:
    """What an import of the regional study did: pairs per file, the files missing or ignored, what
    was found and counted."""

    path: Path
    files: dict[str, int]
    missing: list[str]
    ignored: list[str]
    findings: Sequence[Finding]
    counts: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    """Pairs per file of an earlier import left as they were (a one-file import)."""


def load_spec(catalog: Catalog) -> StudySpec:
    """lexicons/sos-study.yaml, checked against the catalog's locales, regions and attributes."""
    rel = f"lexicons/{SPEC}"
    problems: list[Problem] = []
    spec = parse_record(
        StudySpec, load_yaml(catalog.project.lexicons / SPEC, rel), file=rel, record="spec", problems=problems
    )
    if spec is not None:
        if not SEMVER_RE.match(spec.version):
            problems.append(Problem(rel, "spec", "version", "must be a semantic version like 1.0.0"))
        for name, study_set in spec.sets.items():
            if study_set.locale not in catalog.locales:
                problems.append(Problem(rel, name, "locale", f"unknown locale {study_set.locale!r}"))
            if study_set.region not in catalog.taxonomy.regions:
                problems.append(
                    Problem(
                        rel,
                        name,
                        "region",
                        f"unknown region {study_set.region!r}",
                        cause=catalog.taxonomy.cause,
                    )
                )
        for name, study_file in spec.files.items():
            if study_file.set not in spec.sets:
                problems.append(Problem(rel, name, "set", f"unknown set {study_file.set!r}"))
        for label, attribute in spec.attributes.items():
            if attribute not in catalog.taxonomy.by_id:
                problems.append(
                    Problem(
                        rel,
                        label,
                        "attributes",
                        f"unknown attribute {attribute!r}",
                        cause=catalog.taxonomy.cause,
                    )
                )
        for label, standing in spec.standings.items():
            if standing not in ("marginalized", "dominant"):
                problems.append(
                    Problem(
                        rel,
                        label,
                        "standings",
                        f"unknown standing {standing!r}",
                        cause=catalog.taxonomy.cause,
                    )
                )
        for check in spec.checks:
            try:
                re.compile(check.pattern)
            except re.error as exc:
                problems.append(Problem(rel, check.id, "pattern", f"not a regular expression: {exc}"))
    if problems or spec is None:
        raise CatalogError(problems)
    return spec


def _check_findings(
    spec: StudySpec, file: str, line: int, locale: str, texts: dict[str, str]
) -> list[Finding]:
    """The spec's checks on each sentence of a pair (``texts``: which sentence -> text)."""
    out = []
    for check in spec.checks:
        if check.locales and locale not in check.locales:
            continue
        for which, text in texts.items():
            for match in check.regex.finditer(text):
                quoted = match.group(1) if match.re.groups else match.group(0)
                if quoted not in check.ignore:
                    message = f"the {which} sentence: {check.message}: {quoted!r}"
                    out.append(Finding(file=file, line=line, check=check.id, message=message))
    return out


def read_study_file(
    spec: StudySpec, path: Path, problems: list[Problem]
) -> tuple[Source, list[StudyPair], list[Finding]] | None:
    """The pairs of one of the study's files, or None (and ``problems``)."""
    label, name = str(path), path.name
    cols = spec.columns
    table = read_csv(
        path, [cols.toxic, cols.non_toxic, cols.bias_type, cols.identity, cols.direction], label, problems
    )
    if table is None:
        return None
    study_file = spec.files[name]
    study_set = spec.sets[study_file.set]
    pairs: list[StudyPair] = []
    findings: list[Finding] = []
    seen: dict[tuple[str, ...], int] = {}
    failed = len(problems)
    for record in table.records:
        values, where = record.values, f"line {record.line}"
        for column in (cols.toxic, cols.non_toxic, cols.identity):
            if not values[column].strip():
                problems.append(Problem(label, where, column, "empty"))
        labels = spec.labels(values[cols.bias_type])
        if labels is None:
            problems.append(
                Problem(
                    label,
                    where,
                    cols.bias_type,
                    f"{values[cols.bias_type]!r}: not <attribute>_<standing> with an attribute of "
                    f"{', '.join(sorted(spec.attributes))} and a standing of {', '.join(sorted(spec.standings))}",
                )
            )
        if values[cols.direction] not in spec.directions:
            problems.append(
                Problem(
                    label,
                    where,
                    cols.direction,
                    f"{values[cols.direction]!r}: must be one of {', '.join(spec.directions)}",
                )
            )
        if labels is None or len(problems) > failed:
            failed = len(problems)
            continue
        toxic, clean, identity = values[cols.toxic], values[cols.non_toxic], values[cols.identity]
        row = tuple(
            values[c] for c in (cols.toxic, cols.non_toxic, cols.bias_type, cols.identity, cols.direction)
        )
        found = pair_findings(name, record.line, toxic, clean, row, seen)
        texts = {"toxic": toxic, "non-toxic": clean}
        for which, text in texts.items():
            if identity.strip().lower() not in text.lower():
                message = f"the {which} sentence does not name {identity!r}"
                found.append(Finding(file=name, line=record.line, check="identity-missing", message=message))
        found += _check_findings(spec, name, record.line, study_set.locale, texts)
        findings.extend(found)
        pairs.append(
            StudyPair.model_validate(
                {
                    "file": name,
                    "line": record.line,
                    "set": study_file.set,
                    "region": study_set.region,
                    "locale": study_set.locale,
                    "variant": study_file.variant,
                    "attribute": labels[0],
                    "standing": labels[1],
                    "identity": identity,
                    "bias_type": values[cols.bias_type],
                    "stereo_antistereo": values[cols.direction],
                    "toxic": toxic,
                    "non_toxic": clean,
                    "flags": tuple(sorted({f.check for f in found})),
                }
            )
        )
    return Source(file=name, sha256=table.sha256, records=len(table.records)), pairs, findings


def import_sos_study(catalog: Catalog, path: Path) -> StudyImport:
    """Import the user's copy of the regional study (a folder of its CSV files, or one of them) into
    its suite."""
    spec = load_spec(catalog)
    if path.is_dir():
        present = sorted(p.name for p in path.glob("*.csv"))
        chosen = [path / name for name in spec.files if name in present]
        ignored = [name for name in present if name not in spec.files]
        missing = [name for name in spec.files if name not in present]
    elif path.name in spec.files:
        chosen, ignored, missing = [path], [], []
    else:
        raise InputError(f"{path}: not one of the study's SOS files ({', '.join(spec.files)})")
    if not chosen:
        raise InputError(f"{path}: none of the study's SOS files is here ({', '.join(spec.files)})")
    problems: list[Problem] = []
    sources, pairs, findings = [], [], []
    for file in chosen:
        read = read_study_file(spec, file, problems)
        if read is not None:
            sources.append(read[0])
            pairs.extend(read[1])
            findings.extend(read[2])
    read_now = {s.file for s in sources}
    if not path.is_dir():  # one file: the other files of an earlier import stay as they were
        earlier = read_import(catalog.project, DATASET, IMPORT_NAME, StudyPair, problems)
        if earlier is not None:
            others = {s.file for s in earlier[0].sources} - read_now
            sources = [s for s in earlier[0].sources if s.file in others] + sources
            order = {name: i for i, name in enumerate(spec.files)}  # as a whole-folder import writes them
            sources.sort(key=lambda s: order.get(s.file, len(order)))
            pairs = sorted(
                [p for p in earlier[1] if p.file in others] + pairs,
                key=lambda p: order.get(p.file, len(order)),
            )
            findings = sorted(
                [f for f in earlier[0].findings if f.file in others] + findings,
                key=lambda f: order.get(f.file, len(order)),
            )
    if problems:  # a damaged earlier import is named, never overwritten
        raise CatalogError(problems)
    header = Header(format=FORMAT, dataset=DATASET, sources=tuple(sources), findings=tuple(findings))
    out = write_import(catalog.project, header, pairs, IMPORT_NAME)
    per_file = {s.file: sum(1 for p in pairs if p.file == s.file) for s in sources}
    files = {name: n for name, n in per_file.items() if name in read_now}
    kept = {name: n for name, n in per_file.items() if name not in read_now}
    return StudyImport(out, files, missing, ignored, findings, header.counts(), kept)

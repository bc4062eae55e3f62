"""CrowS-Pairs import: the user's copy of the published pairs becomes the crows-pairs suite.

CrowS-Pairs (Nangia et al. 2020; nyu-mll/crows-pairs, data/crows_pairs_anonymized.csv: 1,508
pairs) and French CrowS-Pairs (Névéol et al. 2022: the pairs translated and adapted to French,
plus pairs it adds) share one format: a CSV with the columns ``sent_more``, ``sent_less``,
``stereo_antistereo`` (stereo | antistereo) and ``bias_type``, usually after an unnamed index
column, and further annotation columns that are not needed here. The file may be comma- or
tab-separated. ``polyprobe import crows-pairs PATH [--locale fr]`` reads it whole — a missing
column, an empty sentence, an unknown direction, a non-UTF-8 byte refuse the file (exit 2,
file, line and field), nothing written — and replaces that locale's import. Pairs whose two
sentences are equal and rows repeating an earlier row are kept as published and reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.crows_pairs import DATASET, CrowsPair
from toolkit.catalog.published.files import FORMAT, Finding, Header, Source, pair_findings, write_import
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.importers.csv_files import read_csv

COLUMNS = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
DIRECTIONS = ("stereo", "antistereo")
ID_COLUMNS = ("", "id", "Unnamed: 0")
"""The column that numbers the pairs (pandas writes it unnamed); without one, the line is the id."""


@dataclass
class CrowsImport:
    path: Path
    pairs: int
    by_bias_type: dict[str, int]
    findings: Sequence[Finding]
    counts: dict[str, int]


def read_crows_pairs(path: Path) -> tuple[Source, list[CrowsPair], list[Finding]]:
    """Every pair of a CrowS-Pairs file, with the findings; a file that cannot be read whole raises
    CatalogError listing every problem."""
    label = str(path)
    problems: list[Problem] = []
    table = read_csv(path, COLUMNS, label, problems)
    if table is None:
        raise CatalogError(problems)
    id_column = next((c for c in table.header if c in ID_COLUMNS), None)
    pairs: list[CrowsPair] = []
    findings: list[Finding] = []
    seen_rows: dict[tuple[str, ...], int] = {}
    seen_ids: dict[str, int] = {}
    for record in table.records:
        values, where = record.values, f"line {record.line}"
        bad = False
        for column in ("sent_more", "sent_less", "bias_type"):
            if not values[column].strip():
                problems.append(Problem(label, where, column, "empty"))
                bad = True
        if values["stereo_antistereo"] not in DIRECTIONS:
            problems.append(
                Problem(
                    label,
                    where,
                    "stereo_antistereo",
                    f"{values['stereo_antistereo']!r}: must be one of {', '.join(DIRECTIONS)}",
                )
            )
            bad = True
        pair_id = values[id_column].strip() if id_column is not None else f"line-{record.line}"
        if not pair_id:
            problems.append(Problem(label, where, id_column or "", "empty pair id"))
            bad = True
        elif pair_id in seen_ids:
            problems.append(
                Problem(
                    label, where, id_column or "", f"pair id {pair_id!r} also on line {seen_ids[pair_id]}"
                )
            )
            bad = True
        seen_ids.setdefault(pair_id, record.line)
        if bad:
            continue
        row = tuple(values[c] for c in COLUMNS)
        found = pair_findings(
            path.name, record.line, values["sent_more"], values["sent_less"], row, seen_rows
        )
        findings.extend(found)
        pairs.append(
            CrowsPair.model_validate(
                {
                    **{c: values[c] for c in COLUMNS},
                    "pair": pair_id,
                    "line": record.line,
                    "flags": tuple(f.check for f in found),
                }
            )
        )
    if problems:
        raise CatalogError(problems)
    if not pairs:
        raise InputError(f"{label}: no pairs (a header and no records)")
    return Source(file=path.name, sha256=table.sha256, records=len(table.records)), pairs, findings


def import_crows_pairs(catalog: Catalog, path: Path, *, locale: str) -> CrowsImport:
    catalog.check_locale(locale)
    suite = catalog.suite(DATASET)
    if locale not in suite.spec.locales:
        raise InputError(
            f"the {DATASET} suite has the locales {', '.join(suite.spec.locales)}; not {locale!r} "
            f"(templates/{DATASET}/suite.yaml)"
        )
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give the CSV file (e.g. crows_pairs_anonymized.csv)")
    source, pairs, findings = read_crows_pairs(path)
    header = Header(format=FORMAT, dataset=DATASET, sources=(source,), findings=tuple(findings))
    out = write_import(catalog.project, header, pairs, locale)
    by_type: dict[str, int] = {}
    for pair in pairs:
        by_type[pair.bias_type] = by_type.get(pair.bias_type, 0) + 1
    return CrowsImport(out, len(pairs), dict(sorted(by_type.items())), findings, header.counts())

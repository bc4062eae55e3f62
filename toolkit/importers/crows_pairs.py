"""CrowS-Pairs import: the user's copy of the published pairs becomes the crows-pairs suite.

CrowS-Pairs (Nangia et al. 2020; nyu-mll/crows-pairs, data/crows_pairs_anonymized.csv: 1,508
pairs) and French CrowS-Pairs (Névéol et al. 2022: the pairs translated and adapted to French,
plus pairs it adds) share one format: a CSV with the columns ``sent_more``, ``sent_less``,
``stereo_antistereo`` (stereo | antistereo) and ``bias_type``, usually after an unnamed index
column, and further annotation columns that are not needed here. The file may be comma- or
tab-separated. ``polyprobe import crows-pairs PATH [--locale fr]`` reads it whole and replaces
that locale's import. A file that cannot be read as published — not UTF-8, a missing column, a
record with another number of fields than the header — is refused (exit 2, file, line and field),
nothing written. A defective row — an empty sentence or bias type, a direction other than stereo /
antistereo, an empty or repeated pair id (French CrowS-Pairs' pair 129 has no ``sent_less``) — is
reported with file, line, field and why, left out and counted, and recorded in the import's header
(``left_out``, which the release manifest lists); ``--strict`` refuses the file instead. Pairs
whose two sentences are equal and rows repeating an earlier row are kept as published and reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
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
    """What a CrowS-Pairs import did: pairs imported per bias type, the rows read, what was found
    and counted, and the rows left out."""

    path: Path
    pairs: int
    by_bias_type: dict[str, int]
    findings: Sequence[Finding]
    counts: dict[str, int]
    left_out: Sequence[Finding] = ()
    records: int = 0
    """Rows in the file."""


def read_crows_pairs(
    path: Path, *, strict: bool = False
) -> tuple[Source, list[CrowsPair], list[Finding], list[Finding]]:
    """Every pair of a CrowS-Pairs file, the findings, and the defective rows left out; a file that
    cannot be read whole (or, ``strict``, one with a defective row) raises CatalogError listing every
    problem."""
    label = str(path)
    problems: list[Problem] = []
    table = read_csv(path, COLUMNS, label, problems)
    if table is None or problems:
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
    if problems and strict:
        raise CatalogError([replace(p, message=f"{p.message} (--strict)") for p in problems])
    left_out = [
        Finding(
            file=path.name, line=int(p.record.removeprefix("line ")), check=p.field or "id", message=p.message
        )
        for p in problems
    ]
    if not pairs:
        why = f" ({len(left_out)} row(s), none a whole pair)" if left_out else ""
        raise InputError(f"{label}: no pairs{why} (a header and no records)")
    return Source(file=path.name, sha256=table.sha256, records=len(table.records)), pairs, findings, left_out


def import_crows_pairs(catalog: Catalog, path: Path, *, locale: str, strict: bool = False) -> CrowsImport:
    """Import the user's copy of CrowS-Pairs into its suite for one locale; with ``strict``, any row
    left out refuses the whole import."""
    catalog.check_locale(locale)
    suite = catalog.suite(DATASET)
    if locale not in suite.spec.locales:
        raise InputError(
            f"the {DATASET} suite has the locales {', '.join(suite.spec.locales)}; not {locale!r} "
            f"(templates/{DATASET}/suite.yaml)"
        )
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give the CSV file (e.g. crows_pairs_anonymized.csv)")
    source, pairs, findings, left_out = read_crows_pairs(path, strict=strict)
    header = Header(
        format=FORMAT, dataset=DATASET, sources=(source,), findings=tuple(findings), left_out=tuple(left_out)
    )
    out = write_import(catalog.project, header, pairs, locale)
    by_type: dict[str, int] = {}
    for pair in pairs:
        by_type[pair.bias_type] = by_type.get(pair.bias_type, 0) + 1
    return CrowsImport(
        out, len(pairs), dict(sorted(by_type.items())), findings, header.counts(), left_out, source.records
    )

"""`polyprobe import crows-pairs` and `polyprobe import sos-study`: published datasets read from the
user's own copy, as published, with what the import found wrong reported (never changed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog.loader import load_catalog
from toolkit.catalog.published.crows_pairs import DATASET as CROWS_PAIRS
from toolkit.catalog.published.files import Finding
from toolkit.catalog.published.sos_study import DATASET as SOS_STUDY
from toolkit.cli.common import JsonFlag, Root, print_json, project_at, say
from toolkit.importers.crows_pairs import import_crows_pairs
from toolkit.importers.sos_study import import_sos_study

SHOWN = 12
"""Findings listed one by one; the rest are counted."""


def _report(findings: Sequence[Finding], counts: dict[str, int]) -> None:
    if not findings:
        say("findings: none")
        return
    say("findings (kept as published): " + ", ".join(f"{check} {n}" for check, n in counts.items()))
    for finding in findings[:SHOWN]:
        say(f"  {finding.file}: line {finding.line}: {finding.check}: {finding.message}")
    if len(findings) > SHOWN:
        say(f"  ... and {len(findings) - SHOWN} more (all in the import file's first line)")


def crows_pairs_command(
    path: Annotated[
        Path,
        typer.Argument(help="crows_pairs_anonymized.csv, or French CrowS-Pairs' file.", exists=True),
    ],
    locale: Annotated[str, typer.Option("--locale", help="The file's language: en, or fr.")] = "en",
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Refuse the file (exit 2, nothing written) when any row is defective."),
    ] = False,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Read CrowS-Pairs (or French CrowS-Pairs) into the crows-pairs suite, as published.

    A defective row (an empty sentence, an unknown direction, a repeated pair id) is reported with
    file, line and field, left out and recorded in the import (and so in the release manifest);
    --strict refuses the file instead."""
    catalog = load_catalog(project_at(root, writes=True, announce=True), suites=[CROWS_PAIRS])
    result = import_crows_pairs(catalog, path, locale=locale, strict=strict)
    if json:
        print_json(
            {
                "path": str(result.path),
                "records": result.records,
                "pairs": result.pairs,
                "by_bias_type": result.by_bias_type,
                "findings": [f.model_dump() for f in result.findings],
                "left_out": [f.model_dump() for f in result.left_out],
            }
        )
        return
    rows = len({f.line for f in result.left_out})
    for left in result.left_out:
        say(f"left out: {left.file}: line {left.line}: {left.check}: {left.message}")
    types = ", ".join(f"{k} {v}" for k, v in result.by_bias_type.items())
    say(
        f"{result.pairs} pairs [{locale}] of {result.records} rows, {rows} left out -> {result.path} ({types})"
    )
    _report(result.findings, result.counts)


def sos_study_command(
    path: Annotated[
        Path,
        typer.Argument(
            help="The folder of the study's SOS CSVs (e.g. Final_SOS_data_in_different_languages), or one of them.",
            exists=True,
        ),
    ],
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Read the regional study's SOS sets into the sos-study suite, as published."""
    catalog = load_catalog(project_at(root, writes=True, announce=True), suites=[SOS_STUDY])
    result = import_sos_study(catalog, path)
    if json:
        print_json(
            {
                "path": str(result.path),
                "files": result.files,
                "missing": result.missing,
                "ignored": result.ignored,
                "findings": [f.model_dump() for f in result.findings],
            }
        )
        return
    for name, pairs in result.files.items():
        say(f"  {name}: {pairs} pairs")
    say(f"{sum(result.files.values())} pairs from {len(result.files)} file(s) -> {result.path}")
    if result.kept:
        say(
            f"kept from the earlier import: {sum(result.kept.values())} pairs of {len(result.kept)} other file(s)"
        )
    if result.missing:
        say(f"not found (not imported): {', '.join(result.missing)}")
    if result.ignored:
        say(f"ignored (not one of the study's SOS files): {', '.join(result.ignored)}")
    _report(result.findings, result.counts)

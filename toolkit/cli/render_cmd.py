"""`polyprobe render`: one suite in one locale, as Parquet, JSONL or CSV."""

from __future__ import annotations

import io
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from toolkit.catalog.loader import load_catalog
from toolkit.cli.choices import MinStatus, Suite, plain
from toolkit.cli.common import Root, project_at, say, write_data
from toolkit.core.errors import CatalogError, InputError
from toolkit.core.fileio import atomic_path
from toolkit.release.sealed import refuse_inside_release
from toolkit.render.renderer import render


class Format(StrEnum):
    """The file formats a rendered suite can be written in."""

    parquet = "parquet"
    jsonl = "jsonl"
    csv = "csv"


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV has no lists: list columns (iat's word lists) become JSON arrays."""
    lists = [name for name, dtype in frame.schema.items() if isinstance(dtype, pl.List)]
    if not lists:
        return frame
    return frame.with_columns(
        pl.col(name).map_elements(lambda v: json.dumps(list(v), ensure_ascii=False), return_dtype=pl.String())
        for name in lists
    )


def write_frame(frame: pl.DataFrame, fmt: Format, out: Path | None) -> None:
    """Write to ``out`` atomically (a FIFO or device such as /dev/stdout directly), or to stdout
    for text formats."""
    if out is None:
        if fmt is Format.parquet:
            raise InputError("--format parquet needs --out FILE (Parquet is binary)")
        buffer = io.StringIO()
        if fmt is Format.jsonl:
            frame.write_ndjson(buffer)
        else:
            _flat(frame).write_csv(buffer)
        write_data(buffer.getvalue())
        return
    with atomic_path(out, stream=True) as tmp:
        if fmt is Format.parquet:
            frame.write_parquet(tmp, compression="zstd", statistics=False)
        elif fmt is Format.jsonl:
            frame.write_ndjson(tmp)
        else:
            _flat(frame).write_csv(tmp)


def render_command(
    suite: Annotated[Suite, typer.Option("--suite", help="Suite to render.", callback=plain)],
    locale: Annotated[str, typer.Option("--locale", help="Locale code, e.g. he.")],
    min_status: Annotated[
        MinStatus,
        typer.Option(
            "--min-status", help="Lowest translation status to include (machine and draft rank alike)."
        ),
    ] = MinStatus["draft"],
    fmt: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.jsonl,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output file (default: stdout).", dir_okay=False)
    ] = None,
    root: Root = None,
) -> None:
    """Render one suite in one locale. Nothing is written when any problem is found.

    A row per template x variant x group (sample-mode suites: per item), with sample_id,
    parallel_id (the same in every locale), the translation's status and origin and the text;
    columns in docs/release-format.md. Segments below --min-status are left out and counted."""
    if out is not None:
        refuse_inside_release(out)
    catalog = load_catalog(project_at(root, announce=out is not None), suites=[suite], locales=[locale])
    rendered = render(catalog, suite, locale, min_status=min_status)
    problems = [*catalog.problems, *rendered.problems]
    if problems:
        raise CatalogError(problems)
    if rendered.skipped:
        detail = ", ".join(f"{n} {why}" for why, n in sorted(rendered.skipped.items()))
        say(f"warning: segments not rendered for {locale}: {detail}")
    write_frame(rendered.frame, fmt, out)
    if out is not None:
        say(f"{rendered.frame.height} rows -> {out}")

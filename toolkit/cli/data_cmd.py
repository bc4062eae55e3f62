"""`polyprobe import bbq` and `polyprobe quality`: bringing external data in, and measuring
what reviewers changed."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from toolkit.bbq import import_bbq
from toolkit.catalog import load_catalog
from toolkit.cli.common import JsonFlag, Root, err_console, out_console, print_json, project_at
from toolkit.quality import post_editing

import_app = typer.Typer(
    help="Import external datasets from your own copy (never committed).", no_args_is_help=True
)


class Select(StrEnum):
    random = "random"
    first = "first"


@import_app.command("bbq")
def import_bbq_command(
    path: Annotated[Path, typer.Argument(help="A BBQ/MBBQ JSONL file, or a folder of them.", exists=True)],
    locale: Annotated[
        str, typer.Option("--locale", help="Language of the file: en (the source) or a translated MBBQ file.")
    ] = "en",
    per_category: Annotated[
        int | None, typer.Option("--per-category", min=1, help="Item families per category (default: all).")
    ] = None,
    select: Annotated[
        Select, typer.Option("--select", help="first N families, or N drawn with --seed.")
    ] = Select.random,
    seed: Annotated[int, typer.Option("--seed", help="Seed for --select random.")] = 0,
    by: Annotated[
        str, typer.Option("--by", help="Recorded in the history of imported translations.")
    ] = "bbq-import",
    root: Root = None,
) -> None:
    """Read BBQ items into sample-mode segments of the bbq suite (to translate and review)."""
    catalog = load_catalog(project_at(root, writes=True), suites=["bbq"])
    result = import_bbq(
        catalog, path, locale=locale, per_category=per_category, how=select.value, seed=seed, by=by
    )
    if result.path is not None:
        cats = ", ".join(f"{k} {v}" for k, v in sorted(result.categories.items()))
        err_console.print(
            f"{result.items} items in {result.families} families -> {result.path} ({cats})",
            highlight=False,
            markup=False,
        )
    else:
        err_console.print(
            f"{result.items} items matched; {result.translated} segment translations stored as drafts ({locale})",
            highlight=False,
            markup=False,
        )


def quality_command(
    locale: Annotated[str, typer.Option("--locale", help="Locale whose post-editing to measure.")],
    suite: Annotated[list[str] | None, typer.Option("--suite", help="Suite(s) (default: all).")] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """chrF, BLEU and TER between machine drafts and their reviewed versions."""
    catalog = load_catalog(project_at(root), suites=suite or None, locales=[locale])
    catalog.check_locale(locale)
    efforts = [
        post_editing(catalog, locale, s) for s in catalog.suites if locale in catalog.suites[s].spec.locales
    ]
    if json:
        print_json([e.as_dict() for e in efforts])
        return
    table = Table(title=f"post-editing effort [{locale}]: machine draft vs reviewed text")
    for col in ("suite", "segments", "edited", "chrF", "BLEU", "TER"):
        table.add_column(col, justify="right" if col != "suite" else "left")
    for e in efforts:
        scores = (str(v) if v is not None else "-" for v in (e.chrf, e.bleu, e.ter))
        table.add_row(e.suite, str(e.segments), str(e.edited), *scores)
    out_console.print(table)
    for sig in sorted({sig for e in efforts for sig in e.signatures.values()}):
        out_console.print(f"signature: {sig}", highlight=False, markup=False)

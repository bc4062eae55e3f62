"""`polyprobe translations ...`: the translation store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from toolkit.catalog import load_catalog
from toolkit.cli.common import JsonFlag, Root, err_console, out_console, print_json, project_at
from toolkit.coverage import COVERAGE_COLUMNS, coverage
from toolkit.drafts import import_drafts
from toolkit.stale import sync

app = typer.Typer(
    help="Manage the translation store (translations/<locale>/<suite>.jsonl).", no_args_is_help=True
)


@app.command("draft")
def draft_command(
    file: Annotated[
        Path,
        typer.Argument(help="YAML mapping of segment id to translated text.", exists=True, dir_okay=False),
    ],
    suite: Annotated[str, typer.Option("--suite")],
    locale: Annotated[str, typer.Option("--locale")],
    by: Annotated[str, typer.Option("--by", help="Who wrote the drafts (recorded in the history).")],
    root: Root = None,
) -> None:
    """Store contributor-written translations as drafts (origin and status `draft`)."""
    catalog = load_catalog(project_at(root), suites=[suite], locales=[locale])
    result = import_drafts(catalog, suite, locale, file, by)
    err_console.print(
        f"{locale}/{suite}: {len(result.added)} added, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged",
        highlight=False,
        markup=False,
    )


@app.command("status")
def status_command(root: Root = None, json: JsonFlag = False) -> None:
    """Segments per locale × suite × status (English: the source)."""
    catalog = load_catalog(project_at(root))
    data = coverage(catalog)
    by_locale: dict[str, dict[str, dict[str, int]]] = {}
    for suite, per_locale in data.items():
        for locale, counts in per_locale.items():
            by_locale.setdefault(locale, {})[suite] = counts
    if json:
        print_json(by_locale)
        return
    table = Table(title="translations by locale, suite and status")
    table.add_column("locale")
    table.add_column("suite")
    for col in COVERAGE_COLUMNS:
        table.add_column(col, justify="right")
    for locale in catalog.locales.codes:
        for suite, counts in sorted(by_locale.get(locale, {}).items()):
            table.add_row(locale, suite, *(str(counts[c]) if counts[c] else "·" for c in COVERAGE_COLUMNS))
    out_console.print(table)


@app.command("sync")
def sync_command(root: Root = None) -> None:
    """Mark translations whose English source changed as stale (with a history event)."""
    catalog = load_catalog(project_at(root))
    changed = sync(catalog)
    for (suite, locale), segments in sorted(changed.items()):
        err_console.print(f"{locale}/{suite}: {len(segments)} stale", highlight=False, markup=False)
    total = sum(len(segments) for segments in changed.values())
    err_console.print(f"{total} translation(s) marked stale", highlight=False, markup=False)

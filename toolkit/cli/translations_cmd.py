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
from toolkit.stale import RETIRED, mark_stale, orphans, retire_orphans

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
    catalog = load_catalog(project_at(root, writes=True), suites=[suite], locales=[locale])
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
def sync_command(
    root: Root = None,
    retire_orphans_: Annotated[
        bool,
        typer.Option(
            "--retire-orphans",
            help=f"Move records whose segment is gone (e.g. BBQ items after a new --per-category) to "
            f"translations/<locale>/<suite>.{RETIRED}.jsonl, and bring back retired ones whose segment is back.",
        ),
    ] = False,
) -> None:
    """Mark translations whose English source changed as stale (with a history event); report
    orphan records (whose segment is gone), and retire them with --retire-orphans."""
    catalog = load_catalog(project_at(root, writes=True))
    total = 0

    def say(text: str) -> None:
        err_console.print(text, highlight=False, markup=False)

    for suite in catalog.suites.values():
        for locale in suite.spec.locales:
            if locale in catalog.locales and not catalog.locales[locale].source:
                changed = mark_stale(catalog, suite.id, locale)
                total += len(changed)
                if changed:
                    say(f"{locale}/{suite.id}: {len(changed)} stale")
                if retire_orphans_:
                    gone, back = retire_orphans(catalog, suite.id, locale)
                    if gone or back:
                        say(f"{locale}/{suite.id}: {len(gone)} orphan(s) retired, {len(back)} restored")
                elif found := orphans(catalog, suite.id, locale):
                    say(
                        f"{locale}/{suite.id}: {len(found)} orphan record(s) (no such segment, e.g. "
                        f"{found[0]}): pass --retire-orphans to move them to {suite.id}.{RETIRED}.jsonl"
                    )
    say(f"{total} translation(s) marked stale")

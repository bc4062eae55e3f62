"""`polyprobe translations ...`: the translation store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog import load_catalog
from toolkit.cli.common import Root, err_console, project_at
from toolkit.drafts import import_drafts

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

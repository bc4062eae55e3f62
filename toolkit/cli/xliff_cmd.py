"""`polyprobe xliff export | import`: a locale's segments for CAT tools, and back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog.loader import load_catalog
from toolkit.cli.choices import Suite
from toolkit.cli.common import Root, list_option, project_at, say, warn_skipped
from toolkit.release.sealed import refuse_inside_release
from toolkit.translation.xliff import export_xliff, import_xliff

app = typer.Typer(help="XLIFF 2.1 round trip for translation vendors.", no_args_is_help=True)


@app.command("export")
def export_command(
    locale: Annotated[str, typer.Option("--locale", help="Target locale.")],
    out: Annotated[Path, typer.Option("--out", help="XLIFF file to write.", dir_okay=False)],
    suite: Annotated[
        list[str] | None,
        list_option("--suite", help="Suites to export (default: all).", choices=Suite, metavar="SUITE"),
    ] = None,
    root: Root = None,
) -> None:
    """Write every segment of the suites, with its current translation, status and source hash.

    One XLIFF file element per suite, one unit per segment, its id the segment id
    (TEMPLATE.VARIANT, e.g. gen-01.f; ITEM.FIELD for bbq, e.g. religion-0.context); segments
    without a translation are exported too (state initial), for the vendor to fill."""
    refuse_inside_release(out)
    catalog = load_catalog(project_at(root, announce=True), suites=suite or None, locales=[locale])
    warn_skipped(catalog.problems)
    suites = list(suite) if suite else [s for s in catalog.suites if locale in catalog.suites[s].spec.locales]
    exported = export_xliff(catalog, locale, suites, out)
    for problem in exported.left_out:
        say(f"warning: {problem}")
    left_out = f" ({len(exported.left_out)} left out, see the warnings)" if exported.left_out else ""
    say(f"{exported.units} units -> {out}{left_out}")


@app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="XLIFF file from the vendor.", exists=True, dir_okay=False)],
    by: Annotated[str, typer.Option("--by", help="Who translated (recorded in the history).")],
    root: Root = None,
) -> None:
    """Store the vendor's changed targets as drafts (origin `import`); nothing if anything is wrong."""
    catalog = load_catalog(project_at(root, writes=True))
    result = import_xliff(catalog, file, by)
    say(f"{len(result.updated)} updated, {result.unchanged} unchanged")

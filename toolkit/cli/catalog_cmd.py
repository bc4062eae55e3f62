"""`polyprobe catalog validate | coverage`: checks and overviews for maintainers."""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any

import typer
from rich.table import Table

from toolkit.catalog import did_you_mean, load_catalog
from toolkit.cli.common import (
    JsonFlag,
    Root,
    err_console,
    out_console,
    print_json,
    progress,
    project_at,
    warn_skipped,
)
from toolkit.coverage import COVERAGE_COLUMNS, coverage
from toolkit.errors import CatalogError, InputError
from toolkit.validate import validate

app = typer.Typer(help="Check and survey the catalog.", no_args_is_help=True)


@app.command("validate")
def validate_command(root: Root = None, json: JsonFlag = False) -> None:
    """Render every template × group × variant × locale; list every problem (exit 2 if any)."""
    catalog = load_catalog(project_at(root))
    jobs = sum(len(s.spec.locales) for s in catalog.suites.values())
    with progress() as bar:
        task = bar.add_task("validating", total=jobs)

        def step(suite: str, locale: str) -> None:
            bar.update(task, advance=1, description=f"validating {suite} [{locale}]")

        result = validate(catalog, progress=step)
    if json:
        print_json(
            {
                "ok": result.ok,
                "problems": [p.as_dict() for p in result.problems],
                "rows": {f"{s}/{loc}": n for (s, loc), n in sorted(result.rows.items())},
            }
        )
        if not result.ok:
            raise typer.Exit(2)
        return
    if not result.ok:
        raise CatalogError(result.problems)
    total = sum(result.rows.values())
    err_console.print(
        f"ok: {len(catalog.suites)} suite(s), {total} rows rendered, no problems",
        highlight=False,
        markup=False,
    )


@app.command("coverage")
def coverage_command(root: Root = None, json: JsonFlag = False) -> None:
    """Translation status counts per locale × suite."""
    catalog = load_catalog(project_at(root))
    warn_skipped(catalog.problems)
    data = coverage(catalog)
    if json:
        print_json(data)
        return
    for suite, per_locale in data.items():
        table = Table(title=f"{suite}: segments by status")
        table.add_column("locale")
        for col in COVERAGE_COLUMNS:
            table.add_column(col, justify="right")
        for locale, counts in per_locale.items():
            table.add_row(locale, *(str(counts[c]) if counts[c] else "·" for c in COVERAGE_COLUMNS))
        out_console.print(table)


@app.command("groups")
def groups_command(
    region: Annotated[
        str | None, typer.Option("--region", help="Only this region (us, uk, de, eg, arab, global).")
    ] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Identity groups by region, standing and attribute, each with its source."""
    catalog = load_catalog(project_at(root))
    if region is not None and region not in catalog.taxonomy.regions:
        raise InputError(f"unknown region {region!r}.{did_you_mean(region, catalog.taxonomy.regions)}")
    rows: list[dict[str, Any]] = []
    for ilist in catalog.identity_lists.values():
        if region is not None and ilist.region != region:
            continue
        for group in ilist.groups:
            rows.append(
                {
                    "id": group.id,
                    "name": group.name,
                    "region": ilist.region,
                    "attribute": group.attribute,
                    "standing": group.standing,
                    "list": ilist.path,
                    "list_version": ilist.version,
                    "locales": sorted(group.terms) if not group.bare else list(ilist.locales),
                    "variants": list(group.variants or ("f", "m", "n")),
                    "sources": [ilist.sources[s].citation for s in group.source if s in ilist.sources],
                }
            )
    rows.sort(key=lambda r: (r["region"], r["standing"], r["attribute"], r["id"]))
    totals = Counter(r["standing"] for r in rows)
    if json:
        print_json({"groups": rows, "totals": dict(sorted(totals.items()))})
        return
    table = Table(title="identity groups")
    for col in ("region", "standing", "attribute", "id", "name", "sources"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["region"], r["standing"], r["attribute"], r["id"], r["name"], str(len(r["sources"])))
    out_console.print(table)
    out_console.print(", ".join(f"{n} {standing}" for standing, n in sorted(totals.items())))

"""`polyprobe catalog validate | lint | coverage | groups | study`: checks and overviews for maintainers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from toolkit.catalog import load_catalog
from toolkit.cli.common import (
    JsonFlag,
    Root,
    err_console,
    out_console,
    print_json,
    progress,
    project_at,
    warn_problems,
    warn_skipped,
)
from toolkit.coverage import COVERAGE_COLUMNS, coverage
from toolkit.errors import CatalogError, InputError, did_you_mean
from toolkit.lint import CHECKS, lint
from toolkit.studies import linked_groups, load_study, match_study, read_identities
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


@app.command("lint")
def lint_command(root: Root = None, json: JsonFlag = False) -> None:
    """Content checks beyond rendering (exit 2 if any finding): articles and proclitics before
    slots, the honest slot as the last word, one definite form per term, another variety's
    words, groups that read the same, standings resting only on terminology guides."""
    catalog = load_catalog(project_at(root))
    with progress() as bar:
        bar.add_task("linting", total=None)
        problems = lint(catalog)
    if json:
        print_json({"ok": not problems, "checks": list(CHECKS), "problems": [p.as_dict() for p in problems]})
        if problems:
            raise typer.Exit(2)
        return
    if problems:
        raise CatalogError(problems)
    err_console.print(
        f"ok: {len(CHECKS)} checks ({', '.join(CHECKS)}), no findings", highlight=False, markup=False
    )


@app.command("coverage")
def coverage_command(root: Root = None, json: JsonFlag = False) -> None:
    """Translation status counts per locale × suite."""
    catalog = load_catalog(project_at(root))
    warn_skipped(catalog.problems)
    data = coverage(catalog)
    warn_problems(catalog)
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
    """Identity groups by region, standing and attribute, each with its sources, whether its standing
    rests on them or on the project's judgement, and the study identities it corresponds to."""
    catalog = load_catalog(project_at(root))
    warn_problems(catalog)
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
                    "standing_basis": "judgement" if group.judgement else "sources",
                    "judgement": group.judgement,
                    "study": {
                        sid: {"terms": list(link.terms), "standing": link.standing}
                        for sid, link in sorted(group.study.items())
                    },
                }
            )
    rows.sort(key=lambda r: (r["region"], r["standing"], r["attribute"], r["id"]))
    totals = Counter(r["standing"] for r in rows)
    if json:
        print_json({"groups": rows, "totals": dict(sorted(totals.items()))})
        return
    table = Table(title="identity groups")
    for col in ("region", "standing", "attribute", "id", "name", "sources", "basis", "study"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["region"],
            r["standing"],
            r["attribute"],
            r["id"],
            r["name"],
            str(len(r["sources"])),
            r["standing_basis"],
            ", ".join(f"{sid}: {'; '.join(link['terms'])}" for sid, link in r["study"].items()),
        )
    out_console.print(table)
    out_console.print(", ".join(f"{n} {standing}" for standing, n in sorted(totals.items())))


@app.command("study")
def study_command(
    study_id: Annotated[str, typer.Argument(help="A study of lexicons/studies/ (e.g. elsafoury).")],
    identities: Annotated[
        Path | None,
        typer.Option(
            "--identities",
            help="Your copy of the study's identity list (CSV: region,term,english_gloss,attribute_standing).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """The groups that correspond to a study's identities, per region: with the study's list, the
    matched subset with counts (matched / total), the identities left out with their reasons and
    every disagreement in standing (exit 2 if the two do not agree)."""
    catalog = load_catalog(project_at(root))
    study = load_study(catalog.project, study_id)
    result = match_study(catalog, study, read_identities(identities) if identities else None)
    groups = {g.id: (il, g) for il, g in linked_groups(catalog, study.id)}
    if json:
        print_json(
            {
                "study": study.id,
                "citation": study.citation,
                "regions": {
                    r: {
                        "study_region": m.study_region,
                        "matched": len(m.matched),
                        "total": m.total,
                        "share": round(m.share, 4) if m.share is not None else None,
                        "matched_terms": m.matched,
                        "groups": sorted({g for gs in m.matched.values() for g in gs}),
                        "left_out": m.left_out,
                        "unmatched": m.unmatched,
                    }
                    for r, m in result.regions.items()
                },
                "standing_differences": result.standing_differences,
                "problems": [p.as_dict() for p in result.problems],
            }
        )
        if result.problems:
            raise typer.Exit(2)
        return
    summary = Table(title=f"{study.name}: matched subset per region")
    for col in (
        "region",
        "study region",
        "groups",
        "study identities matched",
        "share",
        "left out (reason given)",
    ):
        summary.add_column(col, justify="left" if col in ("region", "study region") else "right")
    for r, m in result.regions.items():
        n_groups = len({g for gs in m.matched.values() for g in gs})
        total = f"{len(m.matched)} / {m.total}" if m.total is not None else f"{len(m.matched)} / ?"
        share = f"{m.share:.1%}" if m.share is not None else "?"
        summary.add_row(r, m.study_region, str(n_groups), total, share, str(len(m.left_out)))
    out_console.print(summary)
    for r, m in result.regions.items():
        table = Table(title=f"{r} ({m.study_region}): study identity -> polyprobe groups")
        for col in ("study identity", "groups", "standing"):
            table.add_column(col)
        for term, gids in m.matched.items():
            standings = ", ".join(sorted({groups[g][1].standing for g in gids}))
            table.add_row(term, ", ".join(gids), standings)
        for term, reason in m.left_out.items():
            table.add_row(term, "left out: " + reason, "")
        out_console.print(table)
    for diff in result.standing_differences:
        out_console.print(
            f"standing: {diff['group']} is {diff['ours']}, the study calls {diff['term']!r} {diff['study']}"
            + (" (recorded)" if diff["recorded"] else ""),
            highlight=False,
            markup=False,
        )
    if identities is None:
        err_console.print(
            "pass --identities FILE (your copy of the study's list) to count the match against it",
            highlight=False,
            markup=False,
        )
    if result.problems:
        raise CatalogError(result.problems)

"""`polyprobe catalog validate | lint | groups | study` (and `coverage`, the same as `translations
status`): checks and overviews for maintainers."""

from __future__ import annotations

import functools
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from toolkit.catalog.identities import Group, IdentityList
from toolkit.catalog.lexicon_pins import PINS_FILE, load_pins, unpinned_locales
from toolkit.catalog.loader import Catalog, load_catalog
from toolkit.catalog.studies import (
    StudyFile,
    StudyMatch,
    linked_groups,
    load_study,
    match_study,
    read_identities,
    study_ids,
)
from toolkit.cli.common import (
    JsonFlag,
    Root,
    err_console,
    out_console,
    print_json,
    print_table,
    progress,
    project_at,
    say,
    stepper,
    table,
    warn_problems,
)
from toolkit.cli.translations_cmd import status_command
from toolkit.core.errors import CatalogError, InputError, Problem, did_you_mean, ordered
from toolkit.importers.sos_study import SPEC as SOS_STUDY_SPEC
from toolkit.importers.sos_study import load_spec
from toolkit.render.lint import CHECKS, lint, load_lint_config
from toolkit.render.validate import validate
from toolkit.review.policy import POLICY_FILE, load_policy
from toolkit.translation.slot_files import slot_file_problems

app = typer.Typer(help="Check and survey the catalog.", no_args_is_help=True)


def _problems_of(check: Callable[[], object], file: str) -> list[Problem]:
    """What a loader that raises says about its file, as problems."""
    try:
        check()
    except CatalogError as exc:
        return list(exc.problems)
    except InputError as exc:
        return [Problem(file, "(file)", "", str(exc).removeprefix(f"{file}: "))]
    return []


def files_beyond_rendering(catalog: Catalog) -> list[Problem]:
    """The problems of the files commands read that rendering does not: the slot rules of
    machine translation, the regional study's import spec, the review policy, the HurtLex pins
    (every locale's HurtLex language among them), the study files and the lint words. A file
    that is not there is the business of the command that needs it; one that is there is
    checked whole."""
    project = catalog.project
    problems = slot_file_problems(project, catalog.locales)
    if (project.lexicons / SOS_STUDY_SPEC).exists():
        problems += _problems_of(lambda: load_spec(catalog), f"lexicons/{SOS_STUDY_SPEC}")
    if (project.root / POLICY_FILE).exists():
        problems += _problems_of(lambda: load_policy(project), POLICY_FILE)
    if (project.root / PINS_FILE).exists():
        pin_problems = _problems_of(lambda: load_pins(project), str(project.root / PINS_FILE))
        problems += pin_problems or unpinned_locales(load_pins(project), catalog.locales)
    for study in study_ids(project):
        problems += _problems_of(
            functools.partial(load_study, project, study), f"lexicons/studies/{study}.yaml"
        )
    load_lint_config(catalog, problems)
    return problems


@app.command("validate")
def validate_command(root: Root = None, json: JsonFlag = False) -> None:
    """Render every template × group × variant × locale, and check every other file polyprobe
    reads (slot rules, study files, review policy, lexicon pins, lint words); list every problem
    (exit 2 if any)."""
    catalog = load_catalog(project_at(root))
    with progress() as bar:
        result = validate(catalog, progress=stepper(bar))
    result.problems = ordered([*result.problems, *files_beyond_rendering(catalog)])
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
    say(f"ok: {len(catalog.suites)} suite(s), {total} rows rendered, no problems")


@app.command("lint")
def lint_command(root: Root = None, json: JsonFlag = False) -> None:
    """Content checks beyond rendering (exit 2 if any finding): articles and proclitics before
    slots, the honest slot as the last word, one definite form per term, another variety's
    words, groups that read the same, standings resting only on terminology guides."""
    catalog = load_catalog(project_at(root))
    with err_console.status("linting"):
        problems = lint(catalog)
    if json:
        print_json({"ok": not problems, "checks": list(CHECKS), "problems": [p.as_dict() for p in problems]})
        if problems:
            raise typer.Exit(2)
        return
    if problems:
        raise CatalogError(problems)
    say(f"ok: {len(CHECKS)} checks ({', '.join(CHECKS)}), no findings")


app.command("coverage", help="The same as `polyprobe translations status`.", hidden=True)(status_command)


def _wrapped(text: str, indent: str) -> str:
    width = max(40, out_console.width)
    return textwrap.fill(
        text, width=width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
    )


@app.command("groups")
def groups_command(
    region: Annotated[
        str | None, typer.Option("--region", help="Only this region (us, uk, de, eg, arab, global).")
    ] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Identity groups by list, standing and attribute, with their sources and study links.

    Per identity list: a line per group (its id, the numbers of the sources it rests on, `J`
    where its standing is the project's judgement, its name and the study identities it
    corresponds to), then the list's sources in full and the judgements. --json gives every
    field."""
    catalog = load_catalog(project_at(root), eager=False)
    warn_problems(catalog)
    if region is not None and region not in catalog.taxonomy.regions:
        raise InputError(f"unknown region {region!r}.{did_you_mean(region, catalog.taxonomy.regions)}")
    lists = [il for il in catalog.identity_lists.values() if region is None or il.region == region]
    if json:
        rows = [_group_row(il, g) for il in lists for g in il.groups]
        rows.sort(key=lambda r: (r["region"], r["standing"], r["attribute"], r["id"]))
        counted = Counter(str(r["standing"]) for r in rows)
        print_json({"groups": rows, "totals": dict(sorted(counted.items()))})
        return
    totals: Counter[str] = Counter()
    for ilist in sorted(lists, key=lambda il: (il.region, il.path)):
        standings = Counter(str(g.standing) for g in ilist.groups)
        totals.update(standings)
        out_console.print(_list_text(ilist, standings), highlight=False, markup=False, soft_wrap=True)
    out_console.print(
        "all lists: " + ", ".join(f"{n} {standing}" for standing, n in sorted(totals.items())),
        highlight=False,
        markup=False,
    )


def _list_text(ilist: IdentityList, standings: Counter[str]) -> str:
    """One identity list as text that reads at 80 columns: a heading per standing and attribute,
    a line per group (id, source numbers, name and study terms wrapped), then the sources."""
    width = max(60, out_console.width)
    numbers = {sid: n for n, sid in enumerate(ilist.sources, start=1)}
    cited = {
        g.id: " ".join(str(n) for n in sorted(numbers[s] for s in g.source if s in numbers))
        + (" J" if g.judgement else "")
        for g in ilist.groups
    }
    id_width = max(len(g.id) for g in ilist.groups) if ilist.groups else 0
    cited_width = max(len(c) for c in cited.values()) if cited else 0
    indent = " " * (2 + id_width + 2 + cited_width + 2)
    counts = ", ".join(f"{n} {standing}" for standing, n in sorted(standings.items()))
    heading = (
        f"{ilist.path}: region {ilist.region}, version {ilist.version}, {len(ilist.groups)} groups ({counts})"
    )
    lines = [_wrapped(heading, "")]
    section = None
    for group in sorted(ilist.groups, key=lambda g: (g.standing, g.attribute, g.id)):
        if (group.standing, group.attribute) != section:
            section = (group.standing, group.attribute)
            lines.append(f"{group.standing} · {group.attribute}")
        about = group.name + "".join(
            f"; {sid}: {', '.join(link.terms)}" for sid, link in sorted(group.study.items())
        )
        first = f"  {group.id:<{id_width}}  {cited[group.id]:<{cited_width}}  "
        lines.append(
            textwrap.fill(
                about, width=width, initial_indent=first, subsequent_indent=indent, break_on_hyphens=False
            )
        )
    lines.append(
        _wrapped(f"sources of {ilist.path} (J: the standing is the project's judgement, below):", "")
    )
    for sid, n in numbers.items():
        lines.append(_wrapped(f"{n} {sid}: {ilist.sources[sid].citation}", "  "))
    for group in sorted((g for g in ilist.groups if g.judgement), key=lambda g: g.id):
        lines.append(_wrapped(f"J {group.id}: {group.judgement}", "  "))
    return "\n".join(lines) + "\n"


def _group_row(ilist: IdentityList, group: Group) -> dict[str, Any]:
    return {
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
        print_json(_study_json(study, result))
        if result.problems:
            raise typer.Exit(2)
        return
    summary = table(f"{study.name}: matched subset per region")
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
    print_table(summary)
    for r, m in result.regions.items():
        grid = table(f"{r} ({m.study_region}): study identity -> polyprobe groups")
        for col in ("study identity", "groups", "standing"):
            grid.add_column(col)
        for term, gids in m.matched.items():
            standings = ", ".join(sorted({groups[g][1].standing for g in gids}))
            grid.add_row(term, ", ".join(gids), standings)
        for term, reason in m.left_out.items():
            grid.add_row(term, "left out: " + reason, "")
        print_table(grid)
    for diff in result.standing_differences:
        out_console.print(
            f"standing: {diff['group']} is {diff['ours']}, the study calls {diff['term']!r} {diff['study']}"
            + (" (recorded)" if diff["recorded"] else ""),
            highlight=False,
            markup=False,
        )
    if identities is None:
        say("pass --identities FILE (your copy of the study's list) to count the match against it")
    if result.problems:
        raise CatalogError(result.problems)


def _study_json(study: StudyFile, result: StudyMatch) -> dict[str, Any]:
    """The match of a study, for --json: per region the counts, matched terms and groups, what
    is left out or unmatched; the standing differences and problems."""
    return {
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

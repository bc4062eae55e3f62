"""`polyprobe import bbq` and `polyprobe quality`: bringing external data in, and measuring
what reviewers changed."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog.loader import load_catalog
from toolkit.cli.choices import Suite
from toolkit.cli.common import (
    JsonFlag,
    Root,
    list_option,
    out_console,
    print_json,
    print_table,
    project_at,
    say,
    table,
)
from toolkit.importers.bbq import import_bbq
from toolkit.translation.quality import post_editing

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
        str,
        typer.Option(
            "--locale",
            help="The language to import: en (the source) or a translation (MBBQ's *_es.jsonl). A file's "
            "name says its language (Age_es.jsonl); a name without one is taken to be in --locale.",
        ),
    ] = "en",
    metadata: Annotated[
        Path | None,
        typer.Option(
            "--metadata",
            help="BBQ's supplemental/additional_metadata.csv: the intersectional templates' stereotyped "
            "groups (Race_x_gender, Race_x_SES have no target without it).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    per_category: Annotated[
        int | None,
        typer.Option(
            "--per-category",
            min=1,
            help="Item families per category (default: all). A family: the four items of one context and "
            "question pairing (ambiguous and disambiguated, negative and non-negative question).",
        ),
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
        catalog,
        path,
        locale=locale,
        per_category=per_category,
        how=select.value,
        seed=seed,
        by=by,
        metadata=metadata,
    )
    if result.skipped_files:
        say(
            f"skipped {len(result.skipped_files)} file(s) in other languages: {', '.join(result.skipped_files)}"
        )
    if result.path is not None:
        cats = ", ".join(f"{k} {v}" for k, v in sorted(result.categories.items()))
        say(f"{result.items} items in {result.families} families -> {result.path} ({cats})")
        for category, n in sorted(result.no_target.items()):
            hint = " (pass --metadata BBQ/supplemental/additional_metadata.csv)" if "_x_" in category else ""
            say(f"warning: {category}: {n} item(s) without a target answer: no bias score for them{hint}")
    else:
        say(
            f"{result.items} items aligned with the English ones; {result.translated} segment translations "
            f"stored as drafts ({locale})"
        )
        if result.kept_reviewed:
            say(
                f"{len(result.kept_reviewed)} segment(s) kept as they are: the store has reviewed work for them "
                f"({', '.join(result.kept_reviewed[:10])}{' …' if len(result.kept_reviewed) > 10 else ''})"
            )
        if result.outside:
            say(f"{result.outside} translated item(s) belong to English items that were not imported")
        if result.unaligned:
            say(f"warning: {len(result.unaligned)} translated item(s) not imported:")
            for line in result.unaligned[:20]:
                say(f"  {line}")


def quality_command(
    locale: Annotated[str, typer.Option("--locale", help="Locale whose post-editing to measure.")],
    suite: Annotated[
        list[str] | None,
        list_option("--suite", help="Suites (default: all).", choices=Suite, metavar="SUITE"),
    ] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """chrF, BLEU and TER between machine drafts and their reviewed versions.

    Per suite: the segments with a DeepL draft and a reviewed text, how many reviewers edited,
    and the three scores with sacrebleu's signature (the tokenizer chosen per locale)."""

    catalog = load_catalog(project_at(root), suites=suite or None, locales=[locale])
    catalog.check_locale(locale)
    efforts = [
        post_editing(catalog, locale, s) for s in catalog.suites if locale in catalog.suites[s].spec.locales
    ]
    if json:
        print_json([e.as_dict() for e in efforts])
        return
    grid = table(f"post-editing effort, {locale}: machine draft vs reviewed text")
    for col in ("suite", "segments", "edited", "chrF", "BLEU", "TER"):
        grid.add_column(col, justify="right" if col != "suite" else "left")
    for e in efforts:
        scores = (str(v) if v is not None else "-" for v in (e.chrf, e.bleu, e.ter))
        grid.add_row(e.suite, str(e.segments), str(e.edited), *scores)
    print_table(grid)
    for sig in sorted({sig for e in efforts for sig in e.signatures.values()}):
        out_console.print(f"signature: {sig}", highlight=False, markup=False)

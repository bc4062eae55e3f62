"""`polyprobe import bbq` and `polyprobe quality`: bringing external data in, and measuring
what reviewers changed."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from toolkit.catalog.loader import load_catalog
from toolkit.catalog.published.bbq_targets import NO_TARGET_REASONS
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
from toolkit.importers.bbq import CHECKS, BbqImport, import_bbq
from toolkit.translation.quality import post_editing

import_app = typer.Typer(
    help="Import external datasets from your own copy (never committed).", no_args_is_help=True
)


class Select(StrEnum):
    """How --per-category picks its item families: drawn with --seed, or the first N."""

    random = "random"
    first = "first"


@import_app.command("bbq")
def import_bbq_command(
    path: Annotated[Path, typer.Argument(help="A BBQ/MBBQ JSONL file, or a folder of them.", exists=True)],
    locale: Annotated[
        str,
        typer.Option(
            "--locale",
            help="The language to import: en (the source) or a published translation (MBBQ's *_es, "
            "*_nl, *_tr.jsonl). A file's name says its language (Age_es.jsonl); a name without one is "
            "taken to be in --locale.",
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
            help="Item families per category (default: all). A family: BBQ's block of four items of one "
            "question (ambiguous and disambiguated, negative and non-negative question).",
        ),
    ] = None,
    select: Annotated[
        Select, typer.Option("--select", help="first N families, or N drawn with --seed.")
    ] = Select.random,
    seed: Annotated[int, typer.Option("--seed", help="Seed for --select random.")] = 0,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Refuse the import (exit 2, nothing written) when any row would be left out."
        ),
    ] = False,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Read BBQ/MBBQ items: English into the bbq suite (to translate and review), a published
    translation (MBBQ's Spanish, Dutch, Turkish) as published, aligned with the English items.

    Rows that are not BBQ items, families that are not BBQ's block of four and translated families
    that cannot be aligned are listed (file, line, why), left out and counted; the rest is imported."""
    catalog = load_catalog(project_at(root, writes=True), suites=["bbq"])
    result = import_bbq(
        catalog,
        path,
        locale=locale,
        per_category=per_category,
        how=select.value,
        seed=seed,
        metadata=metadata,
        strict=strict,
    )
    english = locale == catalog.locales.source.code
    _say_bbq_import(result, locale, english)
    if json:
        print_json([f.as_dict() for f in result.files])
        return
    print_table(_bbq_files_table(result, locale, english))


def _say_bbq_import(result: BbqImport, locale: str, english: bool) -> None:
    """What the import did, on stderr: files skipped, rows left out, what was written, and the
    warnings (published translations aligned with an earlier English import, items without a
    target answer)."""
    if result.skipped_files:
        say(
            f"skipped {len(result.skipped_files)} file(s) in other languages: {', '.join(result.skipped_files)}"
        )
    for left in result.left_out:
        say(f"left out: {left.file}:{left.line}: {left.message}")
    cats = ", ".join(f"{k} {v}" for k, v in sorted(result.categories.items()))
    what = "items" if english else f"published {locale} items"
    say(f"{result.items} {what} in {result.families} families -> {result.path} ({cats})")
    if result.published_before:
        langs = ", ".join(result.published_before)
        say(
            f"note: the published translations ({langs}) were aligned with the English items imported "
            f"before; import them again (polyprobe import bbq PATH --locale {result.published_before[0]}) "
            "so that they cover these"
        )
    for category, reasons in sorted(result.no_target.items()):
        why = "; ".join(f"{n} {NO_TARGET_REASONS[r]}" for r, n in sorted(reasons.items()))
        say(f"warning: {category}: {sum(reasons.values())} item(s) without a target answer ({why})")


def _bbq_files_table(result: BbqImport, locale: str, english: bool) -> Table:
    """The import per file: rows read, aligned, imported, outside the selection, left out and why
    (alignment columns only for a published translation)."""
    grid = table(f"bbq import ({locale}), per file")
    for column in ("file", "items", "aligned", "imported", "outside", "left out"):
        grid.add_column(column, justify="left" if column in ("file", "left out") else "right")
    for f in result.files:
        left_out = ", ".join(f"{n} {CHECKS[c]}" for c, n in sorted(f.left_out.items())) or "0"
        grid.add_row(
            f.name,
            str(f.rows),
            "—" if english else str(f.aligned),
            str(f.imported),
            "—" if english else str(f.outside),
            left_out,
        )
    return grid


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

"""`polyprobe translate`: DeepL drafts for what is missing, and the ledger of what it cost."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.table import Table

from toolkit.catalog import load_catalog
from toolkit.cli.common import JsonFlag, Root, err_console, out_console, print_json, progress, project_at
from toolkit.errors import InputError
from toolkit.ledger import read_ledger, summarise
from toolkit.translate import Options, Report, translate

LEDGER_COLUMNS = (
    "run",
    "started",
    "finished",
    "locale",
    "suite",
    "outcome",
    "requests",
    "attempts",
    "characters",
    "billed",
    "segments",
)


class Formality(StrEnum):
    default = "default"
    more = "more"
    less = "less"
    prefer_more = "prefer_more"
    prefer_less = "prefer_less"


def _print_report(report: Report) -> None:
    verb = "would send" if report.outcome == "dry run" else "sent"
    lines = [
        f"{report.locale}/{report.suite}: {report.outcome}",
        f"  segments without a current translation: {report.pending}",
        f"  unique texts {verb}: {report.unique_texts}, characters: {report.characters}, requests: {report.requests}",
    ]
    if report.outcome != "dry run":
        lines.append(
            f"  stored: {report.translated} machine, {report.rejected} rejected; remaining: {report.remaining}; "
            f"billed characters: {report.billed}; attempts: {report.attempts}"
        )
    lines.extend(f"  note: {n}" for n in report.notes)
    err_console.print("\n".join(lines), highlight=False, markup=False)


def translate_command(
    locale: Annotated[str | None, typer.Option("--locale", help="Target locale, e.g. it.")] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="Suite to translate, e.g. sentiment.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be billed; send nothing.")
    ] = False,
    max_chars: Annotated[
        int | None, typer.Option("--max-chars", min=1, help="Send at most this many characters.")
    ] = None,
    formality: Annotated[
        Formality, typer.Option("--formality", help="DeepL formality where the target supports it.")
    ] = Formality.default,
    glossary: Annotated[
        bool, typer.Option("--glossary/--no-glossary", help="Force identity terms with a glossary.")
    ] = True,
    batch_size: Annotated[
        int, typer.Option("--batch-size", min=1, max=50, help="Texts per request (DeepL takes at most 50).")
    ] = 50,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Retries for 429, 5xx and dropped connections.")
    ] = 5,
    backoff: Annotated[
        float, typer.Option("--backoff", min=0.0, help="First retry delay in seconds (doubles).")
    ] = 1.0,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for one response.")
    ] = 30.0,
    ledger: Annotated[
        bool, typer.Option("--ledger", help="Show characters billed and requests per run, and stop.")
    ] = False,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Machine-translate the segments of a suite that have no current translation (DeepL;
    key from DEEPL_AUTH_KEY, server from DEEPL_SERVER_URL)."""
    project = project_at(root, writes=not ledger)
    if ledger:
        runs = summarise(read_ledger(project))
        if json:
            print_json(runs)
            return
        table = Table(title="DeepL ledger (translations/ledger.jsonl)")
        for col in LEDGER_COLUMNS:
            table.add_column(col)
        for run in runs:
            table.add_row(*(str(run.get(c, "")) for c in LEDGER_COLUMNS))
        out_console.print(table)
        out_console.print(
            f"total: {sum(r['requests'] for r in runs)} requests, {sum(r['billed'] for r in runs)} billed characters"
        )
        return
    if locale is None or suite is None:
        raise InputError("give --locale and --suite (or --ledger)")
    catalog = load_catalog(project, suites=[suite], locales=[locale])
    options = Options(
        dry_run=dry_run,
        max_chars=max_chars,
        formality=formality.value,
        batch_size=batch_size,
        retries=retries,
        backoff=backoff,
        timeout=timeout,
        use_glossary=glossary,
    )
    with progress() as bar:
        task = bar.add_task(f"translating {suite} [{locale}]", total=None)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = translate(catalog, suite, locale, options, on_batch=step)
    if json:
        print_json(report.__dict__)
    else:
        _print_report(report)

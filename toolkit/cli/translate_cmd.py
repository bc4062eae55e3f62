"""`polyprobe translate`: DeepL drafts for what is missing; the ledger of what it cost (shown by
`polyprobe translations ledger`); `polyprobe glossaries`: polyprobe's DeepL glossaries on the
account, listed and deleted.

Exit codes: 0 done, 1 DeepL failed (key refused, retries spent), 2 bad input, 3 quota
exhausted (everything answered is kept; run again when the quota resets), 130 interrupted."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated

import typer

from toolkit.catalog.loader import load_catalog
from toolkit.cli.choices import Suite, plain
from toolkit.cli.common import JsonFlag, Root, out_console, print_json, progress, project_at, say
from toolkit.core.errors import InputError
from toolkit.core.project import Project
from toolkit.translation.deepl_api import KEY_ENV, SERVER_ENV, DeepL
from toolkit.translation.glossary import NAME_PREFIX
from toolkit.translation.ledger import ledger_path, read_ledger, summarise
from toolkit.translation.machine import translate
from toolkit.translation.machine_plan import MODEL_TYPES, Options, Report
from toolkit.translation.machine_requests import delete_glossary

ModelType = StrEnum("ModelType", {m: m for m in MODEL_TYPES})  # type: ignore[misc]
"""DeepL's model types, as the library knows them (mypy cannot list the members)."""


class Formality(StrEnum):
    """DeepL's formality settings (`prefer_*` falls back to the default where a target has none)."""

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
            f"  stored: {report.translated} machine draft(s), {report.needs_edit} needing a human edit; "
            f"remaining: {report.remaining}; billed characters: {report.billed}; attempts: {report.attempts}"
        )
        if report.needs_rewording:
            lines.append(
                f"  needs rewording: {report.needs_rewording} of those (right, but in a word order the suite "
                "cannot use, e.g. the completion slot not last); `polyprobe review push` offers them first"
            )
    lines.extend(f"  note: {n}" for n in report.notes)
    say("\n".join(lines))


def _when(stamp: str) -> str:
    """`2026-01-01T12:00:01Z` as `2026-01-01 12:00:01` (the ledger's times are UTC)."""
    return stamp.replace("T", " ").removesuffix("Z")[:19] if stamp else "?"


def print_ledger(project: Project, json: bool) -> None:
    """The ledger per run: two lines each, so it reads at 80 columns (--json: every field)."""
    runs = summarise(read_ledger(project))
    if json:
        print_json(runs)
        return
    out = [f"DeepL ledger ({project.rel(ledger_path(project))}; times in UTC)"]
    for run in runs:
        target = f"{run.get('locale', '?')}/{run.get('suite', '?')}"
        out.append(
            f"{run['run']}  {_when(run.get('started', ''))} to {_when(run.get('finished', ''))[11:] or '?'}  "
            f"{target}  {run.get('outcome', 'unfinished')}"
        )
        out.append(
            f"    {run['requests']} request(s) answered of {run['attempts']} attempt(s); {run['characters']} "
            f"characters sent, {run['billed']} billed; {run['segments']} segment(s)"
        )
    out.append(
        f"total: {sum(r['requests'] for r in runs)} requests, {sum(r['billed'] for r in runs)} billed characters"
    )
    out_console.print("\n".join(out), highlight=False, markup=False, soft_wrap=True)


# The options of `polyprobe translate`, one alias each so the command reads as one screen.
LocaleOption = Annotated[
    str | None, typer.Option("--locale", help="Target locale, e.g. it (not arz: DeepL has no target).")
]
SuiteOption = Annotated[Suite | None, typer.Option("--suite", help="Suite to translate.", callback=plain)]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Print what would be billed; send nothing.")]
MaxChars = Annotated[
    int | None,
    typer.Option(
        "--max-chars", min=1, help="Send at most this many characters (of source text) in this run."
    ),
]
FormalityOption = Annotated[
    Formality,
    typer.Option("--formality", help="DeepL formality where the target supports it (a warning otherwise)."),
]
ModelTypeOption = Annotated[
    ModelType | None,
    typer.Option("--model-type", help="DeepL model type (default: DeepL's own choice)."),
]
RetryRejected = Annotated[
    bool,
    typer.Option(
        "--retry-rejected",
        help="Send again the segments stored as needing a human edit (or rejected).",
    ),
]
GlossaryFlag = Annotated[
    bool, typer.Option("--glossary/--no-glossary", help="Force identity terms with a glossary.")
]
BatchSize = Annotated[
    int, typer.Option("--batch-size", min=1, max=50, help="Texts per request (DeepL takes at most 50).")
]
Retries = Annotated[
    int,
    typer.Option(
        "--retries", min=0, help="Retries of one call for 429, 5xx, timeouts and dropped connections."
    ),
]
RetryBudget = Annotated[
    int, typer.Option("--retry-budget", min=0, help="Retries of the whole run, all calls together.")
]
Backoff = Annotated[float, typer.Option("--backoff", min=0.0, help="First retry delay in seconds (doubles).")]
Timeout = Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds to wait for one response.")]
LedgerFlag = Annotated[
    bool, typer.Option("--ledger", hidden=True, help="Deprecated: `polyprobe translations ledger`.")
]


def translate_command(
    locale: LocaleOption = None,
    suite: SuiteOption = None,
    dry_run: DryRun = False,
    max_chars: MaxChars = None,
    formality: FormalityOption = Formality.default,
    model_type: ModelTypeOption = None,
    retry_rejected: RetryRejected = False,
    glossary: GlossaryFlag = True,
    batch_size: BatchSize = 50,
    retries: Retries = 5,
    retry_budget: RetryBudget = 20,
    backoff: Backoff = 1.0,
    timeout: Timeout = 30.0,
    ledger: LedgerFlag = False,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Machine-translate the segments of a suite that have no current translation (DeepL).

    The key comes from DEEPL_AUTH_KEY, the server from DEEPL_SERVER_URL (optional). Each unique
    English text is sent once, 50 per request; what it cost is in `polyprobe translations
    ledger`. Exit codes: 0 done, 1 DeepL failed, 2 bad input, 3 quota exhausted (everything
    answered is kept), 130 interrupted."""
    project = project_at(root, writes=not ledger)
    if ledger:
        say("warning: `polyprobe translate --ledger` is deprecated; use `polyprobe translations ledger`")
        print_ledger(project, json)
        return
    if locale is None or suite is None:
        raise InputError("give --locale and --suite")
    catalog = load_catalog(project, suites=[suite], locales=[locale])
    options = Options(
        dry_run=dry_run,
        max_chars=max_chars,
        formality=formality.value,
        model_type=model_type.value if model_type else None,
        batch_size=batch_size,
        retries=retries,
        retry_budget=retry_budget,
        backoff=backoff,
        timeout=timeout,
        use_glossary=glossary,
        retry_rejected=retry_rejected,
    )
    with progress() as bar:
        task = bar.add_task(f"translating {suite} {locale}", total=None)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = translate(catalog, suite, locale, options, on_batch=step)
    if json:
        print_json(report.__dict__)
    else:
        _print_report(report)


glossaries_app = typer.Typer(
    help="polyprobe's DeepL glossaries on the account (names starting with 'polyprobe ').",
    no_args_is_help=True,
)


def _account() -> DeepL:
    key = os.environ.get(KEY_ENV)
    if not key:
        raise InputError(f"set {KEY_ENV} to your DeepL API key (free keys end in ':fx')")
    return DeepL(key, os.environ.get(SERVER_ENV) or None, where="the account")


@glossaries_app.command("list")
def glossaries_list(json: JsonFlag = False) -> None:
    """List polyprobe's glossaries (the account's others are never shown or touched)."""
    client = _account()
    try:
        listed = client.call("listing glossaries", lambda t: t.list_glossaries())
    finally:
        client.close()
    ours = sorted((g for g in listed if g.name.startswith(NAME_PREFIX)), key=lambda g: g.name)
    rows = [
        {
            "id": g.glossary_id,
            "name": g.name,
            "pair": f"{g.source_lang}-{g.target_lang}",
            "entries": g.entry_count,
            "created": str(g.creation_time),
        }
        for g in ours
    ]
    if json:
        print_json(rows)
        return
    lines = [f"polyprobe's DeepL glossaries: {len(rows)}"]
    for g in ours:
        lines.append(
            f"{g.glossary_id}  {g.source_lang}-{g.target_lang}  {g.entry_count} entries  "
            f"created {str(g.creation_time)[:19]}"
        )
        lines.append(f"    {g.name}")
    out_console.print("\n".join(lines), highlight=False, markup=False, soft_wrap=True)


@glossaries_app.command("delete")
def glossaries_delete(
    ids: Annotated[list[str] | None, typer.Argument(help="Glossary ids to delete.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Delete every polyprobe glossary.")] = False,
) -> None:
    """Delete polyprobe's glossaries: the ones named, or all of them with --all."""
    if not ids and not all_:
        raise InputError("name the glossary ids to delete, or give --all")
    client = _account()
    try:
        listed = client.call("listing glossaries", lambda t: t.list_glossaries())
        ours = {g.glossary_id: g for g in listed if g.name.startswith(NAME_PREFIX)}
        unknown = sorted(set(ids or ()) - set(ours))
        if unknown:
            raise InputError(f"not a polyprobe glossary on this account: {', '.join(unknown)}")
        chosen = [ours[i] for i in (ids or sorted(ours))]
        for glossary in chosen:
            delete_glossary(client, glossary)
    finally:
        client.close()
    say(f"deleted {len(chosen)} glossary(ies)")

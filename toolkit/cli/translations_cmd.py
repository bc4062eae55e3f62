"""`polyprobe translations ...`: the translation store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog.loader import load_catalog
from toolkit.cli.choices import Suite, plain
from toolkit.cli.common import (
    SEGMENT_IDS,
    JsonFlag,
    Root,
    out_console,
    print_json,
    print_table,
    project_at,
    say,
    table,
    warn_problems,
    warn_skipped,
)
from toolkit.cli.translate_cmd import print_ledger
from toolkit.store.repair import repair_store, store_files
from toolkit.translation.coverage import COVERAGE_COLUMNS, coverage
from toolkit.translation.drafts import import_drafts
from toolkit.translation.glosses import GlossedText, glossed_texts, import_glosses
from toolkit.translation.stale import RETIRED, orphans, sync

app = typer.Typer(
    help="Manage the translation store (translations/<locale>/<suite>.jsonl).", no_args_is_help=True
)


@app.command("draft")
def draft_command(
    file: Annotated[
        Path,
        typer.Argument(
            help=f"YAML mapping of segment id to translated text. {SEGMENT_IDS}", exists=True, dir_okay=False
        ),
    ],
    suite: Annotated[
        Suite, typer.Option("--suite", help="The suite the segments belong to.", callback=plain)
    ],
    locale: Annotated[str, typer.Option("--locale", help="The drafts' locale, e.g. it.")],
    by: Annotated[str, typer.Option("--by", help="Who wrote the drafts (recorded in the history).")],
    root: Root = None,
) -> None:
    """Store contributor-written translations as drafts (origin and status `draft`).

    Every text passes the gate `render` applies; one failing text refuses the whole file (exit 2,
    each failure named) and nothing is written."""
    catalog = load_catalog(project_at(root, writes=True), suites=[suite], locales=[locale])
    result = import_drafts(catalog, suite, locale, file, by)
    say(
        f"{locale}/{suite}: {len(result.added)} added, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged"
    )


@app.command("gloss")
def gloss_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="YAML mapping of segment id to the reviewer's English back-translation of its current text.",
            exists=True,
            dir_okay=False,
        ),
    ],
    suite: Annotated[
        Suite, typer.Option("--suite", help="A suite whose texts are prompts (ifm, iat).", callback=plain)
    ],
    locale: Annotated[str, typer.Option("--locale", help="The translations' locale, e.g. ar.")],
    by: Annotated[
        str, typer.Option("--by", help="The reviewer who wrote the glosses (recorded in the history).")
    ],
    root: Root = None,
) -> None:
    """Keep a reviewer's English gloss of prompts (ifm's instruction, iat's prompt) in the store.

    A gloss says in English what the locale's text actually asks, so that `translations status
    --needs-gloss` can show every locale's question beside the English one. It belongs to the
    text it was written for: when the text changes the gloss is outdated. Every entry is checked
    first; one bad entry refuses the whole file (exit 2) and nothing is written."""
    catalog = load_catalog(project_at(root, writes=True), suites=[suite], locales=[locale])
    result = import_glosses(catalog, suite, locale, file, by)
    say(f"{locale}/{suite}: {len(result.added)} gloss(es) written, {len(result.unchanged)} unchanged")


def status_command(
    root: Root = None,
    json: JsonFlag = False,
    needs_gloss: Annotated[
        bool,
        typer.Option(
            "--needs-gloss",
            help="Instead: every prompt's English and each locale's gloss, and the texts that lack a current gloss.",
        ),
    ] = False,
) -> None:
    """Segments per locale, suite and status: how far each locale's translations have come.

    One table per suite, a column per locale, a row per status found (all-zero rows are left
    out and named below), so nine locales fit 80 columns. `untranslated`: no translation at all; `stale`: its English source
    changed; `source`: the English rows themselves. `catalog coverage` is the same command.

    With --needs-gloss: one question across locales. For each prompt a model is asked (ifm's
    instruction, iat's prompt, the prompts of lexicons/prompts.yaml), the English, then every
    locale's reviewer gloss (what it asks, in English), or its text where the gloss is missing
    or was written for an earlier text; a summary names how many lack one. Store prompts are
    glossed with `translations gloss`; prompts.yaml carries its glosses beside the prompts
    (glosses: {bbq: {text, text_sha}}, the sha256 printed here)."""
    if needs_gloss:
        _print_glosses(root, json)
        return
    catalog = load_catalog(project_at(root), eager=False)
    data = coverage(catalog)
    warn_skipped(catalog.problems)
    warn_problems(catalog)
    by_locale: dict[str, dict[str, dict[str, int]]] = {}
    for suite, per_locale in data.items():
        for locale, counts in per_locale.items():
            by_locale.setdefault(locale, {})[suite] = counts
    if json:
        print_json(by_locale)
        return
    shown = [c for c in COVERAGE_COLUMNS if any(n[c] for loc in data.values() for n in loc.values())]
    for suite, per_locale in data.items():
        if not any(n for counts in per_locale.values() for n in counts.values()):
            out_console.print(f"{suite}: no segments", highlight=False, markup=False)
            continue
        grid = table(f"{suite}: segments by status")
        grid.add_column("status")
        for locale in per_locale:
            grid.add_column(locale, justify="right")
        for col in shown:
            grid.add_row(
                col.replace("_", " "), *(str(n[col]) if n[col] else "·" for n in per_locale.values())
            )
        print_table(grid)
    if zero := [c for c in COVERAGE_COLUMNS if c not in shown]:
        out_console.print(f"no segment is {', '.join(zero)}", highlight=False, markup=False)


app.command("status")(status_command)


def _one_line(text: str) -> str:
    """A prompt's line breaks shown as ⏎, so each locale's prompt stays on one line."""
    return text.replace("\n", " ⏎ ")


def _print_glosses(root: Path | None, json: bool) -> None:
    catalog = load_catalog(project_at(root), eager=False)
    texts = glossed_texts(catalog, catalog.problems)
    warn_problems(catalog)
    lacking = [t for t in texts if t.state != "glossed"]
    if json:
        print_json(
            {
                "texts": [
                    {
                        "prompt": t.prompt,
                        "locale": t.locale,
                        "file": t.file,
                        "record": t.record,
                        "state": t.state,
                        "english": t.english,
                        "text": t.text,
                        "gloss": t.gloss,
                        "text_sha": t.text_sha,
                    }
                    for t in texts
                ],
                "needs_gloss": len(lacking),
            }
        )
        return
    by_prompt: dict[str, list[GlossedText]] = {}
    for t in texts:
        by_prompt.setdefault(t.prompt, []).append(t)
    for prompt, rows in by_prompt.items():
        where = rows[0].file.replace(f"/{rows[0].locale}/", "/<locale>/", 1)
        lines = [f"{prompt} ({where})", f"  en  {_one_line(rows[0].english)}"]
        for t in rows:
            if t.state == "glossed":
                lines.append(f"  {t.locale:<3} {_one_line(t.gloss or '')}")
            else:
                why = "no gloss" if t.state == "no gloss" else "gloss outdated (of an earlier text)"
                lines.append(f"  {t.locale:<3} [{why}] {_one_line(t.text)}  (text_sha {t.text_sha})")
        out_console.print("\n".join(lines) + "\n", highlight=False, markup=False, soft_wrap=True)
    say(
        f"{len(lacking)} of {len(texts)} translated prompt text(s) lack a current gloss"
        + (": " + ", ".join(f"{t.locale} {t.prompt}" for t in lacking) if lacking else "")
    )


@app.command("ledger")
def ledger_command(root: Root = None, json: JsonFlag = False) -> None:
    """What machine translation cost: per run, its target, outcome, requests and billed characters.

    Read from translations/ledger.jsonl, which every `polyprobe translate` run appends to
    (times in UTC). Replaces `polyprobe translate --ledger`."""
    print_ledger(project_at(root), json)


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
    done = sync(catalog, retire=retire_orphans_)
    for (suite_id, locale), segments in sorted(done.stale.items()):
        say(f"{locale}/{suite_id}: {len(segments)} stale")
    for key in sorted(done.retired.keys() | done.restored.keys()):
        gone, back = done.retired.get(key, []), done.restored.get(key, [])
        say(f"{key[1]}/{key[0]}: {len(gone)} orphan(s) retired, {len(back)} restored")
    translated = [
        (suite.id, locale)
        for suite in catalog.suites.values()
        for locale in suite.spec.locales
        if locale in catalog.locales and catalog.locales[locale].translated
    ]
    for suite_id, locale in [] if retire_orphans_ else translated:
        if found := orphans(catalog, suite_id, locale):
            say(
                f"{locale}/{suite_id}: {len(found)} orphan record(s) (no such segment, e.g. "
                f"{found[0]}): pass --retire-orphans to move them to {suite_id}.{RETIRED}.jsonl"
            )
    say(f"{sum(len(segments) for segments in done.stale.values())} translation(s) marked stale")


@app.command("repair")
def repair_command(
    locale: Annotated[str | None, typer.Option("--locale", help="Only this locale's store files.")] = None,
    suite: Annotated[
        Suite | None, typer.Option("--suite", help="Only this suite's store files.", callback=plain)
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would change; write nothing.")] = False,
    root: Root = None,
) -> None:
    """Make damaged store files whole: keep every good record, put every other line aside
    byte for byte in a sidecar file next to the store (never deleted)."""
    project = project_at(root, writes=True)
    repaired = 0
    for loc, sid in store_files(project, locale, suite):
        result = repair_store(project, loc, sid, dry_run=dry_run)
        rel = project.rel(result.path)
        if not result.needed:
            continue
        repaired += 1
        verb = "would keep" if dry_run else "kept"
        lines = [f"{rel}: {verb} {result.kept} record(s)"]
        for lineno, what in result.rewritten:
            lines.append(
                f"  line {lineno}: {what} ({'would be' if dry_run else ''} rewritten)".replace("( ", "(")
            )
        if result.sidecar is not None:
            side = project.rel(result.sidecar)
            put = "would put" if dry_run else "put"
            lines.append(f"  {put} {len(result.set_aside)} line(s) aside in {side}:")
            for n, bad in enumerate(result.set_aside, start=1):
                field = f" {bad.field}" if bad.field else ""
                lines.append(f"    {side} line {n} (was {bad.where}){field}: {bad.reason}")
        say("\n".join(lines))
    if not repaired:
        say("every store file is whole: nothing to repair")
    elif not dry_run:
        say(
            "repaired. Read the lines put aside, fix what is worth keeping, append it to the store and run "
            "`polyprobe translations repair` again; then `polyprobe catalog validate`."
        )

"""The DeepL side of a machine-translation run (toolkit/translation/machine.py): the account's
quota checked, the glossary made or reused, the texts sent in batches of at most
``batch_size`` (retries and faults: toolkit/translation/deepl_api.py), every attempt written to
the ledger, and each answered batch stored and saved before the next is sent."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import deepl

from toolkit.catalog.loader import Catalog
from toolkit.core.errors import PolyprobeError
from toolkit.store.model import utc_now
from toolkit.translation.deepl_api import DeepL, Failure, MachineTranslationFailed
from toolkit.translation.glossary import glossary_entries, glossary_name, glossary_prefix
from toolkit.translation.ledger import Ledger
from toolkit.translation.machine_interrupts import Interrupts
from toolkit.translation.machine_plan import Options, Report, Unit
from toolkit.translation.machine_writer import DraftWriter

log = logging.getLogger(__name__)

CONTEXT = (
    "Sentence templates for a dataset that measures social bias. Each <x/> tag stands for a word "
    "that names a group of people (an adjective such as 'Muslim'); keep every tag exactly once, "
    "next to the noun it describes."
)


def server_host(server_url: str | None) -> str:
    """The DeepL server a run talks to, as the ledger and the engine record name it."""
    return urlparse(server_url).netloc if server_url else "api.deepl.com"


def send(
    client: DeepL,
    writer: DraftWriter,
    ledger: Ledger,
    units: list[Unit],
    options: Options,
    target: str,
    server: str | None,
    on_batch: Callable[[int, int], None] | None,
) -> None:
    """Send the units in batches (glossary first, superseded glossaries pruned after), each batch's
    results stored and saved before the next is sent; Ctrl-C waits for the batch being stored."""
    reader = writer.reader
    formality = reader.catalog.locales[reader.locale].deepl_formality
    with Interrupts() as interrupts:
        _check_usage(client, writer.report)
        glossary, superseded = _glossary(
            client, reader.catalog, reader.suite.id, reader.locale, target, units, options
        )
        if glossary is not None:
            ledger.append(
                {
                    "event": "glossary",
                    "at": utc_now(),
                    "glossary": glossary.glossary_id,
                    "entries": glossary.entry_count,
                }
            )
        engine = {
            "service": "deepl",
            "server": server_host(server),
            "target": target,
            "formality": options.formality if formality else "n/a",
            "model_type": options.model_type or "default",
            "glossary": glossary.glossary_id if glossary else "",
            "date": utc_now()[:10],
        }
        kwargs = _request_options(target, options, formality, glossary)
        batches = [units[i : i + options.batch_size] for i in range(0, len(units), options.batch_size)]
        for index, batch in enumerate(batches, start=1):
            results, ok = _request(client, batch, index, kwargs, ledger, writer.report, interrupts)
            with interrupts.recording():
                ledger.append(ok)
                if len(results) != len(batch):
                    raise MachineTranslationFailed(
                        f"DeepL answered {len(results)} texts for {len(batch)} sent ({reader.locale}/{reader.suite.id})"
                    )
                writer.store(batch, results, engine)
                writer.store_file.save()
            if on_batch:
                on_batch(index, len(batches))
        _prune(client, superseded, ledger, writer.report)


def _request_options(
    target: str, options: Options, formality: bool, glossary: deepl.GlossaryInfo | None
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "source_lang": "EN",
        "target_lang": target,
        "tag_handling": "xml",
        "context": CONTEXT,
    }
    if formality and options.formality != "default":
        kwargs["formality"] = options.formality
    if options.model_type is not None:
        kwargs["model_type"] = options.model_type
    if glossary is not None:
        kwargs["glossary"] = glossary
    return kwargs


def _check_usage(client: DeepL, report: Report) -> None:
    """Say before sending when the account's quota will not last the run (it then stops cleanly)."""
    usage = client.call("reading the account's usage", lambda t: t.get_usage())
    chars = usage.character
    left = (chars.limit or 0) - (chars.count or 0)
    if chars.valid and chars.limit and left < report.characters:
        report.notes.append(
            f"the account has {max(left, 0)} characters left this period and the run "
            f"needs up to {report.characters}: it will stop when the quota is used up (everything answered is kept)"
        )


def _glossary(
    client: DeepL,
    catalog: Catalog,
    suite_id: str,
    locale: str,
    target: str,
    units: list[Unit],
    options: Options,
) -> tuple[deepl.GlossaryInfo | None, list[deepl.GlossaryInfo]]:
    """The glossary for these texts (reused when one with the same entries exists) and the
    glossaries of this suite and locale it supersedes."""
    if not options.use_glossary:
        return None, []
    entries = glossary_entries(catalog, catalog.suite(suite_id), locale, [u.protected.xml for u in units])
    if not entries:
        return None, []
    lang = target.split("-")[0].lower()
    languages = client.call("reading glossary languages", lambda t: t.get_glossary_languages())
    if ("en", lang) not in {(p.source_lang.lower(), p.target_lang.lower()) for p in languages}:
        log.info("DeepL has no en->%s glossaries: group terms are left to the engine", lang)
        return None, []
    name = glossary_name(suite_id, locale, entries)
    listed = client.call("listing glossaries", lambda t: t.list_glossaries())
    info = next((g for g in listed if g.name == name and g.ready), None)
    if info is None:
        info = client.call(
            "creating a glossary", lambda t: t.create_glossary(name, "EN", lang.upper(), entries)
        )
    prefix = glossary_prefix(suite_id, locale)
    superseded = [g for g in listed if g.name.startswith(prefix) and g.glossary_id != info.glossary_id]
    return info, superseded


def delete_glossary(client: DeepL, glossary: deepl.GlossaryInfo) -> bool:
    """Delete one glossary; False when it was already gone."""

    def delete(t: deepl.Translator) -> bool:
        try:
            t.delete_glossary(glossary)
        except deepl.GlossaryNotFoundException:
            return False
        return True

    return client.call(f"deleting glossary {glossary.glossary_id}", delete)


def _prune(client: DeepL, superseded: list[deepl.GlossaryInfo], ledger: Ledger, report: Report) -> None:
    """Delete the glossaries this run superseded; a failure here is a note, not a failed run."""
    for glossary in superseded:
        try:
            deleted = delete_glossary(client, glossary)
        except PolyprobeError as exc:
            report.notes.append(f"a superseded glossary was not deleted: {exc}")
            return
        ledger.append(
            {"event": "glossary-deleted", "at": utc_now(), "glossary": glossary.glossary_id, "found": deleted}
        )


def _request(
    client: DeepL,
    batch: list[Unit],
    index: int,
    kwargs: dict[str, Any],
    ledger: Ledger,
    report: Report,
    interrupts: Interrupts,
) -> tuple[list[Any], dict[str, Any]]:
    """Send one batch; every failed attempt goes to the ledger as it happens, an interrupted one
    too. Returns the answers and the ledger line of the answered attempt (written by the caller
    together with the store)."""
    texts = [u.protected.xml for u in batch]
    segments = [s.id for u in batch for s in u.segments]
    characters = sum(len(t) for t in texts)
    attempts = 0

    def line(attempt: int, outcome: str, billed: int) -> dict[str, Any]:
        return {
            "event": "request",
            "at": utc_now(),
            "request": index,
            "attempt": attempt,
            "segments": segments,
            "characters": characters,
            "outcome": outcome,
            "billed": billed,
        }

    def failed(failure: Failure, attempt: int) -> None:
        nonlocal attempts
        attempts = attempt
        report.attempts += 1
        ledger.append(line(attempt, failure.outcome, 0))

    try:
        answer = client.call(
            f"translating request {index}",
            lambda t: interrupts.answered(t.translate_text(texts, **kwargs)),
            failed,
        )
    except KeyboardInterrupt:
        report.attempts += 1
        entry = line(attempts + 1, "interrupted", 0)
        ledger.append({**entry, "note": "no answer was received; DeepL may still bill it"})
        raise
    results = answer if isinstance(answer, list) else [answer]
    billed = sum(int(getattr(r, "billed_characters", 0) or 0) for r in results)
    report.attempts += 1
    report.requests += 1
    report.billed += billed
    return results, line(attempts + 1, "ok", billed)

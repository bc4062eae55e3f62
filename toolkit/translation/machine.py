"""Machine translation with DeepL (official `deepl` SDK): drafts a reviewer can use, costing as
little as possible and never losing work.

- The store is the translation memory: only segments without a current translation (none, or
  stale) are sent, and identical source texts are sent once. A segment stored as needing a human
  edit is sent again only on request (``retry_rejected``).
- Template code travels as XML tags. A group slot comes back as a tag and is resolved into the
  target locale's own slot expression (toolkit/translation/slots.py, templates/_grammar/<locale>.slots.yaml);
  English-only macros around it are sent as the English they stand for.
- Nothing stored can break a render: every answer passes the store-entry gate (the checks
  ``render`` applies, and a render for every group and variant of the suite) before it is
  stored. One that passes is a current ``machine`` draft; one that does not, or whose slot
  could not be resolved with confidence, is stored as ``needs_edit`` with the raw answer and the
  reason, is never rendered, and is offered to reviewers.
- Up to 50 texts per request; every answered request is written to the store at once (atomic
  rename) and to the ledger; Ctrl-C stops a request in flight but waits for an answered one to be
  recorded. Faults are handled in one place (toolkit/translation/deepl_api.py): 429/5xx/dropped connections
  retried with backoff and a budget, 456 stops cleanly with its own exit code.
- The key comes from DEEPL_AUTH_KEY and goes to the SDK only: never to a file, log or message.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import threading
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any
from urllib.parse import urlparse

import deepl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.locales import Locale
from toolkit.catalog.templates import Segment
from toolkit.core.errors import InputError, PolyprobeError
from toolkit.core.interrupts import interrupt_signals, interruption
from toolkit.core.text import BIDI_CONTROLS
from toolkit.render.suites import kind_of
from toolkit.store.files import StoreFile, load_store_strict, store_lock
from toolkit.store.model import NEEDS_REWORDING, Event, Status, utc_now
from toolkit.store.rules import is_current
from toolkit.translation.answers import AnswerReader, slot_rules, source_slots_of
from toolkit.translation.deepl_api import (
    KEY_ENV,
    SERVER_ENV,
    DeepL,
    Failure,
    MachineTranslationFailed,
    QuotaExhausted,
    RetryPolicy,
)
from toolkit.translation.glossary import glossary_entries, glossary_name, glossary_prefix
from toolkit.translation.ledger import Ledger, ledger_path
from toolkit.translation.placeholders import Protected, SourceSlots, Unsendable, protect
from toolkit.translation.slot_rules import SLOTS_SUFFIX

__all__ = ["KEY_ENV", "SERVER_ENV", "MachineTranslationFailed", "QuotaExhausted"]

log = logging.getLogger(__name__)

MAX_TEXTS = 50
MODEL_TYPES = ("quality_optimized", "prefer_quality_optimized", "latency_optimized")
NEEDS_EDIT: Status = "needs_edit"
RETRIED_STATUSES = frozenset({"needs_edit", "rejected"})
CONTEXT = (
    "Sentence templates for a dataset that measures social bias. Each <x/> tag stands for a word "
    "that names a group of people (an adjective such as 'Muslim'); keep every tag exactly once, "
    "next to the noun it describes."
)


@dataclass(frozen=True)
class Options:
    dry_run: bool = False
    max_chars: int | None = None
    formality: str = "default"
    model_type: str | None = None
    batch_size: int = MAX_TEXTS
    retries: int = 5
    retry_budget: int = 20
    backoff: float = 1.0
    timeout: float = 30.0
    use_glossary: bool = True
    retry_rejected: bool = False
    """Send again what is stored as needing a human edit (or rejected)."""


@dataclass
class Report:
    locale: str
    suite: str
    pending: int = 0
    unique_texts: int = 0
    characters: int = 0
    requests: int = 0
    attempts: int = 0
    billed: int = 0
    translated: int = 0
    needs_edit: int = 0
    needs_rewording: int = 0
    """Of needs_edit: right but in a word order the suite cannot use (honest: completion not last)."""
    unsendable: int = 0
    remaining: int = 0
    outcome: str = "nothing to do"
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Unit:
    """One unique source text and the segments that share it."""

    protected: Protected
    segments: tuple[Segment, ...]

    @property
    def characters(self) -> int:
        return len(self.protected.xml)


@dataclass
class Plan:
    units: list[Unit]
    deferred: int = 0
    """Segments left for a later run by ``max_chars``."""
    unsendable: dict[str, str] = field(default_factory=dict)
    """Segment id -> why machine translation cannot carry its source."""


def pending(store: StoreFile, segments: list[Segment], retry_rejected: bool = False) -> list[Segment]:
    """Segments with no current translation: none at all, or one made for another source; with
    ``retry_rejected``, also those that need a human edit or were rejected."""
    out = []
    for seg in segments:
        rec = store.records.get(seg.id)
        if not is_current(rec, seg.source_sha) or (retry_rejected and rec.status in RETRIED_STATUSES):
            out.append(seg)
    return out


def plan(segments: list[Segment], max_chars: int | None, slots: SourceSlots | None = None) -> Plan:
    """Unique texts in segment order, cut before ``max_chars`` would be exceeded; sources that
    use English-only grammar in a way no tag can carry are set aside, never sent."""
    by_text: dict[str, list[Segment]] = {}
    for seg in segments:
        by_text.setdefault(seg.source, []).append(seg)
    out = Plan(units=[])
    used = 0
    for text, segs in by_text.items():
        try:
            unit = Unit(protect(text, slots), tuple(segs))
        except Unsendable as exc:
            out.unsendable.update({s.id: str(exc) for s in segs})
            continue
        if max_chars is not None and used + unit.characters > max_chars:
            out.deferred += len(segs)
            continue
        used += unit.characters
        out.units.append(unit)
    return out


def _target(catalog: Catalog, locale: str) -> str:
    loc = catalog.locales[locale]
    if loc.source:
        raise InputError(f"{locale} is the source locale: there is nothing to translate into it")
    if loc.published_only:
        raise InputError(
            f"{locale} is a published-only locale (rows only from a published dataset imported as published): it has no translations"
        )
    if not loc.deepl_target:
        raise InputError(
            f"DeepL has no target for {loc.name} ({locale}): its segments go to human translation only "
            "(write drafts with `polyprobe translations draft`, then review them)"
        )
    return loc.deepl_target


def _server_host(server_url: str | None) -> str:
    return urlparse(server_url).netloc if server_url else "api.deepl.com"


class _Interrupts:
    """Ctrl-C (or the command's SIGTERM) stops a request in flight at once (it is recorded as
    interrupted), but waits while an answered batch is written to the ledger and the store, so
    nothing answered is lost."""

    def __init__(self) -> None:
        self.deferring = False
        self.caught: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in interrupt_signals()}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.deferring:
            self.caught.append(signum)
        else:
            raise interruption([signum])

    def answered(self, value: Any) -> Any:
        """Called the moment an answer is in hand: from now on Ctrl-C waits."""
        self.deferring = True
        return value

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.caught:
            raise interruption(self.caught)


def translate(
    catalog: Catalog,
    suite_id: str,
    locale: str,
    options: Options,
    *,
    auth_key: str | None = None,
    server_url: str | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> Report:
    """Translate what is missing of one suite into one locale. See the module docstring."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    target = _target(catalog, locale)
    loc = catalog.locales[locale]
    if options.model_type is not None and options.model_type not in MODEL_TYPES:
        raise InputError(f"unknown model type {options.model_type!r}; known: {', '.join(MODEL_TYPES)}")
    report = Report(locale=locale, suite=suite_id)
    slots = source_slots_of(catalog)
    rules = slot_rules(catalog, locale)
    with store_lock(catalog.project, locale, suite_id):
        store = load_store_strict(catalog.project, locale, suite_id)  # fresh, under the lock; refuses damage
        published = kind_of(suite_id).published_segments(catalog.project, suite, locale)
        wanted = [seg for seg in suite.segments.values() if seg.id not in published]
        todo = pending(store, wanted, options.retry_rejected)
        work = plan(todo, options.max_chars, slots)
        units = work.units
        _describe(report, todo, work, options, loc, target)
        if published:
            report.notes.append(
                f"{len(published)} segment(s) not sent: their items have a published {loc.name} "
                "translation (`import bbq`), which the release uses as published"
            )
        if rules is None and any(t.group for u in units for t in u.protected.tags):
            raise InputError(
                f"{locale} has no slot rules (templates/_grammar/{locale}{SLOTS_SUFFIX}): "
                "a group slot could not be turned into this locale's slot expression, so nothing is sent"
            )
        planned_requests = math.ceil(len(units) / options.batch_size) if units else 0
        if options.dry_run:
            report.requests = planned_requests
            report.outcome = "dry run"
            return report
        if not units:
            return report
        key = auth_key or os.environ.get(KEY_ENV)
        if not key:
            raise InputError(f"set {KEY_ENV} to your DeepL API key (free keys end in ':fx')")
        server = server_url or os.environ.get(SERVER_ENV) or None
        policy = RetryPolicy(retries=options.retries, budget=options.retry_budget, backoff=options.backoff)
        client = DeepL(key, server, where=f"{locale}/{suite_id}", policy=policy, timeout=options.timeout)
        del key
        ledger = Ledger(ledger_path(catalog.project), run=uuid.uuid4().hex[:12])
        ledger.append(
            {
                "event": "start",
                "at": utc_now(),
                "locale": locale,
                "suite": suite_id,
                "server": _server_host(server),
                "pending": len(todo),
                "unique_texts": len(units),
                "characters": report.characters,
            }
        )
        writer = _Writer(store, AnswerReader(catalog, suite, locale), report)
        outcome = "complete"
        try:
            _send(client, writer, ledger, units, options, target, server, on_batch)
        except QuotaExhausted:
            outcome = "quota exhausted"
            raise
        except BaseException as exc:
            outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            raise
        finally:
            done = report.translated + report.needs_edit
            report.remaining += len(todo) - work.deferred - len(work.unsendable) - done
            report.outcome = outcome
            ledger.append(
                {
                    "event": "end",
                    "at": utc_now(),
                    "outcome": outcome,
                    "translated": report.translated,
                    "needs_edit": report.needs_edit,
                    "remaining": report.remaining,
                }
            )
            client.close()
    return report


def _send(
    client: DeepL,
    writer: _Writer,
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
    with _Interrupts() as interrupts:
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
            "server": _server_host(server),
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


def _describe(
    report: Report, todo: list[Segment], work: Plan, options: Options, loc: Locale, target: str
) -> None:
    """What a run will do: counts, and notes on what it leaves out or cannot honour."""
    units = work.units
    report.pending = len(todo)
    report.unique_texts = len(units)
    report.characters = sum(u.characters for u in units)
    report.remaining = work.deferred + len(work.unsendable)
    report.unsendable = len(work.unsendable)
    if options.max_chars is not None and work.deferred:
        report.notes.append(
            f"--max-chars {options.max_chars}: {work.deferred} segment(s) left for a later run"
        )
    if work.unsendable:
        first = sorted(work.unsendable.items())[0]
        report.notes.append(
            f"{len(work.unsendable)} segment(s) cannot be machine-translated and were not sent "
            f"(translate them by hand), e.g. {first[0]}: {first[1]}"
        )
    if options.formality != "default" and not loc.deepl_formality:
        report.notes.append(
            f"--formality {options.formality}: DeepL offers no formality for {loc.name} ({target}); "
            "sent without it"
        )
        log.warning("--formality is not supported for %s; sent without it", loc.code)


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
    interrupts: _Interrupts,
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


@dataclass
class _Writer:
    """Turns answers into store entries (toolkit/translation/answers.py reads them): a machine
    draft, or a record that needs a human edit, with why (and a tag when only its word order
    needs rewording, so review offers it first)."""

    store_file: StoreFile
    reader: AnswerReader
    report: Report

    def store(self, batch: list[Unit], results: list[Any], engine: dict[str, str]) -> None:
        now = utc_now()
        answers: list[tuple[Segment, Protected, str]] = []
        engines: list[dict[str, str]] = []
        for unit, result in zip(batch, results, strict=True):
            raw = str(result.text)
            used = getattr(result, "model_type_used", None)
            engine_here = {**engine, "model_type_used": str(used)} if used else engine
            for seg in unit.segments:
                answers.append((seg, unit.protected, raw))
                engines.append(engine_here)
        for (seg, _, raw), engine_here, read in zip(answers, engines, self.reader.read(answers), strict=True):
            status: Status = NEEDS_EDIT if read.reasons else "machine"
            stored = _storable(raw) if read.reasons else read.text
            event = Event(
                at=now,
                event="machine",
                by="deepl",
                status=status,
                text=stored,
                source_sha=seg.source_sha,
                engine=engine_here,
                tags=(NEEDS_REWORDING,) if read.rewording else None,
                note="; ".join(read.reasons) or None,
            )
            self.store_file.put(seg.id, seg.source, stored, "deepl", status, event, engine=engine_here)
            if not read.reasons:
                self.report.translated += 1
                continue
            self.report.needs_edit += 1
            if read.rewording:
                self.report.needs_rewording += 1


def _storable(raw: str) -> str:
    """The raw answer as the store can hold it (NFC, no bidi or control characters, trimmed)."""
    text = unicodedata.normalize("NFC", raw)
    text = "".join(
        c for c in text if c not in BIDI_CONTROLS and (unicodedata.category(c) != "Cc" or c in "\n\t")
    )
    return text.strip() or "(DeepL answered an empty text)"

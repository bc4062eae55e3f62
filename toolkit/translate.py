"""Machine translation with DeepL (official `deepl` SDK), costing as little as possible and
never losing work.

- The store is the translation memory: only segments without a current translation (none, or
  stale) are sent, and identical source texts are sent once.
- Template code is protected as XML tags and checked on the way back; a translation that loses
  or invents a slot is stored as `rejected` with the reason, never used.
- Up to 50 texts per request; every answered request is written to the store at once (atomic
  rename) and to the ledger, so a killed run loses nothing that was answered.
- 429, 5xx and dropped connections are retried with exponential backoff by this module (the
  SDK's own retries are switched off so every attempt is counted in the ledger); 456 (quota
  exhausted) stops cleanly.
- The key comes from DEEPL_AUTH_KEY and goes to the SDK only: never to a file, log or message.
"""

from __future__ import annotations

import logging
import math
import os
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import deepl
import deepl.http_client

from toolkit.catalog import Catalog
from toolkit.errors import InputError, PolyprobeError
from toolkit.gate import gate
from toolkit.glossary import glossary_entries, glossary_name
from toolkit.ledger import Ledger, ledger_path
from toolkit.placeholders import PlaceholderError, Protected, protect, restore
from toolkit.store import Event, Status, StoreFile, load_store_strict, store_lock, utc_now
from toolkit.templates import Segment

log = logging.getLogger(__name__)

KEY_ENV = "DEEPL_AUTH_KEY"
SERVER_ENV = "DEEPL_SERVER_URL"
MAX_TEXTS = 50
CONTEXT = (
    "Sentence templates for a dataset that measures social bias. Each <x/> tag stands for a word "
    "that names a group of people; keep every tag exactly once."
)


class QuotaExhausted(PolyprobeError):
    """DeepL answered 456: the billing period's quota is used up."""


class MachineTranslationFailed(PolyprobeError):
    """DeepL failed in a way retrying did not fix (or must not fix, e.g. a refused key)."""


@dataclass(frozen=True)
class Options:
    dry_run: bool = False
    max_chars: int | None = None
    formality: str = "default"
    batch_size: int = MAX_TEXTS
    retries: int = 5
    backoff: float = 1.0
    timeout: float = 30.0
    use_glossary: bool = True


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
    rejected: int = 0
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


def pending(store: StoreFile, segments: list[Segment]) -> list[Segment]:
    """Segments with no current translation: none at all, or one made for another source."""
    out = []
    for seg in segments:
        rec = store.records.get(seg.id)
        if rec is None or rec.source_sha != seg.source_sha or rec.status == "stale":
            out.append(seg)
    return out


def plan(segments: list[Segment], max_chars: int | None) -> tuple[list[Unit], int]:
    """Unique texts in segment order, cut before ``max_chars`` would be exceeded."""
    by_text: dict[str, list[Segment]] = {}
    for seg in segments:
        by_text.setdefault(seg.source, []).append(seg)
    units: list[Unit] = []
    used = 0
    skipped = 0
    for text, segs in by_text.items():
        unit = Unit(protect(text), tuple(segs))
        if max_chars is not None and used + unit.characters > max_chars:
            skipped += len(segs)
            continue
        used += unit.characters
        units.append(unit)
    return units, skipped


def _target(catalog: Catalog, locale: str) -> str:
    loc = catalog.locales[locale]
    if loc.source:
        raise InputError(f"{locale} is the source locale: there is nothing to translate into it")
    if not loc.deepl_target:
        raise InputError(
            f"DeepL has no target for {loc.name} ({locale}): its segments go to human translation only "
            "(write drafts with `polyprobe translations draft`, then review them)"
        )
    return loc.deepl_target


def _server_host(server_url: str | None) -> str:
    return urlparse(server_url).netloc if server_url else "api.deepl.com"


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
    report = Report(locale=locale, suite=suite_id)
    with store_lock(catalog.project, locale, suite_id):
        store = load_store_strict(catalog.project, locale, suite_id)  # fresh, under the lock; refuses damage
        todo = pending(store, list(suite.segments.values()))
        units, skipped = plan(todo, options.max_chars)
        report.pending = len(todo)
        report.unique_texts = len(units)
        report.characters = sum(u.characters for u in units)
        report.remaining = skipped
        planned_requests = math.ceil(len(units) / options.batch_size) if units else 0
        if options.max_chars is not None and skipped:
            report.notes.append(f"--max-chars {options.max_chars}: {skipped} segment(s) left for a later run")
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
        deepl.http_client.max_network_retries = (
            0  # this module retries, so that the ledger sees every attempt
        )
        deepl.http_client.min_connection_timeout = options.timeout
        translator = deepl.Translator(key, server_url=server)
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
        outcome = "complete"
        try:
            glossary = _glossary(
                translator, catalog, suite_id, locale, target, units, options, ledger, report
            )
            engine = {
                "service": "deepl",
                "server": _server_host(server),
                "target": target,
                "formality": options.formality if catalog.locales[locale].deepl_formality else "n/a",
                "glossary": glossary.glossary_id if glossary else "",
                "date": utc_now()[:10],
            }
            batches = [units[i : i + options.batch_size] for i in range(0, len(units), options.batch_size)]
            for index, batch in enumerate(batches, start=1):
                results = _request(
                    translator, batch, index, target, catalog, locale, options, glossary, ledger, report
                )
                _store_results(catalog, suite_id, locale, store, batch, results, engine, report)
                store.save()
                if on_batch:
                    on_batch(index, len(batches))
        except QuotaExhausted:
            outcome = "quota exhausted"
            raise
        except BaseException as exc:
            outcome = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            raise
        finally:
            done = report.translated + report.rejected
            report.remaining += len(todo) - skipped - done
            report.outcome = outcome
            ledger.append(
                {
                    "event": "end",
                    "at": utc_now(),
                    "outcome": outcome,
                    "translated": report.translated,
                    "rejected": report.rejected,
                    "remaining": report.remaining,
                }
            )
            translator.close()
    return report


def _glossary(
    translator: deepl.Translator,
    catalog: Catalog,
    suite_id: str,
    locale: str,
    target: str,
    units: list[Unit],
    options: Options,
    ledger: Ledger,
    report: Report,
) -> deepl.GlossaryInfo | None:
    if not options.use_glossary:
        return None
    entries = glossary_entries(catalog, locale, [u.protected.xml for u in units])
    if not entries:
        return None
    lang = target.split("-")[0].lower()
    pairs = {(p.source_lang.lower(), p.target_lang.lower()) for p in translator.get_glossary_languages()}
    if ("en", lang) not in pairs:
        report.notes.append(f"DeepL has no en->{lang} glossaries: group terms are left to the engine")
        return None
    name = glossary_name(suite_id, locale, entries)
    existing = next((g for g in translator.list_glossaries() if g.name == name and g.ready), None)
    info = existing or translator.create_glossary(name, "EN", lang.upper(), entries)
    ledger.append(
        {
            "event": "glossary",
            "at": utc_now(),
            "glossary": info.glossary_id,
            "entries": len(entries),
            "reused": bool(existing),
        }
    )
    return info


def _request(
    translator: deepl.Translator,
    batch: list[Unit],
    index: int,
    target: str,
    catalog: Catalog,
    locale: str,
    options: Options,
    glossary: deepl.GlossaryInfo | None,
    ledger: Ledger,
    report: Report,
) -> list[Any]:
    kwargs: dict[str, Any] = {
        "source_lang": "EN",
        "target_lang": target,
        "tag_handling": "xml",
        "context": CONTEXT,
    }
    if catalog.locales[locale].deepl_formality and options.formality != "default":
        kwargs["formality"] = options.formality
    if glossary is not None:
        kwargs["glossary"] = glossary
    texts = [u.protected.xml for u in batch]
    segments = [s.id for u in batch for s in u.segments]
    characters = sum(len(t) for t in texts)
    for attempt in range(1, options.retries + 2):
        report.attempts += 1
        entry = {
            "event": "request",
            "at": utc_now(),
            "request": index,
            "attempt": attempt,
            "segments": segments,
            "characters": characters,
        }
        try:
            results = translator.translate_text(texts, **kwargs)
        except deepl.QuotaExceededException:
            ledger.append({**entry, "outcome": "456 quota exhausted", "billed": 0})
            raise QuotaExhausted(
                f"DeepL quota exhausted: {report.translated + report.rejected} segment(s) were stored before it; "
                "run the same command again when the quota resets — only what is missing will be sent"
            ) from None
        except deepl.AuthorizationException:
            ledger.append({**entry, "outcome": "403 key refused", "billed": 0})
            raise MachineTranslationFailed(f"DeepL refused the key (403): check {KEY_ENV}") from None
        except deepl.DeepLException as exc:
            status = getattr(exc, "http_status_code", None)
            why = str(status) if status else "connection failed"
            retry = bool(getattr(exc, "should_retry", False)) or isinstance(exc, deepl.ConnectionException)
            ledger.append({**entry, "outcome": why, "billed": 0})
            if not retry or attempt > options.retries:
                raise MachineTranslationFailed(
                    f"DeepL request {index} failed after {attempt} attempt(s): {why}: {type(exc).__name__}"
                ) from None
            delay = options.backoff * 2 ** (attempt - 1) * (1 + random.random() / 4)
            log.info("DeepL request %s: %s, retrying in %.2fs", index, why, delay)
            time.sleep(delay)
            continue
        results = results if isinstance(results, list) else [results]
        billed = sum(int(getattr(r, "billed_characters", 0) or 0) for r in results)
        ledger.append({**entry, "outcome": "ok", "billed": billed})
        report.requests += 1
        report.billed += billed
        if len(results) != len(texts):
            raise MachineTranslationFailed(f"DeepL answered {len(results)} texts for {len(texts)} sent")
        return results
    raise AssertionError("unreachable")  # pragma: no cover


def _store_results(
    catalog: Catalog,
    suite_id: str,
    locale: str,
    store: StoreFile,
    batch: list[Unit],
    results: list[Any],
    engine: dict[str, str],
    report: Report,
) -> None:
    now = utc_now()
    for unit, result in zip(batch, results, strict=True):
        raw = str(result.text)
        try:
            text = restore(raw, unit.protected)
            verdicts = gate(catalog, suite_id, locale, {seg.id: text for seg in unit.segments})
        except PlaceholderError as exc:
            text, verdicts = raw, {seg.id: [f"placeholders: {exc}"] for seg in unit.segments}
        for seg in unit.segments:
            reasons = verdicts[seg.id]
            status: Status = "rejected" if reasons else "machine"
            event = Event(
                at=now,
                event="machine",
                by="deepl",
                status=status,
                text=text,
                source_sha=seg.source_sha,
                engine=engine,
                note="; ".join(reasons) or None,
            )
            store.put(seg.id, seg.source, text, "deepl", status, event, engine=engine)
            if reasons:
                report.rejected += 1
            else:
                report.translated += 1

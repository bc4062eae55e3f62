"""Marking translations stale when their English source changed.

A record whose ``source_sha`` is not today's source hash is stale whatever its status says;
`translations sync` writes that down (status `stale`, with a history event naming the new
hash), so the store itself says what needs redoing. Every store it may touch is locked and
read strictly first: one damaged store means nothing is written anywhere."""

from __future__ import annotations

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Suite
from toolkit.store.files import StoreFile, writing_stores
from toolkit.store.model import Event, Translation, utc_now
from toolkit.store.rules import is_current


def mark_stale(store: StoreFile, suite: Suite, now: str) -> list[str]:
    """Mark the store's records whose English source changed; return their segment ids."""
    changed: list[str] = []
    for segment_id, record in sorted(store.records.items()):
        segment = suite.segments.get(segment_id)
        if segment is None or record.status == "stale" or is_current(record, segment.source_sha):
            continue
        event = Event(
            at=now,
            event="stale",
            by="polyprobe",
            status="stale",
            source_sha=segment.source_sha,
            note=f"English source changed (was {record.source_sha[:12]})",
        )
        store.records[segment_id] = record.with_event(event, status="stale")
        changed.append(segment_id)
    return changed


def sync(catalog: Catalog) -> dict[tuple[str, str], list[str]]:
    """Mark stale records in every store of the catalog's suites; (suite, locale) -> segments."""
    pairs = [
        (locale, suite.id)
        for suite in catalog.suites.values()
        for locale in suite.spec.locales
        if locale in catalog.locales and catalog.locales[locale].translated
    ]
    now = utc_now()
    changed: dict[tuple[str, str], list[str]] = {}
    with writing_stores(catalog.project, pairs) as stores:
        for (locale, suite_id), store in stores.items():
            marked = mark_stale(store, catalog.suites[suite_id], now)
            if marked:
                changed[(suite_id, locale)] = marked
    for (locale, suite_id), store in stores.items():
        catalog.stores[(suite_id, locale)] = store
    catalog.rendered.clear()
    return changed


RETIRED = "retired"
"""Orphan records move to translations/<locale>/<suite>.retired.jsonl (kept, never deleted)."""


def orphans(catalog: Catalog, suite_id: str, locale: str) -> list[str]:
    """Store records whose segment the suite no longer has (e.g. the BBQ items a new
    ``--per-category`` left out): they make the store fail validation until retired."""
    suite = catalog.suite(suite_id)
    return sorted(s for s in catalog.store(suite_id, locale).records if s not in suite.segments)


def _merged(earlier: Translation | None, record: Translation) -> Translation:
    """``record`` to retire, keeping a record retired earlier for the same segment (retired, then
    translated again while it was away, and retired again): one history, the earlier record's
    events first, then those of ``record``, whose text and status stay current. Nothing is
    repeated when ``record`` grew out of the earlier one (its history starts with it)."""
    if earlier is None or record.history[: len(earlier.history)] == earlier.history:
        return record
    return record.model_copy(update={"history": (*earlier.history, *record.history)})


def retire_orphans(catalog: Catalog, suite_id: str, locale: str) -> tuple[list[str], list[str]]:
    """Move orphan records into the suite's retired file, each with a ``retired`` event, and bring
    back retired records whose segment exists again (``restored``), both files under their locks.
    Returns (retired, restored) segment ids."""
    suite = catalog.suite(suite_id)
    now = utc_now()
    retired_key = (locale, f"{suite_id}.{RETIRED}")
    with writing_stores(catalog.project, [(locale, suite_id), retired_key]) as stores:
        store, retired = stores[(locale, suite_id)], stores[retired_key]
        gone = sorted(s for s in store.records if s not in suite.segments)
        back = sorted(s for s in retired.records if s in suite.segments and s not in store.records)
        # every record stays in at least one of the two files whenever a write is cut short:
        # the retired file is saved before the store loses its orphans, and the store before
        # the retired file loses what came back
        for sid in gone:
            event = Event(
                at=now, event=RETIRED, by="polyprobe", note="the suite has no such segment (orphan)"
            )
            retired.records[sid] = _merged(retired.records.get(sid), store.records[sid]).with_event(event)
        retired.save()
        for sid in gone:
            del store.records[sid]
        for sid in back:
            event = Event(at=now, event="restored", by="polyprobe", note="the segment exists again")
            store.records[sid] = retired.records[sid].with_event(event)
        store.save()
        for sid in back:
            del retired.records[sid]
    catalog.stores[(suite_id, locale)] = store
    catalog.rendered.clear()
    return gone, back

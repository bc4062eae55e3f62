"""Marking translations stale when their English source changed.

A record whose ``source_sha`` is not today's source hash is stale whatever its status says;
`translations sync` writes that down (status `stale`, with a history event naming the new
hash), so the store itself says what needs redoing. Every store it may touch is locked and
read strictly first: one damaged store means nothing is written anywhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

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


RETIRED: Final = "retired"
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


def _retire_first(
    store: StoreFile, retired: StoreFile, suite: Suite, now: str
) -> tuple[list[str], list[str]]:
    """Copy the store's orphans into the retired file, each with a ``retired`` event; return
    (retired, restored) segment ids. The caller saves the retired file, then calls
    ``_retire_then``; every record stays in at least one of the two files whenever a write is
    cut short: the retired file is saved before the store loses its orphans, and the store before
    the retired file loses what came back."""
    gone = sorted(s for s in store.records if s not in suite.segments)
    back = sorted(s for s in retired.records if s in suite.segments and s not in store.records)
    for sid in gone:
        event = Event(at=now, event=RETIRED, by="polyprobe", note="the suite has no such segment (orphan)")
        retired.records[sid] = _merged(retired.records.get(sid), store.records[sid]).with_event(event)
    return gone, back


def _retire_then(store: StoreFile, retired: StoreFile, gone: list[str], back: list[str], now: str) -> None:
    """The store loses its orphans and gets back what returned (then saved by the caller)."""
    for sid in gone:
        del store.records[sid]
    for sid in back:
        event = Event(at=now, event="restored", by="polyprobe", note="the segment exists again")
        store.records[sid] = retired.records[sid].with_event(event)


def retired_key(locale: str, suite_id: str) -> tuple[str, str]:
    """The (locale, store name) of a suite's retired records."""
    return (locale, f"{suite_id}.{RETIRED}")


def retire_orphans(catalog: Catalog, suite_id: str, locale: str) -> tuple[list[str], list[str]]:
    """Move orphan records into the suite's retired file, each with a ``retired`` event, and bring
    back retired records whose segment exists again (``restored``), both files under their locks.
    Returns (retired, restored) segment ids."""
    now = utc_now()
    key = retired_key(locale, suite_id)
    with writing_stores(catalog.project, [(locale, suite_id), key]) as stores:
        store, retired = stores[(locale, suite_id)], stores[key]
        gone, back = _retire_first(store, retired, catalog.suite(suite_id), now)
        retired.save()
        _retire_then(store, retired, gone, back, now)
        store.save()
        for sid in back:
            del retired.records[sid]
    catalog.stores[(suite_id, locale)] = store
    catalog.rendered.clear()
    return gone, back


@dataclass
class Synced:
    """What `translations sync` changed, per (suite, locale): records marked stale, and with
    ``retire`` the orphans retired and the retired records restored."""

    stale: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    retired: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    restored: dict[tuple[str, str], list[str]] = field(default_factory=dict)


def sync(catalog: Catalog, retire: bool = False) -> Synced:
    """Mark stale records in every store of the catalog's suites, and with ``retire`` move orphan
    records to the retired files (and back those whose segment returned). Every file it may touch
    (the retired ones too) is locked and read strictly before any is written: one damaged file
    means nothing is written anywhere."""
    pairs = [
        (locale, suite.id)
        for suite in catalog.suites.values()
        for locale in suite.spec.locales
        if locale in catalog.locales and catalog.locales[locale].translated
    ]
    keys = [*pairs, *(retired_key(loc, sid) for loc, sid in pairs)] if retire else pairs
    now = utc_now()
    done = Synced()
    with writing_stores(catalog.project, keys) as stores:
        for locale, suite_id in pairs:
            marked = mark_stale(stores[(locale, suite_id)], catalog.suites[suite_id], now)
            if marked:
                done.stale[(suite_id, locale)] = marked
        if retire:
            moves = {
                (loc, sid): _retire_first(
                    stores[(loc, sid)], stores[retired_key(loc, sid)], catalog.suites[sid], now
                )
                for loc, sid in pairs
            }
            for loc, sid in pairs:
                stores[retired_key(loc, sid)].save()
            for (loc, sid), (gone, back) in moves.items():
                _retire_then(stores[(loc, sid)], stores[retired_key(loc, sid)], gone, back, now)
                stores[(loc, sid)].save()
            for (loc, sid), (gone, back) in moves.items():
                for segment in back:
                    del stores[retired_key(loc, sid)].records[segment]
                if gone:
                    done.retired[(sid, loc)] = gone
                if back:
                    done.restored[(sid, loc)] = back
    for locale, suite_id in pairs:
        catalog.stores[(suite_id, locale)] = stores[(locale, suite_id)]
    catalog.rendered.clear()
    return done

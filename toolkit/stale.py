"""Marking translations stale when their English source changed.

A record whose ``source_sha`` is not today's source hash is stale whatever its status says;
`translations sync` writes that down (status `stale`, with a history event naming the new
hash), so the store itself says what needs redoing."""

from __future__ import annotations

from toolkit.catalog import Catalog
from toolkit.store import Event, load_store, store_lock, utc_now


def mark_stale(catalog: Catalog, suite_id: str, locale: str) -> list[str]:
    suite = catalog.suite(suite_id)
    changed: list[str] = []
    with store_lock(catalog.project, locale, suite_id):
        store = load_store(catalog.project, locale, suite_id, catalog.problems)
        now = utc_now()
        for segment_id, record in sorted(store.records.items()):
            segment = suite.segments.get(segment_id)
            if segment is None or record.status == "stale" or record.source_sha == segment.source_sha:
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
        if changed:
            store.save()
    return changed


RETIRED = "retired"
"""Orphan records move to translations/<locale>/<suite>.retired.jsonl (kept, never deleted)."""


def orphans(catalog: Catalog, suite_id: str, locale: str) -> list[str]:
    """Store records whose segment the suite no longer has (e.g. the BBQ items a new
    ``--per-category`` left out): they make the store fail validation until retired."""
    suite = catalog.suite(suite_id)
    return sorted(s for s in catalog.store(suite_id, locale).records if s not in suite.segments)


def retire_orphans(catalog: Catalog, suite_id: str, locale: str) -> tuple[list[str], list[str]]:
    """Move orphan records into the suite's retired file, each with a ``retired`` event, and bring
    back retired records whose segment exists again (``restored``), both files under their locks.
    Returns (retired, restored) segment ids."""
    suite = catalog.suite(suite_id)
    project = catalog.project
    now = utc_now()
    with store_lock(project, locale, suite_id), store_lock(project, locale, f"{suite_id}.{RETIRED}"):
        store = load_store(project, locale, suite_id, catalog.problems)
        retired = load_store(project, locale, f"{suite_id}.{RETIRED}", catalog.problems)
        gone = sorted(s for s in store.records if s not in suite.segments)
        back = sorted(s for s in retired.records if s in suite.segments and s not in store.records)
        # every record stays in at least one of the two files whenever a write is cut short
        for sid in gone:
            event = Event(
                at=now, event=RETIRED, by="polyprobe", note="the suite has no such segment (orphan)"
            )
            retired.records[sid] = store.records[sid].with_event(event)
        if gone:
            retired.save()
        for sid in gone:
            del store.records[sid]
        for sid in back:
            event = Event(at=now, event="restored", by="polyprobe", note="the segment exists again")
            store.records[sid] = retired.records[sid].with_event(event)
        if gone or back:
            store.save()
        for sid in back:
            del retired.records[sid]
        if back:
            retired.save()
    return gone, back

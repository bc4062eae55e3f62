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

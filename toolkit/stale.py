"""Marking translations stale when their English source changed.

A record whose ``source_sha`` is not today's source hash is stale whatever its status says;
`translations sync` writes that down (status `stale`, with a history event naming the new
hash), so the store itself says what needs redoing. Every store it may touch is locked and
read strictly first: one damaged store means nothing is written anywhere."""

from __future__ import annotations

from toolkit.catalog import Catalog
from toolkit.store import Event, StoreFile, utc_now, writing_stores
from toolkit.templates import Suite


def mark_stale(store: StoreFile, suite: Suite, now: str) -> list[str]:
    """Mark the store's records whose English source changed; return their segment ids."""
    changed: list[str] = []
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
    return changed


def sync(catalog: Catalog) -> dict[tuple[str, str], list[str]]:
    """Mark stale records in every store of the catalog's suites; (suite, locale) -> segments."""
    pairs = [
        (locale, suite.id)
        for suite in catalog.suites.values()
        for locale in suite.spec.locales
        if locale in catalog.locales and not catalog.locales[locale].source
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

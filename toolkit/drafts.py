"""Contributor drafts: translations written by project members, not yet reviewed by a native
speaker. They enter the store with origin and status `draft`; only the review workflow can
raise them further, so a draft never overwrites reviewed or approved work."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.catalog import Catalog
from toolkit.errors import CatalogError, InputError, Problem
from toolkit.fileio import load_yaml
from toolkit.store import Event, utc_now
from toolkit.textcheck import text_problems


@dataclass
class DraftImport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def import_drafts(catalog: Catalog, suite_id: str, locale: str, path: Path, by: str) -> DraftImport:
    """Read ``{segment: text}`` from a YAML file and store each as a draft translation."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    if catalog.locales[locale].source:
        raise InputError(f"{locale} is the source locale: it has no translations")
    rel = str(path)
    raw = load_yaml(path, rel)
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise InputError(f"{rel}: must be a mapping of segment id to translated text")
    problems: list[Problem] = []
    for segment, text in raw.items():
        if segment not in suite.segments:
            problems.append(Problem(rel, segment, "segment", f"no such segment in suite {suite_id}", locale))
        for message in text_problems(text):
            hint = " (normalise it to NFC)" if "NFC" in message else ""
            problems.append(Problem(rel, segment, "text", f"text {message}{hint}", locale))
    if problems:
        raise CatalogError(problems)
    store = catalog.store(suite_id, locale)
    result = DraftImport()
    now = utc_now()
    for segment_id, text in sorted(raw.items()):
        text = unicodedata.normalize("NFC", text)
        segment = suite.segments[segment_id]
        current = store.records.get(segment_id)
        event = Event(at=now, event="draft", by=by, status="draft", text=text, source_sha=segment.source_sha)
        if current is None:
            store.put(segment_id, segment.source, text, "draft", "draft", event)
            result.added.append(segment_id)
            continue
        if current.text == text and current.source_sha == segment.source_sha:
            result.unchanged.append(segment_id)
            continue
        if current.status in ("reviewed", "approved") and current.source_sha == segment.source_sha:
            raise InputError(
                f"{rel}: {segment_id} [{locale}]: the store has a {current.status} translation; "
                "a draft never replaces reviewed work (change it through review)"
            )
        store.put(segment_id, segment.source, text, "draft", "draft", event)
        result.updated.append(segment_id)
    store.save()
    return result

"""Contributor drafts: translations written by project members, not yet reviewed by a native
speaker. They enter the store with origin and status `draft`; only the review workflow can
raise them further, so a draft never overwrites reviewed or approved work.

The whole file is checked before anything is written: every text passes the store's gate
(toolkit/render/gate.py), and the store is read strictly under its lock, so a damaged store or one
bad draft means exit 2 and no byte changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.catalog.loader import Catalog
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import load_yaml
from toolkit.render.gate import gate
from toolkit.store.files import writing_store
from toolkit.store.model import Event, utc_now
from toolkit.store.rules import is_current, reviewed_work


@dataclass
class DraftImport:
    """What a draft import did: segments added, updated and left as they were."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def read_segment_texts(path: Path, what: str = "translated text") -> dict[str, str]:
    """``{segment: text}`` from a YAML file (drafts, glosses); ``what`` names the texts in errors."""
    rel = str(path)
    raw = load_yaml(path, rel)
    if not isinstance(raw, dict) or not raw:
        raise InputError(f"{rel}: must be a non-empty mapping of segment id to {what}")
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InputError(f"{rel}: {key!r}: must map a segment id to a text (got {type(value).__name__})")
    return raw


def import_drafts(catalog: Catalog, suite_id: str, locale: str, path: Path, by: str) -> DraftImport:
    """Store each text of ``path`` as a draft translation of its segment."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    if catalog.locales[locale].source:
        raise InputError(f"{locale} is the source locale: it has no translations")
    if catalog.locales[locale].published_only:
        raise InputError(
            f"{locale} is a published-only locale (rows only from a published dataset imported as published): it has no translations"
        )
    if not by.strip():
        raise InputError("--by must name who wrote the drafts")
    rel = str(path)
    raw = read_segment_texts(path)
    problems = [
        Problem(rel, segment_id, "text", reason, locale)
        for segment_id, reasons in gate(catalog, suite_id, locale, raw).items()
        for reason in reasons
    ]
    if problems:
        raise CatalogError(problems)
    result = DraftImport()
    now = utc_now()
    with writing_store(catalog.project, locale, suite_id) as store:
        for segment_id, text in sorted(raw.items()):
            segment = suite.segments[segment_id]
            current = store.records.get(segment_id)
            if current is not None and is_current(current, segment.source_sha):
                if current.text == text:
                    result.unchanged.append(segment_id)
                    continue
                refused = reviewed_work(current, segment.source_sha, "a draft")
                if refused:
                    problems.append(Problem(rel, segment_id, "text", refused, locale))
                    continue
            event = Event(
                at=now, event="draft", by=by, status="draft", text=text, source_sha=segment.source_sha
            )
            store.put(segment_id, segment.source, text, "draft", "draft", event)
            (result.added if current is None else result.updated).append(segment_id)
        if problems:
            raise CatalogError(problems)  # leaves the block before the save: nothing written
    catalog.stores[(suite_id, locale)] = store
    catalog.rendered.clear()
    return result

"""What a machine-translation run will send (toolkit/translation/machine.py runs it): the options
it was given, the segments still without a current translation, the unique texts they come
down to (cut at ``max_chars``, those no tag can carry set aside), and the report it fills in."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from toolkit.catalog.locales import Locale
from toolkit.catalog.templates import Segment
from toolkit.store.files import StoreFile
from toolkit.store.rules import is_current
from toolkit.translation.placeholders import Protected, SourceSlots, Unsendable, protect

log = logging.getLogger(__name__)

MAX_TEXTS = 50
MODEL_TYPES = ("quality_optimized", "prefer_quality_optimized", "latency_optimized")
RETRIED_STATUSES = frozenset({"needs_edit", "rejected"})


@dataclass(frozen=True)
class Options:
    """How one run talks to DeepL and how much it may send: the CLI's options, one field each."""

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
    """What one run of one suite and locale found, sent, stored and left, counted as it goes
    (a run that stops half-way still reports what it did)."""

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
        """What the unit costs: the characters of the text as sent (tags included)."""
        return len(self.protected.xml)


@dataclass
class Plan:
    """The unique texts one run sends, in segment order, and what it leaves for later or for a
    human translator."""

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


def describe(
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

"""The store's rules: whether a record is current, where a segment's translation stands (one
vocabulary of states), how far each status is from approval, which status may follow which, and
whether a record waits for adjudication.

A record is current when it was made from today's English source (its ``source_sha`` is the
source's hash) and was not marked stale; otherwise it is stale, whatever its recorded status.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from toolkit.core.errors import PolyprobeError
from toolkit.store.model import NEEDS_REWORDING, Event, Translation, source_sha

State = Literal["untranslated", "stale", "machine", "draft", "needs_edit", "rejected", "reviewed", "approved"]
STATES: tuple[State, ...] = (
    "approved",
    "reviewed",
    "draft",
    "machine",
    "needs_edit",
    "rejected",
    "stale",
    "untranslated",
)
"""Where a segment's translation stands in a locale: the record's status when it is current,
``stale`` when it is not, ``untranslated`` when the store has no record for the segment."""


def is_current(record: Translation | None, source_sha: str) -> TypeGuard[Translation]:
    """Whether ``record`` is a translation of the English source whose hash is ``source_sha``."""
    return record is not None and record.source_sha == source_sha and record.status != "stale"


def state(record: Translation | None, source_sha: str) -> State:
    """Where the segment whose English source hashes to ``source_sha`` stands, given its record."""
    if record is None:
        return "untranslated"
    if not is_current(record, source_sha):
        return "stale"
    return record.status


# How far a status is from approval; a release or a render asks for a minimum.
STATUS_RANK: dict[str, int] = {
    "rejected": -1,
    "stale": -1,
    "machine": 1,
    "draft": 1,
    "reviewed": 2,
    "approved": 3,
    "needs_edit": -1,
}
MIN_STATUS_CHOICES: tuple[str, ...] = ("draft", "reviewed", "approved")


# Which status may follow which (None: no record yet). Any status may become stale when its
# English source changes; only the review workflow moves a record to reviewed or approved
# (straight to approved when enough reviewers agree in one pull).
TRANSITIONS: dict[str | None, frozenset[str]] = {
    None: frozenset({"machine", "draft", "rejected", "needs_edit"}),
    "machine": frozenset({"draft", "reviewed", "approved", "rejected", "stale"}),
    "draft": frozenset({"draft", "reviewed", "approved", "rejected", "stale"}),
    "reviewed": frozenset({"reviewed", "approved", "rejected", "stale"}),
    "approved": frozenset({"approved", "reviewed", "rejected", "stale"}),
    # a rejected translation that enough reviewers then accept may go straight to approved,
    # as a needs_edit one may
    "rejected": frozenset({"machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"}),
    "stale": frozenset({"machine", "draft", "rejected", "stale", "needs_edit"}),
    # Machine translation that could not be turned into a text that renders: it keeps the raw
    # MT answer and the reason, is never current, and leaves by a human edit (review, a draft)
    # or by being sent again (`translate --retry-rejected`).
    "needs_edit": frozenset({"machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"}),
}


class InvalidTransition(PolyprobeError):
    """A status change the store's rules do not allow (``TRANSITIONS``)."""

    exit_code = 2


def check_transition(current: str | None, new: str, segment: str) -> None:
    """Refuse moving a record from ``current`` (None: no record yet) to ``new`` unless the rules
    allow it, naming what is allowed."""
    if new not in TRANSITIONS[current]:
        raise InvalidTransition(
            f"{segment}: a {current or 'missing'} translation cannot become {new} "
            f"(allowed: {', '.join(sorted(TRANSITIONS[current])) or 'nothing'})"
        )


def opens_adjudication(event: Event) -> bool:
    """A ``policy`` event that sent its record to adjudication (the reviewers disagree). Events
    written before the ``adjudication`` field existed say so by their note's prefix."""
    if event.adjudication is not None:
        return event.adjudication
    return event.event == "policy" and event.status is None and (event.note or "").startswith("adjudication")


def in_adjudication(record: Translation) -> bool:
    """Whether the record's latest policy decision is that it waits for adjudication."""
    last = next((e for e in reversed(record.history) if e.event == "policy"), None)
    return last is not None and opens_adjudication(last)


def needs_rewording(record: Translation | None) -> bool:
    """Whether the record is a machine translation that needs a human edit only because its word
    order does not fit the suite (honest: the completion slot not last): review offers these first."""
    return (
        record is not None
        and record.status == "needs_edit"
        and NEEDS_REWORDING in (record.history[-1].tags or ())
    )


REVIEWED_WORK: tuple[str, ...] = ("reviewed", "approved")
"""Statuses that only the review workflow may change: a draft, an XLIFF import or a dataset
import never replaces a current record with one of them."""


def reviewed_work(record: Translation | None, source_sha: str, what: str) -> str | None:
    """Why ``what`` (e.g. "a draft", "an import") may not replace ``record``'s text, or None when
    it may: the record is a current reviewed or approved translation."""
    if not is_current(record, source_sha) or record.status not in REVIEWED_WORK:
        return None
    return (
        f"the store has a {record.status} translation; {what} never replaces reviewed work "
        "(change it through review)"
    )


def has_current_gloss(record: Translation) -> bool:
    """Whether the record's gloss was written for its present text (a gloss of an earlier text
    says what that text asked, not what this one asks)."""
    return record.gloss is not None and record.gloss.text_sha == source_sha(record.text)

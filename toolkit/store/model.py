"""What the translation store holds: one record per segment (its text, origin, status and an
append-only history of events), and the hash that ties a record to its English source."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from toolkit.core.records import Record

Origin = Literal["deepl", "human", "draft", "import"]
Status = Literal["machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"]
ORIGINS: tuple[str, ...] = ("deepl", "human", "draft", "import")
STATUSES: tuple[str, ...] = ("machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit")


def source_sha(text: str) -> str:
    """The hash that ties a translation to the exact English source it was made from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def utc_now() -> str:
    """The time events record: UTC to the second, in ISO 8601 with a ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


SEGMENT_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+)?")
"""TEMPLATE.VARIANT (gen-01.f), ITEM.FIELD (bbq: religion-0.context), or a template id alone
(ifm's instruction): lower-case letters and digits in dash-joined words, then at most one dotted
part. A segment is never empty and never a path (``../../x``)."""


def _segment_id(value: str) -> str:
    if not SEGMENT_ID.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a segment id (TEMPLATE.VARIANT such as gen-01.f, ITEM.FIELD such as "
            "religion-0.context: lower-case letters, digits, dashes and one dot)"
        )
    return value


SegmentId = Annotated[str, AfterValidator(_segment_id)]

EventKind = Literal[
    "draft",
    "import",
    "machine",
    "review",
    "review-withdrawn",
    "policy",
    "stale",
    "retired",
    "restored",
    "gloss",
]
"""What a history event records; a kind polyprobe does not write is a damaged line."""

_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})?")


def _timestamp(value: str) -> str:
    """An ISO 8601 date and time that names a real moment (not month 13). polyprobe writes UTC
    with a Z; a review's time is Label Studio's as it gives it (a zone, or none)."""
    try:
        if _TIMESTAMP.fullmatch(value):
            datetime.fromisoformat(value)
            return value
    except ValueError:
        pass
    raise ValueError(f"{value!r} is not a time such as 2026-01-02T10:11:12Z (ISO 8601)")


Timestamp = Annotated[str, AfterValidator(_timestamp)]
"""When an event happened: ISO 8601 (2026-01-02T10:11:12Z; Label Studio's times keep their
fraction of a second, 2026-01-02T10:11:12.345678Z)."""


class Event(Record):
    """One entry of a record's history; never edited or removed once written."""

    at: Timestamp
    event: EventKind
    by: str
    status: Status | None = None
    text: str | None = None
    source_sha: str | None = None
    engine: dict[str, str] | None = None
    verdict: str | None = None
    tags: tuple[str, ...] | None = None
    comment: str | None = None
    ref: str | None = None
    """External reference: a Label Studio annotation version (``ReviewRef``)."""
    note: str | None = None
    adjudication: bool | None = None
    """On a ``policy`` event: the reviewers disagree and the record waits for adjudication.
    Written since issue 17; older stores say it only by the note's ``adjudication`` prefix, which
    ``toolkit.store.rules.opens_adjudication`` reads the same way (their lines load unchanged)."""


class Gloss(Record):
    """A reviewer's back-translation of a prompt's text into English (ifm's instruction, iat's
    prompt): what this locale actually asks, so that one question can be checked across locales.
    It glosses one text: ``text_sha`` is the hash of the translation it was written for, and a
    changed translation needs a new gloss (``toolkit.store.rules.has_current_gloss``). Written by
    `polyprobe translations gloss`, with a ``gloss`` event in the history (its ``comment`` is the
    gloss, its ``by`` the reviewer)."""

    text: str
    text_sha: str = Field(pattern=r"^[0-9a-f]{64}$")


class Translation(Record):
    """One segment in one locale: the translation, the English source it was made from (and its
    hash), where it came from, where it stands, and every event that brought it there."""

    segment: SegmentId
    source_sha: str = Field(pattern=r"^[0-9a-f]{64}$")
    source: str
    text: str
    origin: Origin
    status: Status
    engine: dict[str, str] | None = None
    gloss: Gloss | None = None
    """Only on prompts (suites with ``glossed: true``): the reviewer's English gloss of ``text``."""
    history: tuple[Event, ...] = Field(min_length=1)

    def with_event(self, event: Event, **changes: Any) -> Translation:
        """A copy with ``changes`` applied and ``event`` appended to the history."""
        return self.model_copy(update={**changes, "history": (*self.history, event)})


NEEDS_REWORDING = "needs rewording"
"""The tag of a machine event whose answer is right but in a word order the suite cannot use
(honest: the completion slot not last): review offers these first."""

REF = "labelstudio"
"""What a review event's ``ref`` starts with: ``labelstudio:<project>:<annotation>:<version>``."""


@dataclass(frozen=True)
class ReviewRef:
    """A Label Studio annotation version as review events record it in ``ref``: the project, the
    annotation id, and the version (the annotation's update time, or ``withdrawn``)."""

    project: int
    annotation: str
    version: str = ""

    def __str__(self) -> str:
        return f"{REF}:{self.project}:{self.annotation}:{self.version}"

    @classmethod
    def parse(cls, ref: str | None) -> ReviewRef | None:
        """The reference, or None for anything else (no ref, another system's, no project number).
        The version is everything after the annotation id (an update time has colons of its own)."""
        if not ref or not ref.startswith(f"{REF}:"):
            return None
        parts = ref.split(":", 3)
        if len(parts) < 3 or not parts[1].isdigit():
            return None
        return cls(int(parts[1]), parts[2], parts[3] if len(parts) > 3 else "")

"""What the translation store holds: one record per segment (its text, origin, status and an
append-only history of events), and the hash that ties a record to its English source."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from toolkit.core.records import Record

Origin = Literal["deepl", "human", "draft", "import"]
Status = Literal["machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"]
ORIGINS: tuple[str, ...] = ("deepl", "human", "draft", "import")
STATUSES: tuple[str, ...] = ("machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit")


def source_sha(text: str) -> str:
    """The hash that ties a translation to the exact English source it was made from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Event(Record):
    """One entry of a record's history; never edited or removed once written."""

    at: str
    event: str
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
    segment: str
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

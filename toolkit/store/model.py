"""What the translation store holds: one record per segment (its text, origin, status and an
append-only history of events), and the hash that ties a record to its English source."""

from __future__ import annotations

import hashlib
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
    """External reference, e.g. a Label Studio annotation id and its update time."""
    note: str | None = None


class Translation(Record):
    segment: str
    source_sha: str = Field(pattern=r"^[0-9a-f]{64}$")
    source: str
    text: str
    origin: Origin
    status: Status
    engine: dict[str, str] | None = None
    history: tuple[Event, ...] = Field(min_length=1)

    def with_event(self, event: Event, **changes: Any) -> Translation:
        """A copy with ``changes`` applied and ``event`` appended to the history."""
        return self.model_copy(update={**changes, "history": (*self.history, event)})


REF = "labelstudio"
"""What a review event's ``ref`` starts with: ``labelstudio:<project>:<annotation>:<version>``."""

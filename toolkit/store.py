"""The translation store: translations/<locale>/<suite>.jsonl, one record per segment,
sorted by segment id, each with its origin, status and an append-only history.

This is the project's translation memory: a record is current when its ``source_sha`` is
the hash of today's English source; otherwise it is stale, whatever its recorded status.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from toolkit.errors import PolyprobeError, Problem
from toolkit.fileio import FileFormatError, read_text, write_text_atomic
from toolkit.project import Project
from toolkit.records import Record, parse_record
from toolkit.templates import source_sha
from toolkit.textcheck import text_problems

Origin = Literal["deepl", "human", "draft", "import"]
Status = Literal["machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"]
ORIGINS: tuple[str, ...] = ("deepl", "human", "draft", "import")
STATUSES: tuple[str, ...] = ("machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit")

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
    "rejected": frozenset({"machine", "draft", "reviewed", "rejected", "stale", "needs_edit"}),
    "stale": frozenset({"machine", "draft", "rejected", "stale", "needs_edit"}),
    # Machine translation that could not be turned into a text that renders: it keeps the raw
    # MT answer and the reason, is never current, and leaves by a human edit (review, a draft)
    # or by being sent again (`translate --retry-rejected`).
    "needs_edit": frozenset({"machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"}),
}


class InvalidTransition(PolyprobeError):
    exit_code = 2


def check_transition(current: str | None, new: str, segment: str) -> None:
    if new not in TRANSITIONS[current]:
        raise InvalidTransition(
            f"{segment}: a {current or 'missing'} translation cannot become {new} "
            f"(allowed: {', '.join(sorted(TRANSITIONS[current])) or 'nothing'})"
        )


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


def store_path(project: Project, locale: str, suite: str) -> Path:
    return project.translations / locale / f"{suite}.jsonl"


@dataclass
class StoreFile:
    """The records of one locale and suite, keyed by segment id."""

    locale: str
    suite: str
    path: Path
    records: dict[str, Translation] = field(default_factory=dict)

    def put(
        self,
        segment: str,
        source: str,
        text: str,
        origin: Origin,
        status: Status,
        event: Event,
        engine: dict[str, str] | None = None,
    ) -> Translation:
        """Create the segment's record, or append ``event`` to it and apply the new values."""
        values: dict[str, Any] = {
            "text": text,
            "source": source,
            "source_sha": source_sha(source),
            "origin": origin,
            "status": status,
        }
        if engine is not None:
            values["engine"] = engine
        current = self.records.get(segment)
        record = (
            Translation(segment=segment, history=(event,), **values)
            if current is None
            else current.with_event(event, **values)
        )
        self.records[segment] = record
        return record

    def dumps(self) -> str:
        lines = [
            json.dumps(self.records[key].model_dump(mode="json", exclude_none=True), ensure_ascii=False)
            for key in sorted(self.records)
        ]
        return "".join(line + "\n" for line in lines)

    def save(self) -> None:
        """Write atomically (temp file + rename), sorted by segment id."""
        write_text_atomic(self.path, self.dumps())


class StoreBusy(PolyprobeError):
    """Another process is writing the same store file."""


@contextlib.contextmanager
def store_lock(project: Project, locale: str, suite: str) -> Iterator[None]:
    """Hold the store file of (locale, suite) for writing; a second writer fails at once
    instead of silently overwriting the first one's work."""
    path = store_path(project, locale, suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")
    with lock.open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreBusy(
                f"{project.rel(path)} is being written by another polyprobe process; try again when it ends"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def load_store(project: Project, locale: str, suite: str, problems: list[Problem]) -> StoreFile:
    """Load one store file; malformed lines are reported and skipped, never half-used."""
    path = store_path(project, locale, suite)
    store = StoreFile(locale=locale, suite=suite, path=path)
    if not path.is_file():
        return store
    rel = project.rel(path)
    try:
        text = read_text(path, rel)
    except FileFormatError as exc:
        problems.append(exc.problem(locale))
        return store
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            problems.append(Problem(rel, f"line {lineno}", "", "blank line", locale))
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(rel, f"line {lineno}", "", f"invalid JSON: {exc.msg}", locale))
            continue
        segment = raw.get("segment") if isinstance(raw, dict) else None
        name = segment if isinstance(segment, str) and segment else f"line {lineno}"
        rec = parse_record(Translation, raw, file=rel, record=name, problems=problems, locale=locale)
        if rec is None:
            continue
        if rec.segment in store.records:
            problems.append(Problem(rel, rec.segment, "segment", "duplicate segment in the store", locale))
            continue
        for message in text_problems(rec.text):
            problems.append(Problem(rel, rec.segment, "text", f"text {message}", locale))
        store.records[rec.segment] = rec
    if list(store.records) != sorted(store.records):
        problems.append(Problem(rel, "(file)", "", "records are not sorted by segment id", locale))
    return store

"""The translation store's files: translations/<locale>/<suite>.jsonl, one record per segment,
sorted by segment id; read leniently for reports and renders, strictly (and locked) for writes.

This is the project's translation memory: a record is current when its ``source_sha`` is
the hash of today's English source; otherwise it is stale, whatever its recorded status.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import CatalogError, InputError, PolyprobeError, Problem
from toolkit.core.fileio import (
    FileFormatError,
    JsonUnreadable,
    loads_json,
    read_bytes,
    unencodable,
    write_text_atomic,
)
from toolkit.core.project import Project
from toolkit.core.records import parse_record
from toolkit.core.text import text_problems
from toolkit.store.model import SEGMENT_ID, Event, Origin, Status, Translation, source_sha


def store_path(project: Project, locale: str, suite: str) -> Path:
    """Where the store file of ``suite`` in ``locale`` lives (it may not exist yet)."""
    return project.translations / locale / f"{suite}.jsonl"


@dataclass
class StoreFile:
    """The records of one locale and suite, keyed by segment id."""

    locale: str
    suite: str
    path: Path
    records: dict[str, Translation] = field(default_factory=dict)
    original: str | None = None
    """The file's text as read (strictly) or last saved; None when it was not read for writing."""

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
        """The file's text; a record holding a string no UTF-8 file can hold (a lone surrogate
        from a server's JSON) is refused with its segment and field, before anything is written."""
        lines: list[str] = []
        problems: list[Problem] = []
        for key in sorted(self.records):
            data = self.records[key].model_dump(mode="json", exclude_none=True)
            where = unencodable(data)
            if where is not None:
                problems.append(
                    Problem(
                        str(self.path),
                        key,
                        where,
                        "a lone surrogate is not a character: it cannot be written as UTF-8",
                        self.locale,
                    )
                )
            lines.append(json.dumps(data, ensure_ascii=False))
        if problems:
            raise CatalogError(problems)
        return "".join(line + "\n" for line in lines)

    def save(self) -> None:
        """Write atomically (temp file + rename), sorted by segment id; nothing when nothing
        changed since the file was read or last saved (an unchanged run changes no byte)."""
        text = self.dumps()
        if text == self.original:
            return
        write_text_atomic(self.path, text)
        self.original = text


class StoreBusy(PolyprobeError):
    """Another process held the store file for longer than this one would wait."""


class StoreUnreadable(CatalogError):
    """A store file that cannot be read whole: a command that would rewrite it refuses."""


LOCK_WAIT_ENV = "POLYPROBE_LOCK_WAIT"
LOCK_WAIT_SECONDS = 30.0


def _lock_wait() -> float:
    """$POLYPROBE_LOCK_WAIT in seconds; a value that is not a number of seconds is refused, never
    silently read as the default (``abc``) or as waiting forever (``nan``, ``inf``)."""
    value = os.environ.get(LOCK_WAIT_ENV)
    if value is None:
        return LOCK_WAIT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise InputError(
            f"${LOCK_WAIT_ENV}={value!r} is not a number of seconds (e.g. {LOCK_WAIT_SECONDS:g}); "
            "nothing was written"
        )
    return seconds


@contextlib.contextmanager
def store_lock(project: Project, locale: str, suite: str, wait: float | None = None) -> Iterator[None]:
    """Hold the store file of (locale, suite) for writing. A second writer waits for the first
    (up to ``wait`` seconds, default $POLYPROBE_LOCK_WAIT or 30), then fails with nothing written;
    it never overwrites the first one's work. Hold it around load, change and save."""
    path = store_path(project, locale, suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")
    deadline = time.monotonic() + (_lock_wait() if wait is None else wait)
    with lock.open("w") as fh:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusy(
                        f"{project.rel(path)} is being written by another polyprobe process; "
                        "nothing was written: run the command again when that one ends"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass(frozen=True)
class BadLine:
    """A line of a store file that is not a usable record, kept byte for byte."""

    lineno: int
    raw: bytes
    field: str
    reason: str
    segment: str | None = None

    @property
    def where(self) -> str:
        """The line, and its segment when one could be read, as messages locate it."""
        return f"line {self.lineno}" + (f" ({self.segment})" if self.segment else "")


@dataclass
class StoreScan:
    """A store file read line by line: the records that parse, every line that does not, and
    what keeps the file from being exactly what polyprobe writes (BOM, blank lines, order...)."""

    records: dict[str, Translation] = field(default_factory=dict)
    bad: list[BadLine] = field(default_factory=list)
    form: list[tuple[int, str]] = field(default_factory=list)
    """(line, what): harmless for reading, but a rewrite would change those bytes."""

    @property
    def whole(self) -> bool:
        """Nothing bad and nothing a rewrite would change: the file can be rewritten byte for byte."""
        return not self.bad and not self.form


_BOM = b"\xef\xbb\xbf"


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: json.loads would keep only the last value of
    a repeated key, and a rewrite would silently drop the others."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _RepeatedKey(key)
        obj[key] = value
    return obj


def _segment_of(text: str) -> str | None:
    """The segment a line that is valid JSON names, to locate a complaint about it."""
    try:
        obj = loads_json(text)
    except ValueError:
        return None
    segment = obj.get("segment") if isinstance(obj, dict) else None
    return segment if isinstance(segment, str) and SEGMENT_ID.fullmatch(segment) else None


_SEGMENT_FIELD = re.compile(r'^\{"segment": ?"([a-z0-9.-]{1,200})"')


def _segment_of_unreadable(text: str) -> str | None:
    """The segment a line Python cannot parse names, when it starts as polyprobe writes lines."""
    found = _SEGMENT_FIELD.match(text)
    return found.group(1) if found and SEGMENT_ID.fullmatch(found.group(1)) else None


def scan_store(data: bytes) -> StoreScan:
    """Read a store file's bytes; nothing is dropped without being listed in ``bad`` or ``form``."""
    scan = StoreScan()
    if data.startswith(_BOM):
        scan.form.append((1, "the file starts with a byte order mark (U+FEFF)"))
        data = data[len(_BOM) :]
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    elif data:
        scan.form.append((len(lines), "the last line has no newline at its end (truncated?)"))
    first_line: dict[str, int] = {}
    previous = ""
    for lineno, raw in enumerate(lines, start=1):
        line = raw
        if line.endswith(b"\r"):
            scan.form.append((lineno, "Windows line ending (CR LF)"))
            line = line[:-1]
        if not line.strip():
            scan.form.append((lineno, "blank line"))
            continue
        parsed = _parse_line(lineno, raw, line)
        if isinstance(parsed, BadLine):
            scan.bad.append(parsed)
            continue
        record, text = parsed
        if record.segment in first_line:
            scan.bad.append(
                BadLine(
                    lineno,
                    raw,
                    "segment",
                    f"duplicate segment (also on line {first_line[record.segment]})",
                    record.segment,
                )
            )
            continue
        first_line[record.segment] = lineno
        scan.records[record.segment] = record
        if record.segment < previous:
            scan.form.append(
                (lineno, f"records are not sorted by segment id ({record.segment} after {previous})")
            )
        previous = max(previous, record.segment)
        if _canonical(record) != text:
            scan.form.append(
                (lineno, "not in the form polyprobe writes (key order, spacing, escapes or nulls)")
            )
    return scan


def _parse_line(lineno: int, raw: bytes, line: bytes) -> tuple[Translation, str] | BadLine:
    """One non-blank line (its line ending removed) as a record and its text, or the reason it
    is not one: bad UTF-8, JSON Python cannot read back, a repeated key, or an invalid record."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadLine(
            lineno, raw, "", f"invalid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})"
        )
    try:
        obj = loads_json(text, object_pairs_hook=_no_repeated_keys)
    except JsonUnreadable as exc:  # a huge number, deep nesting, a lone surrogate
        reason = exc.msg.removeprefix(f"{exc.field}: ") if exc.field else exc.msg
        return BadLine(lineno, raw, exc.field, reason, _segment_of_unreadable(text))
    except json.JSONDecodeError as exc:
        cut = "" if text.rstrip().endswith("}") else " (the line ends before the record does: truncated?)"
        return BadLine(lineno, raw, "", f"invalid JSON at column {exc.colno}: {exc.msg}{cut}")
    except _RepeatedKey as exc:
        return BadLine(lineno, raw, "", f"duplicate key {exc.key!r}", _segment_of(text))
    if not isinstance(obj, dict):
        return BadLine(lineno, raw, "", "not a JSON object")
    segment = obj.get("segment")
    segment = segment if isinstance(segment, str) and SEGMENT_ID.fullmatch(segment) else None
    problems: list[Problem] = []
    record = parse_record(Translation, obj, file="", record="", problems=problems)
    if record is None:
        fields = ", ".join(sorted({p.field for p in problems if p.field}))
        if len(problems) == 1:
            reason = problems[0].message
        else:
            reason = "; ".join(f"{p.field}: {p.message}" if p.field else p.message for p in problems)
        return BadLine(lineno, raw, fields, reason, segment)
    return record, text


def _canonical(record: Translation) -> str:
    return json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


SKIPPED = " (skipped by this read)"


def scan_problems(scan: StoreScan, rel: str, locale: str, skipped: bool = False) -> list[Problem]:
    """Every bad line (``skipped``: say that the read goes on without it) and every departure
    from the written form, located by line."""
    tail = SKIPPED if skipped else ""
    out = [Problem(rel, bad.where, bad.field, bad.reason + tail, locale) for bad in scan.bad]
    out.extend(Problem(rel, f"line {lineno}", "", what, locale) for lineno, what in scan.form)
    return out


def load_store(project: Project, locale: str, suite: str, problems: list[Problem]) -> StoreFile:
    """Load one store file for reading (reports, renders): every line that cannot be used is
    reported in ``problems`` and skipped; the usable records are kept."""
    path = store_path(project, locale, suite)
    store = StoreFile(locale=locale, suite=suite, path=path)
    if not os.path.lexists(path):
        return store
    rel = project.rel(path)
    try:
        data = read_bytes(path, rel)
    except FileFormatError as exc:  # a FIFO, a device or a folder: reading it would never end
        problems.append(exc.problem(locale))
        return store
    scan = scan_store(data)
    problems.extend(scan_problems(scan, rel, locale, skipped=True))
    for rec in scan.records.values():
        if rec.status in ("rejected", "needs_edit"):
            continue  # kept for its history (a refused or unusable translation): never rendered
        for message in text_problems(rec.text):
            problems.append(Problem(rel, rec.segment, "text", f"text {message}", locale))
    store.records = dict(sorted(scan.records.items()))
    return store


def suite_of(store: str) -> str:
    """The suite a store file belongs to: ``sentiment`` for sentiment.jsonl and for the records it
    retired, sentiment.retired.jsonl (suite ids have no dots)."""
    return store.split(".", 1)[0]


def repair_hint(stores: Iterable[tuple[str, str]]) -> str:
    """What to run for these damaged (locale, store) files: a command `translations repair`
    takes as it is (its --suite names the suite, which covers the suite's retired file)."""
    wanted = sorted({(locale, suite_of(store)) for locale, store in stores})
    options = f" --locale {wanted[0][0]} --suite {wanted[0][1]}" if len(wanted) == 1 else ""
    return (
        f"nothing was written. `polyprobe translations repair{options}` keeps every good record and puts "
        "the other lines aside in a file next to the store (see the README, 'Repairing a damaged store')"
    )


def load_store_strict(project: Project, locale: str, suite: str) -> StoreFile:
    """Load one store file for a command that will rewrite it: anything that keeps the file
    from being read whole, or from being written back byte for byte, is an error naming the
    file, the line and what is wrong, so the rewrite can lose nothing. Call it under
    ``store_lock``."""
    path = store_path(project, locale, suite)
    store = StoreFile(locale=locale, suite=suite, path=path)
    if not os.path.lexists(path):
        store.original = ""
        return store
    try:
        data = read_bytes(path, project.rel(path))
    except FileFormatError as exc:  # not a file repair can mend: said as it is, without a hint
        raise StoreUnreadable([exc.problem(locale)]) from None
    scan = scan_store(data)
    if not scan.whole:
        raise StoreUnreadable(
            scan_problems(scan, project.rel(path), locale), hint=repair_hint([(locale, suite)])
        )
    store.records = scan.records
    store.original = data.decode("utf-8")
    return store


@contextlib.contextmanager
def writing_stores(
    project: Project, keys: Iterable[tuple[str, str]]
) -> Iterator[dict[tuple[str, str], StoreFile]]:
    """The store files of ``keys`` ((locale, suite) pairs), locked, read strictly, and saved on
    a normal exit if they changed. The locks are taken in sorted order (no deadlock between two
    commands) and every file is read before anything is written: one unreadable file means
    nothing is written at all."""
    wanted = sorted(set(keys))
    with contextlib.ExitStack() as stack:
        for locale, suite in wanted:
            stack.enter_context(store_lock(project, locale, suite))
        stores: dict[tuple[str, str], StoreFile] = {}
        problems: list[Problem] = []
        damaged: list[tuple[str, str]] = []
        for locale, suite in wanted:
            try:
                stores[(locale, suite)] = load_store_strict(project, locale, suite)
            except StoreUnreadable as exc:
                problems.extend(exc.problems)
                damaged.append((locale, suite))
        if problems:
            raise StoreUnreadable(problems, hint=repair_hint(damaged))
        yield stores
        for store in stores.values():
            store.save()


@contextlib.contextmanager
def writing_store(project: Project, locale: str, suite: str) -> Iterator[StoreFile]:
    """One store file, locked, read strictly, saved on a normal exit if it changed."""
    with writing_stores(project, [(locale, suite)]) as stores:
        yield stores[(locale, suite)]

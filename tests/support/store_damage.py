"""Ways a store file gets damaged (hand edits, bad merges, other tools, full disks), each as a
function of the file's bytes and what a strict read must say about it.

They are applied to the mini catalog's Italian store (tests/conftest.py): four records,
gen-01.f, gen-01.m, rel-01.f, rel-01.m, one per line, with è and È in their texts."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

STORE_IT = "translations/it/sentiment.jsonl"


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def _edit_line(n: int, change: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        lines[n - 1] = change(lines[n - 1])
        return _join(lines)

    return apply


def _edit_record(n: int, change: Callable[[dict], dict], **dump: object) -> Callable[[bytes], bytes]:
    def record(line: bytes) -> bytes:
        return json.dumps(change(json.loads(line)), ensure_ascii=False, **dump).encode()  # type: ignore[arg-type]

    return _edit_line(n, record)


def _insert(after: int, *new: bytes) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        return _join(lines[:after] + list(new) + lines[after:])

    return apply


def _with(key: str, value: object) -> Callable[[dict], dict]:
    return lambda rec: {**rec, key: value}


def _without(key: str) -> Callable[[dict], dict]:
    return lambda rec: {k: v for k, v in rec.items() if k != key}


def _history(change: Callable[[dict], dict]) -> Callable[[dict], dict]:
    return lambda rec: {**rec, "history": [change(rec["history"][0])]}


def _duplicate(n: int, text: str | None = None) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        copy = lines[n - 1]
        if text is not None:
            rec = json.loads(copy)
            copy = json.dumps({**rec, "text": text}, ensure_ascii=False).encode()
        return _join([*lines[:n], copy, *lines[n:]])

    return apply


def _swap(a: int, b: int) -> Callable[[bytes], bytes]:
    def apply(data: bytes) -> bytes:
        lines = _lines(data)
        lines[a - 1], lines[b - 1] = lines[b - 1], lines[a - 1]
        return _join(lines)

    return apply


def _truncate_inside_multibyte(data: bytes) -> bytes:
    return data[: data.rindex("È".encode()) + 1]  # the file ends after the first byte of È


def _merge_conflict(data: bytes) -> bytes:
    lines = _lines(data)
    theirs = json.loads(lines[1])
    theirs["text"] = "L'uomo {{ group.m }} è felice oggi."
    other = json.dumps(theirs, ensure_ascii=False).encode()
    return _join([lines[0], b"<<<<<<< HEAD", lines[1], b"=======", other, b">>>>>>> vendor", *lines[2:]])


def _pretty(data: bytes) -> bytes:
    lines = _lines(data)
    pretty = json.dumps(json.loads(lines[0]), ensure_ascii=False, indent=2).encode()
    return _join([pretty, *lines[1:]])


@dataclass(frozen=True)
class Damage:
    id: str
    apply: Callable[[bytes], bytes]
    expect: tuple[str, ...]
    """Fragments the refusal must contain besides the file name: the line (and segment) and what."""


DAMAGES: list[Damage] = [
    Damage(
        "latin-1 byte in a text",
        _edit_line(2, lambda line: line.replace("è".encode(), b"\xe8", 1)),
        ("line 2", "invalid UTF-8 (byte 0xe8"),
    ),
    Damage(
        "stray 0xff byte",
        _edit_line(3, lambda line: line.replace(b"famiglia", b"fam\xffiglia", 1)),
        ("line 3", "invalid UTF-8 (byte 0xff"),
    ),
    Damage(
        "file cut inside a multi-byte character",
        _truncate_inside_multibyte,
        ("line 4", "invalid UTF-8 (byte 0xc3"),
    ),
    Damage(
        "whole file re-encoded as Latin-1",
        lambda d: d.decode("utf-8").encode("latin-1"),
        ("line 1", "line 4", "invalid UTF-8 (byte 0xe8"),
    ),
    Damage(
        "whole file re-encoded as UTF-16",
        lambda d: d.decode("utf-8").encode("utf-16"),
        ("line 1", "invalid UTF-8 (byte 0xff at column 1)"),
    ),
    Damage(
        "UTF-8 byte order mark",
        lambda d: b"\xef\xbb\xbf" + d,
        ("line 1", "byte order mark"),
    ),
    Damage(
        "truncated last line",
        lambda d: d[:-40],
        ("line 4", "invalid JSON", "truncated?"),
    ),
    Damage(
        "last newline missing",
        lambda d: d[:-1],
        ("line 4", "no newline at its end"),
    ),
    Damage(
        "line cut mid-file",
        _edit_line(2, lambda line: line[:60]),
        ("line 2", "invalid JSON", "truncated?"),
    ),
    Damage(
        "trailing comma",
        _edit_line(3, lambda line: line[:-1] + b", }"),
        ("line 3", "invalid JSON"),
    ),
    Damage(
        "Python dict instead of JSON",
        _edit_line(2, lambda line: repr(json.loads(line)).encode()),
        ("line 2", "invalid JSON"),
    ),
    Damage(
        "JSON array instead of an object",
        _edit_line(2, lambda line: b"[" + line + b"]"),
        ("line 2", "not a JSON object"),
    ),
    Damage(
        "null line",
        _edit_line(3, lambda line: b"null"),
        ("line 3", "not a JSON object"),
    ),
    Damage("blank line mid-file", _insert(2, b""), ("line 3", "blank line")),
    Damage("whitespace-only line", _insert(1, b"  \t "), ("line 2", "blank line")),
    Damage(
        "Windows line endings",
        lambda d: d.replace(b"\n", b"\r\n"),
        ("line 1", "Windows line ending (CR LF)"),
    ),
    Damage(
        "unknown status",
        _edit_record(1, _with("status", "dratf")),
        ("line 1 (gen-01.f)", "status", "Input should be 'machine'"),
    ),
    Damage(
        "status in capitals",
        _edit_record(4, _with("status", "Approved")),
        ("line 4 (rel-01.m)", "status"),
    ),
    Damage(
        "unknown origin",
        _edit_record(2, _with("origin", "vendor")),
        ("line 2 (gen-01.m)", "origin", "Input should be 'deepl'"),
    ),
    Damage(
        "unknown field",
        _edit_record(3, _with("notes", "check later")),
        ("line 3 (rel-01.f)", "notes", "unknown field"),
    ),
    Damage(
        "missing text",
        _edit_record(2, _without("text")),
        ("line 2 (gen-01.m)", "text", "required field is missing"),
    ),
    Damage(
        "text that is not a string",
        _edit_record(1, _with("text", 42)),
        ("line 1 (gen-01.f)", "text", "valid string"),
    ),
    Damage(
        "source_sha that is not a hash",
        _edit_record(3, _with("source_sha", "abc123")),
        ("line 3 (rel-01.f)", "source_sha"),
    ),
    Damage(
        "empty history",
        _edit_record(4, _with("history", [])),
        ("line 4 (rel-01.m)", "history", "at least 1 item"),
    ),
    Damage(
        "history event without its time",
        _edit_record(2, _history(_without("at"))),
        ("line 2 (gen-01.m)", "history[0].at", "required field is missing"),
    ),
    Damage(
        "history event with an unknown status",
        _edit_record(1, _history(_with("status", "done"))),
        ("line 1 (gen-01.f)", "history[0].status"),
    ),
    Damage(
        "segment repeated (same line twice)",
        _duplicate(2),
        ("line 3 (gen-01.m)", "segment", "duplicate segment (also on line 2)"),
    ),
    Damage(
        "segment repeated with another text",
        _duplicate(3, "È cresciuta in una famiglia {{ group.f }} numerosa."),
        ("line 4 (rel-01.f)", "duplicate segment (also on line 3)"),
    ),
    Damage(
        "key repeated (text twice, json.loads would keep the last)",
        _edit_line(2, lambda line: line.replace(b'"text": ', b'"text": "La prima versione.", "text": ', 1)),
        ("line 2 (gen-01.m)", "duplicate key 'text'"),
    ),
    Damage(
        "key repeated inside a history event",
        _edit_line(3, lambda line: line.replace(b'"by": ', b'"by": "someone", "by": ', 1)),
        ("line 3 (rel-01.f)", "duplicate key 'by'"),
    ),
    Damage(
        "records out of order",
        _swap(1, 3),
        ("line 2", "not sorted by segment id (gen-01.m after rel-01.f)"),
    ),
    Damage(
        "compact JSON separators",
        _edit_record(1, lambda rec: rec, separators=(",", ":")),
        ("line 1", "not in the form polyprobe writes"),
    ),
    Damage(
        "ASCII escapes instead of UTF-8",
        _edit_line(3, lambda line: json.dumps(json.loads(line)).encode()),
        ("line 3", "not in the form polyprobe writes"),
    ),
    Damage(
        "keys in another order",
        _edit_record(4, lambda rec: rec, sort_keys=True),
        ("line 4", "not in the form polyprobe writes"),
    ),
    Damage(
        "explicit null field",
        _edit_record(2, _with("engine", None)),
        ("line 2", "not in the form polyprobe writes"),
    ),
    Damage(
        "git merge conflict markers",
        _merge_conflict,
        ("line 2", "line 4", "line 6", "invalid JSON"),
    ),
    Damage(
        "NUL bytes",
        _edit_line(2, lambda line: b"\x00\x00\x00\x00"),
        ("line 2", "invalid JSON"),
    ),
    Damage(
        "binary garbage line",
        _insert(4, b"\x89PNG\x1a\x00\xfe\xfd"),
        ("line 5", "invalid UTF-8"),
    ),
    Damage(
        "two records on one line",
        lambda d: _join([_lines(d)[0] + _lines(d)[1], *_lines(d)[2:]]),
        ("line 1", "invalid JSON", "Extra data"),
    ),
    Damage(
        "record pretty-printed over several lines",
        _pretty,
        ("line 1", "line 2", "invalid JSON"),
    ),
]

DECODING: list[Damage] = [
    Damage(
        "an integer of 5,000 digits",
        _edit_line(2, lambda line: line.replace(b'"origin"', b'"n": ' + b"1" * 5000 + b', "origin"', 1)),
        ("line 2 (gen-01.m)", "a number of more than 4,300 digits"),
    ),
    Damage(
        "brackets nested 100,000 deep",
        _edit_line(
            2,
            lambda line: b'{"segment": "gen-01.m", "history": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        ),
        ("line 2 (gen-01.m)", "brackets nested too deep"),
    ),
    Damage(
        "a lone surrogate escape in the text",
        _edit_line(1, lambda line: line.replace(b'"text": "', b'"text": "\\ud800', 1)),
        ("line 1 (gen-01.f) [it] text", "lone surrogate escape (\\ud800)", "cannot be written as UTF-8"),
    ),
    Damage(
        "an empty segment id",
        _edit_record(1, _with("segment", "")),
        ("line 1", "segment", "'' is not a segment id"),
    ),
    Damage(
        "a segment id that is a path",
        _edit_record(4, _with("segment", "../../x")),
        ("line 4", "segment", "'../../x' is not a segment id"),
    ),
    Damage(
        "an unknown history event",
        _edit_record(2, _history(_with("event", "explode"))),
        ("line 2 (gen-01.m)", "history[0].event", "Input should be 'draft'"),
    ),
    Damage(
        "a history time that is not a time",
        _edit_record(3, _history(_with("at", "yesterday"))),
        ("line 3 (rel-01.f)", "history[0].at", "'yesterday' is not a time such as"),
    ),
]
"""Issue 26: lines Python cannot read or write back (json.loads raises, or a string no UTF-8 file
can hold), and fields with rules of their own (segment ids, event kinds, times)."""

DAMAGES += DECODING

"""Reading the user's copy of a published CSV dataset (CrowS-Pairs, the regional study's SOS sets)
strictly: UTF-8 or a located error, a header with the required columns, every record with the
header's number of fields, no NUL or other C0 control in a required column. Every problem is collected (file, line, field) before the caller
refuses the file; nothing is repaired. Text is kept exactly as published: no trimming, no
normalisation (a UTF-8 byte-order mark before the header is the only thing dropped)."""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import Problem
from toolkit.core.fileio import FileFormatError, read_text

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""C0 controls besides tab and line ends, and DEL: a NUL in a sentence comes from a damaged copy,
not from the authors (the C1 controls some published sentences do hold, U+0085, are kept)."""


@dataclass(frozen=True)
class CsvRecord:
    """One record of a CSV file, by column name, with the line it starts on."""

    line: int
    """The line of the file where the record starts (the header is line 1)."""
    values: dict[str, str]


@dataclass(frozen=True)
class CsvFile:
    """A CSV file as read: its name, hash, header, delimiter and records."""

    name: str
    sha256: str
    header: tuple[str, ...]
    delimiter: str
    records: tuple[CsvRecord, ...]


def _delimiter(header_line: str, required: Sequence[str]) -> str:
    """Tab when the header splits into the required columns on tabs, else comma."""
    names = header_line.rstrip("\r\n").split("\t")
    return "\t" if len(names) > 1 and all(name in names for name in required) else ","


def read_csv(path: Path, required: Sequence[str], label: str, problems: list[Problem]) -> CsvFile | None:
    """The records of a comma- or tab-separated file with a header, or None (and ``problems``)."""
    try:
        text = read_text(path, label)
    except FileFormatError as exc:
        problems.append(Problem(label, "(file)", "", exc.detail))
        return None
    sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()  # of the bytes parsed (valid UTF-8 round-trips)
    text = text.removeprefix("\ufeff")
    if not text.strip():
        problems.append(Problem(label, "(file)", "", "is empty; a header line and records are expected"))
        return None
    delimiter = _delimiter(text.split("\n", 1)[0], required)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    start = 1
    try:
        header = next(reader)
        missing = [name for name in required if name not in header]
        repeated = sorted({name for name in header if header.count(name) > 1})
        for name in missing:
            problems.append(
                Problem(label, "line 1", name, f"missing column (the header has: {', '.join(header)})")
            )
        for name in repeated:
            problems.append(Problem(label, "line 1", name, "column named twice in the header"))
        if missing or repeated:
            return None
        records: list[CsvRecord] = []
        start = reader.line_num + 1
        for fields in reader:
            line, start = start, reader.line_num + 1
            if not fields:
                continue  # a blank line
            if len(fields) != len(header):
                problems.append(
                    Problem(label, f"line {line}", "", f"{len(fields)} fields; the header has {len(header)}")
                )
                continue
            values = dict(zip(header, fields, strict=True))
            damaged = [(name, found) for name in required if (found := _CONTROL.search(values[name]))]
            for name, found in damaged:
                problems.append(
                    Problem(
                        label,
                        f"line {line}",
                        name,
                        f"holds U+{ord(found.group(0)):04X}, a control character no published text has "
                        "(a damaged copy?)",
                    )
                )
            if not damaged:
                records.append(CsvRecord(line, values))
    except csv.Error as exc:
        problems.append(Problem(label, f"line {start}", "", f"not valid CSV: {exc}"))
        return None
    return CsvFile(path.name, sha256, tuple(header), delimiter, tuple(records))

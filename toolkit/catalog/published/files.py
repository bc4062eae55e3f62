"""Published datasets imported from the user's own copy (CrowS-Pairs, the regional study's SOS sets):
where an import is kept, what it records about its source, and what it found wrong.

An import is one JSONL file under the git-ignored .polyprobe/imports/<dataset>/ (never committed):
a first line with the source files' names and sha256 (which copy was read), the findings
(known errors kept as published, with file, line and check) and the rows left out (defective
rows that could not be imported, with file, line and why; the release manifest lists them too),
then one line per record, text exactly as published. It is replaced
whole and atomically; the release build hashes it into the manifest's inputs and reads it back
strictly (a damaged import is a located problem, never half-used)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from toolkit.core.errors import Problem
from toolkit.core.fileio import FileFormatError, jsonl_lines, loads_json, read_text, write_text_atomic
from toolkit.core.project import Project
from toolkit.core.records import Record

IMPORTS = ".polyprobe/imports"
FORMAT = 1


class Source(Record):
    """One source file of an import: its name, hash and how many records it gave."""

    file: str
    sha256: str
    records: int


class Finding(Record):
    """A known error of the published data, reported and kept as published."""

    file: str
    line: int
    check: str
    message: str


class Header(Record):
    """An import's first line: which copy was read, what was found wrong in it, what was left out."""

    format: int
    dataset: str
    sources: tuple[Source, ...]
    findings: tuple[Finding, ...]
    left_out: tuple[Finding, ...] = ()
    """Rows of the sources not imported (a defective row, an item that cannot be aligned)."""

    def counts(self) -> dict[str, int]:
        """Findings per check."""
        return dict(sorted(Counter(f.check for f in self.findings).items()))


P = TypeVar("P", bound=Record)


def import_file(dataset: str, name: str) -> str:
    """The import's path, relative to the project root."""
    return f"{IMPORTS}/{dataset}/{name}.jsonl"


def write_import(project: Project, header: Header, pairs: Sequence[Record], name: str) -> Path:
    """Replace the import atomically; keys sorted, so a re-import of the same copy changes no byte."""
    records = [header.model_dump(mode="json"), *(p.model_dump(mode="json") for p in pairs)]
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    path = project.root / import_file(header.dataset, name)
    write_text_atomic(path, text)
    return path


def read_import(
    project: Project, dataset: str, name: str, model: type[P], problems: list[Problem]
) -> tuple[Header, list[P]] | None:
    """The import's header and pairs, or None when there is none; a damaged one adds a Problem
    (its line and field) and gives None."""
    rel = import_file(dataset, name)
    path = project.root / rel
    if not path.is_file():
        return None
    lineno = 1
    try:
        lines = jsonl_lines(read_text(path, rel))
        header = Header.model_validate(loads_json(lines[0]) if lines else None)
        if header.format != FORMAT or header.dataset != dataset:
            problems.append(
                Problem(rel, "line 1", "format", f"not a format-{FORMAT} {dataset} import (re-run it)")
            )
            return None
        pairs = []
        for index, line in enumerate(lines[1:]):
            lineno = index + 2
            pairs.append(model.model_validate(loads_json(line)))
    except FileFormatError as exc:
        problems.append(exc.problem())
        return None
    except json.JSONDecodeError as exc:
        problems.append(Problem(rel, f"line {lineno}", "", f"invalid JSON: {exc.msg} (re-run the import)"))
        return None
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"])
        problems.append(Problem(rel, f"line {lineno}", field, f"{err['msg']} (re-run the import)"))
        return None
    return header, pairs


def read_header(project: Project, rel: str) -> Header | None:
    """The header of the import at ``rel`` (relative to the project root), None when there is
    none or it is not an import's header (the release reads the import itself, strictly)."""
    path = project.root / rel
    if not path.is_file():
        return None
    try:
        lines = jsonl_lines(read_text(path, rel))
        return Header.model_validate(json.loads(lines[0])) if lines else None
    except (FileFormatError, json.JSONDecodeError, ValidationError):
        return None


def pair_findings(
    file: str, line: int, first: str, second: str, row: tuple[str, ...], seen: dict[tuple[str, ...], int]
) -> list[Finding]:
    """What every published pair is checked for: two equal sentences (the pair can only tie) and a
    row repeating an earlier one of the file (``seen``: row -> first line, updated here)."""
    out = []
    if first == second:
        out.append(
            Finding(file=file, line=line, check="equal-sentences", message="the two sentences are equal")
        )
    if row in seen:
        out.append(Finding(file=file, line=line, check="duplicate", message=f"repeats line {seen[row]}"))
    else:
        seen[row] = line
    return out

"""Repairing a damaged store file without losing a line.

A store that cannot be read whole is refused by every command that writes it. `translations
repair` makes it whole again: the records that parse are kept and written back in the form
polyprobe writes (sorted, one per line, no BOM, no blank lines); every line that does not
parse, and every later copy of a repeated segment, is put aside byte for byte in a sidecar
file next to the store (``<suite>.jsonl.rejected-<time>``), never deleted. The user reads the
sidecar, fixes what is worth keeping, appends it to the store and runs the repair again."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.core.fileio import FileFormatError, read_bytes, write_bytes_atomic
from toolkit.core.project import Project
from toolkit.store.files import (
    BadLine,
    StoreFile,
    StoreUnreadable,
    scan_store,
    store_lock,
    store_path,
    suite_of,
)


@dataclass
class Repair:
    """What a repair of one store file did, or would do: records kept, lines set aside, and the
    departures from the written form that the rewrite removes."""

    path: Path
    kept: int = 0
    set_aside: list[BadLine] = field(default_factory=list)
    rewritten: list[tuple[int, str]] = field(default_factory=list)
    """(line, what): departures from the written form that the rewrite removes."""
    sidecar: Path | None = None

    @property
    def needed(self) -> bool:
        """Whether the file needs repairing at all (a whole file is left as it is)."""
        return bool(self.set_aside or self.rewritten)


def store_files(
    project: Project, locale: str | None = None, suite: str | None = None
) -> list[tuple[str, str]]:
    """(locale, store) of the store files on disk, optionally only one locale or suite; a suite's
    stores are its own and those named after it (``sentiment.retired``)."""
    found = sorted(
        (path.parent.name, path.stem)
        for path in project.translations.glob("*/*.jsonl")
        if (locale is None or path.parent.name == locale) and (suite is None or suite_of(path.stem) == suite)
    )
    if not found:
        what = "/".join(part for part in (locale, suite) if part) or "any locale or suite"
        raise InputError(f"no store file for {what} under {project.rel(project.translations)}/")
    return found


def _sidecar(path: Path, stamp: str) -> Path:
    candidate = path.with_name(f"{path.name}.rejected-{stamp}")
    n = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.rejected-{stamp}-{n}")
        n += 1
    return candidate


def repair_store(project: Project, locale: str, suite: str, *, dry_run: bool = False) -> Repair:
    """Make one store file whole; see the module docstring. Under the store's lock."""
    path = store_path(project, locale, suite)
    result = Repair(path)
    with store_lock(project, locale, suite):
        if not os.path.lexists(path):
            return result
        try:
            data = read_bytes(path, project.rel(path))
        except FileFormatError as exc:  # a FIFO or a device: nothing a repair can read or mend
            raise StoreUnreadable([exc.problem(locale)]) from None
        scan = scan_store(data)
        result.kept = len(scan.records)
        result.set_aside = list(scan.bad)
        result.rewritten = list(scan.form)
        if not result.needed:
            return result
        if scan.bad:
            result.sidecar = _sidecar(path, datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"))
        if dry_run:
            return result
        if result.sidecar is not None:
            # the lines put aside are on disk before the store loses them
            write_bytes_atomic(result.sidecar, b"".join(bad.raw + b"\n" for bad in scan.bad))
        store = StoreFile(locale=locale, suite=suite, path=path, records=scan.records)
        store.save()
    return result

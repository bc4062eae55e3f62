"""Reading a release: the only door from the toolkit to the evaluator.

`open_release(path)` checks the manifest against every file (sha256 of the bytes, no file
missing, none extra, schemas and row counts as recorded) before anything is read; a tampered
release is refused. Then each suite and locale is a polars LazyFrame."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from toolkit.core.errors import InputError, PolyprobeError
from toolkit.core.fileio import loads_json
from toolkit.release.card import render_card
from toolkit.release.content import content_sha256, file_sha256
from toolkit.release.manifest import Manifest
from toolkit.release.seal import CARD, release_signature, shape_problems

MANIFEST = "manifest.json"


class ReleaseInvalid(PolyprobeError):
    """The release folder does not match its manifest."""

    exit_code = 2

    def __init__(self, path: Path, differences: list[str]) -> None:
        self.differences = differences
        shown = "\n".join(f"  - {d}" for d in differences[:30])
        more = f"\n  ... and {len(differences) - 30} more" if len(differences) > 30 else ""
        super().__init__(f"{path} does not verify ({len(differences)} difference(s)):\n{shown}{more}")


def _read_manifest(path: Path) -> tuple[Any, list[str]]:
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        return None, [f"{MANIFEST}: missing"]
    try:
        return loads_json(manifest_path.read_text(encoding="utf-8")), []
    except UnicodeDecodeError:
        return None, [f"{MANIFEST}: not UTF-8 text"]
    except json.JSONDecodeError as exc:
        return None, [f"{MANIFEST}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"]


def verify(path: Path, deep: bool = True) -> list[str]:
    """Every difference between the folder and its manifest ([] when it verifies): malformed
    manifest fields, a signature that does not match the manifest, missing, extra or changed
    files, a card that is not the one the manifest describes. ``deep`` also re-reads every data
    file and recomputes its schema, row count and content hash."""
    path = Path(path)
    raw, problems = _read_manifest(path)
    if problems:
        return problems
    manifest, problems = shape_problems(raw, MANIFEST)
    if manifest is None or problems:
        return problems
    files = manifest.files
    if release_signature(raw) != manifest.signature:
        problems.append(
            f"{MANIFEST}: the signature does not match the manifest's fields (edited after the build?)"
        )
    present = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()} - {MANIFEST}
    for rel in sorted(present - set(files)):
        problems.append(f"{rel}: not in the manifest (extra file)")
    for rel, info in sorted(files.items()):
        file = path / rel
        if not file.is_file():
            problems.append(f"{rel}: missing")
            continue
        actual = file_sha256(file)
        if actual != info.sha256:
            problems.append(f"{rel}: sha256 {actual[:16]}… != manifest {info.sha256[:16]}…")
            continue
        if rel == CARD:
            if file.read_bytes() != render_card(manifest).encode("utf-8"):
                problems.append(f"{rel}: not the card the manifest describes (edited after the build?)")
        elif deep and rel.endswith(".parquet"):
            try:
                frame = pl.read_parquet(file)
            except (OSError, pl.exceptions.PolarsError) as exc:
                problems.append(f"{rel}: unreadable Parquet ({str(exc).splitlines()[0]})")
                continue
            schema = {name: str(dtype) for name, dtype in frame.schema.items()}
            if schema != info.schema_:
                problems.append(f"{rel}: schema differs from the manifest")
            if frame.height != info.rows:
                problems.append(f"{rel}: {frame.height} rows, manifest says {info.rows}")
            if content_sha256(frame) != info.content_sha256:
                problems.append(f"{rel}: content hash differs from the manifest")
    return problems


@dataclass
class Release:
    """A release on disk, read through its manifest: the evaluator's one way to its data."""

    path: Path
    manifest: Manifest

    @property
    def version(self) -> str:
        """The release's version."""
        return self.manifest.version

    @property
    def signature(self) -> str:
        """The release's signature (toolkit.release.seal)."""
        return self.manifest.signature

    @property
    def preview(self) -> bool:
        """Whether this is a preview release."""
        return self.manifest.preview

    def suites(self) -> list[str]:
        """The release's suites, sorted."""
        return sorted(self.manifest.suites)

    def locales(self, suite: str) -> list[str]:
        """The locales the release has for a suite."""
        return list(self.manifest.suites[suite].locales)

    def file(self, suite: str, locale: str) -> Path:
        """Where one suite's and locale's data file is (whether or not the release has it)."""
        return self.path / "data" / suite / f"{locale}.parquet"

    def has(self, suite: str, locale: str) -> bool:
        """Whether the release has data for this suite and locale."""
        return f"data/{suite}/{locale}.parquet" in self.manifest.files

    def scan(self, suite: str, locale: str) -> pl.LazyFrame:
        """One suite's and locale's rows, lazily; refused when the release has none."""
        if not self.has(suite, locale):
            raise PolyprobeError(f"release {self.version} has no {suite} data for {locale}")
        return pl.scan_parquet(self.file(suite, locale))

    def scan_all(self, suite: str, locales: list[str] | None = None) -> pl.LazyFrame:
        """One suite's rows for the given locales (default: all it has), lazily; refused when none
        of them has data."""
        wanted = [
            loc for loc in self.locales(suite) if (locales is None or loc in locales) and self.has(suite, loc)
        ]
        if not wanted:
            raise PolyprobeError(
                f"release {self.version} has no {suite} data for {', '.join(locales or []) or 'any locale'}"
            )
        return pl.concat([self.scan(suite, loc) for loc in wanted], how="vertical")

    def lexicon(self, name: str) -> dict[str, Any]:
        """An evaluation lexicon shipped in the release (answers, prompts)."""
        rel = f"lexicons/{name}.json"
        if rel not in self.manifest.files:
            raise PolyprobeError(f"release {self.version} has no {name} lexicon")
        return dict(loads_json((self.path / rel).read_text(encoding="utf-8")))

    def study_groups(self, study: str) -> list[str]:
        """The groups of this release that correspond to a study's identities (see lexicons/studies/)."""
        studies = self.manifest.studies
        if study not in studies:
            raise InputError(
                f"release {self.version} links no groups to study {study!r} (it has: {', '.join(sorted(studies)) or 'none'})"
            )
        return sorted(studies[study].groups)

    def lexicon_pins(self) -> dict[str, Any]:
        """The pinned external lexicons (HurtLex) as the manifest records them."""
        return self.manifest.lexicon_pins.model_dump(mode="json")


def open_release(path: Path | str, verify_files: bool = True) -> Release:
    """Open and verify a release folder (dist/polyprobe-VERSION)."""
    folder = Path(path)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "no such folder"
        raise InputError(f"{folder}: {what} (a release is a folder such as dist/polyprobe-VERSION)")
    raw, problems = _read_manifest(folder)
    manifest = None
    if not problems:
        manifest, problems = shape_problems(raw, MANIFEST)
    if not problems and verify_files:
        problems = verify(folder, deep=False)
    if manifest is None or problems:
        raise ReleaseInvalid(folder, problems)
    return Release(folder, manifest)

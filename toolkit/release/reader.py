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

from toolkit.errors import InputError, PolyprobeError
from toolkit.release.content import content_sha256, file_sha256

MANIFEST = "manifest.json"


class ReleaseInvalid(PolyprobeError):
    """The release folder does not match its manifest."""

    exit_code = 2

    def __init__(self, path: Path, differences: list[str]) -> None:
        self.differences = differences
        shown = "\n".join(f"  - {d}" for d in differences[:30])
        more = f"\n  ... and {len(differences) - 30} more" if len(differences) > 30 else ""
        super().__init__(f"{path} does not verify ({len(differences)} difference(s)):\n{shown}{more}")


def verify(path: Path, deep: bool = True) -> list[str]:
    """Every difference between the folder and its manifest ([] when it verifies). ``deep`` also
    re-reads every data file and recomputes its schema, row count and content hash."""
    path = Path(path)
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        return [f"{MANIFEST}: missing"]
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        files: dict[str, dict[str, Any]] = manifest["files"]
    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return [f"{MANIFEST}: unreadable ({type(exc).__name__})"]
    problems: list[str] = []
    present = {p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()} - {MANIFEST}
    for rel in sorted(present - set(files)):
        problems.append(f"{rel}: not in the manifest (extra file)")
    for rel, info in sorted(files.items()):
        file = path / rel
        if not file.is_file():
            problems.append(f"{rel}: missing")
            continue
        actual = file_sha256(file)
        if actual != info.get("sha256"):
            problems.append(f"{rel}: sha256 {actual[:16]}… != manifest {str(info.get('sha256'))[:16]}…")
            continue
        if deep and rel.endswith(".parquet"):
            frame = pl.read_parquet(file)
            schema = {name: str(dtype) for name, dtype in frame.schema.items()}
            if schema != info.get("schema"):
                problems.append(f"{rel}: schema differs from the manifest")
            if frame.height != info.get("rows"):
                problems.append(f"{rel}: {frame.height} rows, manifest says {info.get('rows')}")
            if content_sha256(frame) != info.get("content_sha256"):
                problems.append(f"{rel}: content hash differs from the manifest")
    signature = manifest.get("signature", "")
    if manifest.get("version") and f"version:{manifest['version']}" not in signature:
        problems.append(f"{MANIFEST}: signature does not match the version")
    return problems


@dataclass
class Release:
    path: Path
    manifest: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def signature(self) -> str:
        return str(self.manifest["signature"])

    @property
    def preview(self) -> bool:
        return bool(self.manifest.get("preview"))

    def suites(self) -> list[str]:
        return sorted(self.manifest["suites"])

    def locales(self, suite: str) -> list[str]:
        return list(self.manifest["suites"][suite]["locales"])

    def file(self, suite: str, locale: str) -> Path:
        return self.path / "data" / suite / f"{locale}.parquet"

    def has(self, suite: str, locale: str) -> bool:
        return f"data/{suite}/{locale}.parquet" in self.manifest["files"]

    def scan(self, suite: str, locale: str) -> pl.LazyFrame:
        if not self.has(suite, locale):
            raise PolyprobeError(f"release {self.version} has no {suite} data for {locale}")
        return pl.scan_parquet(self.file(suite, locale))

    def scan_all(self, suite: str, locales: list[str] | None = None) -> pl.LazyFrame:
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
        if rel not in self.manifest["files"]:
            raise PolyprobeError(f"release {self.version} has no {name} lexicon")
        return dict(json.loads((self.path / rel).read_text(encoding="utf-8")))

    def study_groups(self, study: str) -> list[str]:
        """The groups of this release that correspond to a study's identities (see lexicons/studies/)."""
        studies = self.manifest.get("studies", {})
        if study not in studies:
            raise InputError(
                f"release {self.version} links no groups to study {study!r} (it has: {', '.join(sorted(studies)) or 'none'})"
            )
        return sorted(studies[study]["groups"])

    def lexicon_pins(self) -> dict[str, Any]:
        return dict(self.manifest.get("lexicon_pins", {}))


def open_release(path: Path | str, verify_files: bool = True) -> Release:
    """Open and verify a release folder (dist/polyprobe-VERSION)."""
    folder = Path(path)
    if verify_files:
        problems = verify(folder, deep=False)
        if problems:
            raise ReleaseInvalid(folder, problems)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return Release(folder, manifest)

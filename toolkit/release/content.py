"""Hashes that do not depend on library versions, and version ordering.

A Parquet file's bytes change with the writer's version; its *content* does not. The content
hash is sha256 over canonical rows: rows sorted by sample_id, every value as text (lists joined
with U+001E, null as U+0000), fields joined with U+001F, rows with newlines, in the schema's
column order. The manifest keeps both: bytes (tamper check) and content (provenance)."""

from __future__ import annotations

import hashlib
import re

import polars as pl

from toolkit.core.fileio import sha256_file
from toolkit.core.records import SEMVER_RE

file_sha256 = sha256_file
"""sha256 of a release file's bytes (the tamper check)."""


def canonical_text(frame: pl.DataFrame) -> pl.Series:
    """One string per row, in sample_id order."""
    exprs = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if isinstance(dtype, pl.List):
            col = col.list.join("\x1e")
        exprs.append(col.cast(pl.String).fill_null("\x00"))
    ordered = frame.sort("sample_id") if "sample_id" in frame.columns else frame
    return ordered.select(pl.concat_str(exprs, separator="\x1f").alias("row"))["row"]


def content_sha256(frame: pl.DataFrame) -> str:
    """The content hash of a data frame (see the module docstring): the same rows give the same hash
    whatever the Parquet writer."""
    digest = hashlib.sha256()
    digest.update(("\x1f".join(frame.columns) + "\n").encode())
    for chunk in canonical_text(frame).to_list():
        digest.update(chunk.encode())
        digest.update(b"\n")
    return digest.hexdigest()


def semver_key(version: str) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
    """Sort key with semver precedence: 1.0.0-preview.1 < 1.0.0-preview.2 < 1.0.0."""
    match = SEMVER_RE.match(version)
    if not match:
        raise ValueError(version)
    pre = version.split("-", 1)[1] if "-" in version else ""
    parts: tuple[tuple[int, int | str], ...] = tuple(
        (0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"\.", pre) if p
    )
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)), 0 if pre else 1, parts)

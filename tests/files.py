"""Helpers for bad-input tests: what a folder holds, byte for byte, and a catalog ready to build
releases from."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tests.conftest import REPO


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (hidden ones included), by relative path: two equal
    snapshots mean not one byte changed, and nothing was added or left behind."""
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def leftovers(folder: Path) -> list[str]:
    """Temporary files or folders a failed or interrupted write might have left."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.name.endswith((".tmp", ".old")) and p.name.startswith(".")
    )


def buildable(root: Path) -> Path:
    """The files a release build needs besides the catalog: the HurtLex pins and the review policy."""
    shutil.copy(REPO / "lexicons" / "hurtlex.toml", root / "lexicons" / "hurtlex.toml")
    (root / "translations").mkdir(exist_ok=True)
    shutil.copy(REPO / "translations" / "review-policy.yaml", root / "translations" / "review-policy.yaml")
    return root

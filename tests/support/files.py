"""Helpers for bad-input tests: what a folder holds, byte for byte, and a catalog ready to build
releases from."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tests.conftest import REPO, write_mini_catalog
from toolkit.core.project import Project
from toolkit.release.build import BuildOptions, build_release


def snapshot(folder: Path, locks: bool = True) -> dict[str, str]:
    """sha256 of every file under ``folder`` (hidden ones included; without ``locks``, the
    stores' empty lock files aside), by relative path: two equal snapshots mean not one byte
    changed, and nothing was added or left behind."""
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and (locks or not p.name.endswith(".lock"))
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


def mini_release(folder: Path) -> Path:
    """A preview release of the mini catalog's English sentiment rows (nine), built in ``folder``."""
    root = buildable(write_mini_catalog(folder / "catalog"))
    return build_release(
        Project.at(root),
        BuildOptions(version="0.1.0-preview.1", preview=True, locales=["en"], dist=root / "dist"),
    )

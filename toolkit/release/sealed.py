"""A release is sealed: no command writes inside one. One file added to a release folder (a
rendered file, a run, another release built into its `data/`) makes it fail verification, so
every path a command writes to is checked first: the evaluator's --out and --cache, and the
toolkit's render and XLIFF --out, release build's --dist, a catalog root that is written to."""

from __future__ import annotations

import json
from pathlib import Path

from toolkit.core.errors import InputError
from toolkit.release.reader import MANIFEST

NAME = "polyprobe"
"""Releases are built as dist/NAME-VERSION/."""

_MARKS = ("files", "signature")
"""Fields every release manifest has; a manifest.json of something else (a web app's) lacks them."""


class InsideRelease(InputError):
    """A path a command would write to lies inside a release folder."""


def is_release(folder: Path) -> bool:
    """Whether ``folder`` is a release: its manifest.json is a release manifest, or, damaged,
    sits in a folder named as builds name releases (polyprobe-VERSION)."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return False
    if folder.name.startswith(f"{NAME}-"):
        return True
    try:
        data = json.loads(manifest.read_bytes()[: 1 << 24])
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and all(key in data for key in _MARKS)


def release_around(path: Path) -> Path | None:
    """The release folder ``path`` is (or lies) in, or None."""
    resolved = path.resolve()
    return next((c for c in (resolved, *resolved.parents) if is_release(c)), None)


def refuse_inside_release(path: Path, option: str = "--out") -> None:
    """Refuse to write ``path`` (given as ``option``) when it is inside a release."""
    release = release_around(path)
    if release is not None:
        raise InsideRelease(
            f"{option} {path} is inside the release {release}: a release is never written into "
            "(it would no longer verify); choose a path outside it"
        )

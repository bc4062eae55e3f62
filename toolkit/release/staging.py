"""The temporary folder a release is built in (`dist/.polyprobe-VERSION.XXXX.tmp`), and the
clean-up of those a build could not remove itself.

A build removes its own folder on an error, Ctrl-C or SIGTERM; only a process killed outright
(SIGKILL, a power cut) leaves one behind. Each build holds an exclusive lock on its folder
while it lives (the operating system drops the lock when the process dies, however it dies), so
the next build tells a stale folder from one that a concurrent build is still writing, and
removes only the stale ones."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from toolkit.core.interrupts import discard, interrupts_held
from toolkit.release.sealed import NAME

SUFFIX = ".tmp"


def _locked(folder: Path) -> int | None:
    """An open descriptor holding ``folder``'s lock, or None when another process holds it."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def remove_stale(dist: Path) -> list[Path]:
    """Remove the build folders in ``dist`` whose build is gone (no lock held); return them."""
    removed: list[Path] = []
    for folder in sorted(dist.glob(f".{NAME}-*{SUFFIX}")):
        if not folder.is_dir() or folder.is_symlink():
            continue
        try:
            fd = _locked(folder)
        except OSError:
            continue  # gone meanwhile, or not ours to open
        if fd is None:
            continue  # a build is writing it now
        try:
            discard(folder)
        finally:
            os.close(fd)
        removed.append(folder)
    return removed


@contextlib.contextmanager
def staging_folder(dist: Path, target: Path) -> Iterator[Path]:
    """A new, locked, empty folder next to ``target`` to build in; removed when the block fails
    or is interrupted (on success the block has renamed it to ``target``). It is made under
    another name and renamed once locked, so no clean-up ever sees it unlocked."""
    made: Path | None = None
    fd: int | None = None
    try:
        with interrupts_held():  # the folder exists only once it is known and locked here
            made = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".new", dir=dist))
            fd = _locked(made)
            tmp = made.with_suffix(SUFFIX)
            os.rename(made, tmp)
            made = tmp
        yield tmp
    except BaseException:
        if made is not None:
            discard(made)
        raise
    finally:
        if fd is not None:
            os.close(fd)

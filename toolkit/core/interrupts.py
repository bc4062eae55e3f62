"""Ctrl-C and half-written output: a write that is interrupted removes what it had written so
far, and a second Ctrl-C during that clean-up waits until the clean-up is done instead of
aborting it (which is how a release build used to leave `dist/.polyprobe-*.tmp` behind)."""

from __future__ import annotations

import contextlib
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) until the block ends. An interrupt that arrived meanwhile is raised
    as KeyboardInterrupt when the block ends normally; when the block raises, its exception goes
    on (the command stops either way). Signals reach only the main thread, so elsewhere this is
    a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if pending:
        raise KeyboardInterrupt


def discard(path: Path) -> None:
    """Remove a temporary file or folder completely, whatever interrupts arrive meanwhile."""
    with interrupts_held():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

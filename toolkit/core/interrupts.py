"""Ctrl-C, SIGTERM and half-written output: a write that is interrupted removes what it had
written so far, and a second interrupt during that clean-up waits until the clean-up is done
instead of aborting it (which is how a release build used to leave `dist/.polyprobe-*.tmp`
behind).

SIGTERM is what `kill`, `timeout`, CI cancellation and systemd send. Python's default for it
ends the process on the spot, clean-up and all; the command line (``terminate_like_interrupt``)
turns it into ``Terminated``, a KeyboardInterrupt, so every clean-up written for Ctrl-C runs for
it too."""

from __future__ import annotations

import contextlib
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt (see the module docstring)."""

    received = False
    """Whether one was raised in this process: typer reports any KeyboardInterrupt as its own exit
    code 130, so the command line asks here which signal it was."""

    def __init__(self) -> None:
        super().__init__()
        Terminated.received = True


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def terminate_like_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``Terminated`` (the command line wraps every command in
    it). Signals reach only the main thread, so elsewhere this is a no-op."""
    if not _on_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def interrupt_signals() -> tuple[signal.Signals, ...]:
    """The signals that stop a command with clean-up: SIGINT, and SIGTERM where the command line
    made it one (a library caller keeps SIGTERM's own behaviour)."""
    if signal.getsignal(signal.SIGTERM) is _raise_terminated:
        return (signal.SIGINT, signal.SIGTERM)
    return (signal.SIGINT,)


def interruption(signals: list[int]) -> KeyboardInterrupt:
    """The exception for interrupts that arrived while held: Terminated when SIGTERM was one."""
    return Terminated() if signal.SIGTERM in signals else KeyboardInterrupt()


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and a command's SIGTERM until the block ends. An interrupt that
    arrived meanwhile is raised when the block ends normally; when the block raises, its
    exception goes on (the command stops either way). Signals reach only the main thread, so
    elsewhere this is a no-op."""
    if not _on_main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    previous = {sig: signal.getsignal(sig) for sig in interrupt_signals()}
    for sig in previous:
        signal.signal(sig, hold)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
            signal.signal(sig, handler if handler is not None else default)
    if pending:
        raise interruption(pending)


def discard(path: Path) -> None:
    """Remove a temporary file or folder completely, whatever interrupts arrive meanwhile."""
    with interrupts_held():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

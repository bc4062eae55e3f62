"""Ctrl-C during a machine-translation run (toolkit/translation/machine.py): a request in flight
stops at once, an answered batch is recorded first, so nothing DeepL answered (and billed) is
lost."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

from toolkit.core.interrupts import interrupt_signals, interruption


class Interrupts:
    """Ctrl-C (or the command's SIGTERM) stops a request in flight at once (it is recorded as
    interrupted), but waits while an answered batch is written to the ledger and the store, so
    nothing answered is lost."""

    def __init__(self) -> None:
        self.deferring = False
        self.caught: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in interrupt_signals()}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.deferring:
            self.caught.append(signum)
        else:
            raise interruption([signum])

    def answered(self, value: Any) -> Any:
        """Called the moment an answer is in hand: from now on Ctrl-C waits."""
        self.deferring = True
        return value

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """While an answered batch is written: a signal caught meanwhile is raised after it."""
        self.deferring = True
        try:
            yield
        finally:
            self.deferring = False
        if self.caught:
            raise interruption(self.caught)

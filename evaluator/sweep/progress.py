"""Live progress of a sweep on the driver: one line per running job (model, task, what it is
computing, done/total, rate) and a counter of finished / failed / running / waiting jobs.

Executors report events — the local one directly, the Ray one from its workers through an
actor the driver drains — so the display is the same whichever ran the job."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

EventKind = Literal["start", "phase", "advance"]


@dataclass(frozen=True)
class Event:
    """What a worker says about a job: it started (on process `pid`), entered a phase of `total`
    units (described), or advanced by `n` units."""

    kind: EventKind
    job: str
    description: str = ""
    n: int = 0
    total: int = 0
    pid: int = 0


@dataclass
class JobLine:
    model: str
    task: str
    seed: int
    description: str = "waiting"
    done: int = 0
    total: int = 0
    phase_started: float = field(default_factory=time.monotonic)
    pids: list[int] = field(default_factory=list)

    def rate(self) -> float:
        elapsed = time.monotonic() - self.phase_started
        return self.done / elapsed if elapsed > 0 else 0.0


Listener = Callable[[Event], None]


class Board:
    """The driver's view of every job; rendered with rich when given a console."""

    def __init__(
        self,
        jobs: list[tuple[str, str, str, int]],
        console: Console | None = None,
        listeners: list[Listener] | None = None,
    ) -> None:
        self.lines = {job_id: JobLine(model, task, seed) for job_id, model, task, seed in jobs}
        self.waiting = set(self.lines)
        self.running: list[str] = []
        self.ended: set[str] = set()
        self.finished = 0
        self.failed = 0
        self.skipped = 0
        self.listeners = list(listeners or [])
        self.live = Live(console=console, transient=True, refresh_per_second=4) if console else None

    def __enter__(self) -> Board:
        if self.live:
            self.live.start()
            self.live.update(self.render())
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live:
            self.live.stop()

    def event(self, event: Event) -> None:
        if event.job in self.ended:  # a worker's late word on a job the driver has closed
            return
        line = self.lines[event.job]
        if event.kind == "start":
            self.waiting.discard(event.job)
            if event.job not in self.running:
                self.running.append(event.job)
            if event.pid and (not line.pids or line.pids[-1] != event.pid):
                line.pids.append(event.pid)
            line.description, line.done, line.total = "starting", 0, 0
            line.phase_started = time.monotonic()
        elif event.kind == "phase":
            if event.description == line.description:
                line.total += event.total  # the next chunk of the same computation
            else:
                line.description, line.done, line.total = event.description, 0, event.total
                line.phase_started = time.monotonic()
        else:
            line.done += event.n
        for listener in self.listeners:
            listener(event)
        self._refresh()

    def skip(self, job: str) -> None:
        self.waiting.discard(job)
        self.skipped += 1
        self._refresh()

    def end(self, job: str, ok: bool) -> None:
        self.ended.add(job)
        self.waiting.discard(job)
        if job in self.running:
            self.running.remove(job)
        if ok:
            self.finished += 1
        else:
            self.failed += 1
        self._refresh()

    def counter(self) -> str:
        return (
            f"finished {self.finished} · failed {self.failed} · skipped (done before) {self.skipped} · "
            f"running {len(self.running)} · waiting {len(self.waiting)}"
        )

    def render(self) -> Group:
        table = Table.grid(padding=(0, 2))
        for job_id in self.running:
            line = self.lines[job_id]
            count = f"{line.done:,}/{line.total:,}" if line.total else ""
            rate = f"{line.rate():,.1f}/s" if line.done else ""
            table.add_row(line.model, f"{line.task} s{line.seed}", line.description, count, rate)
        return Group(table, Text(self.counter()))

    def _refresh(self) -> None:
        if self.live:
            self.live.update(self.render())

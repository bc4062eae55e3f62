"""The sweep's driver: what executors (local, Ray) report to. It runs on the driver's node and
writes every job's run folder there, so workers need no shared file system."""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evaluator.backends.base import Progress
from evaluator.errors import WrongModelKind
from evaluator.run import Evaluation, write_run
from evaluator.run_folder import OutMode
from evaluator.sweep.progress import Board, Event
from evaluator.sweep.spec import Job, ModelPlan, Sweep
from evaluator.sweep.summary import Outcome, headline
from evaluator.tasks import descriptor
from toolkit.core.errors import PolyprobeError
from toolkit.core.fileio import loads_json
from toolkit.release import Release

logger = logging.getLogger(__name__)
JOBS = "jobs"


def describe(exc: BaseException) -> str:
    """A job's failure as one line: polyprobe's own errors as they are, others with their type
    (the traceback goes to the log)."""
    if isinstance(exc, WrongModelKind):
        return f"{exc}; give the model `tasks:` in the sweep file (the task entries it runs) to leave this one out"
    if isinstance(exc, PolyprobeError):
        return str(exc)
    logger.debug("job failed:\n%s", "".join(traceback.format_exception(exc)))
    return f"{type(exc).__name__}: {exc}"


class Driver:
    """What executors report to. Runs on the driver: it writes every job's folder, so workers
    need no shared file system."""

    def __init__(self, sweep: Sweep, out: Path, release: Release, board: Board) -> None:
        self.sweep = sweep
        self.out = out
        self.release = release
        self.board = board
        self.outcomes: dict[str, Outcome] = {}
        self.started: dict[str, float] = {}
        self.notes: dict[str, str] = {}

    def folder(self, job: Job) -> Path:
        return self.out / JOBS / job.id

    def event(self, event: Event) -> None:
        if event.kind == "start":
            self.started.setdefault(event.job, time.monotonic())
        self.board.event(event)

    def progress_for(self, job: Job, pid: int) -> Progress:
        """A backend's progress callback that reports to the board (the local executor's)."""

        def progress(description: str, total: int) -> Callable[[int], None]:
            self.event(Event("phase", job.id, description=description, total=total, pid=pid))
            return lambda n: self.event(Event("advance", job.id, n=n, pid=pid))

        return progress

    def _seconds(self, job: Job) -> float | None:
        start = self.started.get(job.id)
        return round(time.monotonic() - start, 1) if start is not None else None

    def _outcome(self, job: Job, **fields: object) -> Outcome:
        return Outcome(job=job.id, model=job.model, task=job.task, seed=job.seed, **fields)  # type: ignore[arg-type]

    def note(self, job: Job, text: str) -> None:
        self.notes[job.id] = "; ".join(filter(None, (self.notes.get(job.id), text)))

    def complete(self, job: Job, evaluation: Evaluation, seconds: float | None = None) -> None:
        """Write the job's run folder, sealed (evaluator.run_folder: whole, or not at all)."""
        evaluation.release["path"] = str(self.release.path)
        final = self.folder(job)
        try:
            write_run(evaluation, final, OutMode.overwrite)
        except (OSError, PolyprobeError) as exc:
            self.fail(job, f"its run folder could not be written: {exc}")
            return
        self.outcomes[job.id] = self._outcome(
            job,
            status="done",
            seconds=seconds if seconds is not None else self._seconds(job),
            figure=headline(evaluation.task, evaluation.metrics),
            folder=str(final),
            signature=evaluation.signature,
            note=self.notes.get(job.id),
        )
        self.board.end(job.id, ok=True)

    def fail(self, job: Job, error: str, seconds: float | None = None) -> None:
        self.outcomes[job.id] = self._outcome(
            job,
            status="failed",
            seconds=seconds if seconds is not None else self._seconds(job),
            error=error,
            note=self.notes.get(job.id),
        )
        self.board.end(job.id, ok=False)

    def skip(self, job: Job) -> None:
        folder = self.folder(job)
        data = loads_json((folder / "metrics.json").read_text(encoding="utf-8"))
        metrics = descriptor(data["task"]).read_metrics(data["metrics"])
        self.outcomes[job.id] = self._outcome(
            job,
            status="skipped",
            figure=headline(data["task"], metrics),
            folder=str(folder),
            signature=data["signature"],
            note="finished before",
        )
        self.board.skip(job.id)


@dataclass(frozen=True)
class Shortfall:
    """A model an executor cannot run at all (e.g. it asks for a GPU no node has), and why."""

    model: str
    """The model's label."""
    reason: str


@dataclass(frozen=True)
class Work:
    """A job that is not an evaluation (a fine-tuning): a module-level function and its arguments
    (both picklable: Ray sends them to a worker), run where the executor places it, with the
    CPUs and GPUs it asks for. What it returns goes back to the driver."""

    id: str
    function: Callable[..., Any]
    arguments: tuple[Any, ...]
    cpus: float = 1
    gpus: float = 0


WorkDone = Callable[[Work, Any, str | None], None]
"""Called on the driver as each work item ends: its result, or None and why it failed."""


class Executor(Protocol):
    """Used as a context manager: entering connects (Ray: starts a local Ray or joins a cluster),
    leaving disconnects; between them, `check` before anything is written, then `run`."""

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...

    def check(self, plans: list[ModelPlan]) -> list[Shortfall]:
        """The models of ``plans`` that this executor could never run."""

    def run(self, plans: list[ModelPlan], driver: Driver) -> None:
        """Run every job of ``plans``, reporting each one's end to the driver."""

    def run_work(self, work: list[Work], done: WorkDone) -> None:
        """Run every item of ``work``, calling ``done`` as each ends (a failed item does not stop
        the others)."""

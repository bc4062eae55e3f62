"""The Ray executor: one actor per model holds the loaded model and runs that model's jobs, with
the CPUs and GPUs the sweep file gives it; Ray places the actors on the cluster's nodes.

Nothing needs a shared file system: the driver sends the release's files to the workers (each
opens and verifies its own copy), the response cache lives on the driver's node behind an actor
(an interrupted or retried job resumes from it wherever it runs), and each job's evaluation comes
back to the driver, which writes every output. A worker process that dies is restarted and its
job retried (Ray's actor restarts, bounded by --max-retries); a job that fails for its own reason
comes back as an error and is not retried.

Ray is an optional extra (`pip install 'polyprobe[ray]'`), imported only here."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.errors import EvaluationError
from evaluator.options import RunOptions
from evaluator.run import Evaluation
from evaluator.sweep.driver import Driver, Work, WorkDone, describe
from evaluator.sweep.progress import Event
from evaluator.sweep.spec import Job, ModelPlan

POLL_SECONDS = 0.2
REPORT_SECONDS = 0.25


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise EvaluationError(
            "--executor ray needs Ray: pip install 'polyprobe[ray]' (on the driver and on every worker node)"
        ) from None
    return ray


def release_files(folder: Path) -> dict[str, bytes]:
    """Every file of a release, by its path inside the release: what the workers receive."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def materialise(files: dict[str, bytes], signature: str) -> Path:
    """The release's files in a folder of this machine's temp dir, one per release (shared by the
    workers of a node, kept for reruns), written whole before it is used."""
    import hashlib

    base = Path(tempfile.gettempdir()) / "polyprobe-releases"
    folder = base / hashlib.sha256(signature.encode()).hexdigest()[:16]
    if folder.is_dir():
        return folder
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=base))
    for name, data in files.items():
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    try:
        tmp.rename(folder)
    except OSError:  # another worker of this node got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


@dataclass
class WorkerResult:
    """A job's answer from a worker: its evaluation, or why it failed (not retried)."""

    evaluation: Evaluation | None
    error: str | None
    seconds: float
    restarted: bool


class DriverServer:
    """On the driver's node: the response cache, read and written by the workers through this
    actor, and the release's files they fetch when they start (or restart)."""

    def __init__(self, path: str | None, files: dict[str, bytes]) -> None:
        from evaluator.cache import ResponseCache
        from toolkit.core.project import cache_dir

        self.cache = ResponseCache(Path(path) if path else cache_dir() / "responses.sqlite")
        self.files = files

    def release_files(self) -> dict[str, bytes]:
        return self.files

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        return self.cache.get_many(keys)

    def put_many(self, items: dict[str, Any]) -> None:
        self.cache.put_many(items)


class RemoteCache:
    """The cache interface of evaluator.cache, answered by the DriverServer actor."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: Any) -> dict[str, Any]:
        import ray

        result: dict[str, Any] = ray.get(self.server.get_many.remote(list(keys)))
        return result

    def put_many(self, items: dict[str, Any]) -> None:
        import ray

        ray.get(self.server.put_many.remote(items))

    def close(self) -> None:
        pass


class ProgressBoard:
    """Workers' progress events, kept until the driver drains them."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def report(self, event: Event) -> None:
        self.events.append(event)

    def drain(self) -> list[Event]:
        events, self.events = self.events, []
        return events


class _Reporter:
    """A backend's progress callback inside a worker: events to the board, at most a few a second."""

    def __init__(self, board: Any, job: str) -> None:
        self.board = board
        self.job = job
        self.pending = 0
        self.last = time.monotonic()

    def __call__(self, description: str, total: int) -> Any:
        self.flush()
        self.board.report.remote(Event("phase", self.job, description=description, total=total))
        return self.advance

    def advance(self, n: int) -> None:
        self.pending += n
        if time.monotonic() - self.last >= REPORT_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.board.report.remote(Event("advance", self.job, n=self.pending))
        self.pending = 0
        self.last = time.monotonic()


class ModelWorker:
    """One model, loaded on first use and kept for all its jobs."""

    def __init__(self, signature: str, cache: Any, board: Any) -> None:
        import ray

        from toolkit.release import open_release

        files = ray.get(cache.release_files.remote())
        self.release = open_release(materialise(files, signature))  # verified like any release
        self.cache = cache
        self.board = board
        self.backend: Any = None
        self.load_error: str | None = None
        self.restarted = bool(ray.get_runtime_context().was_current_actor_reconstructed)

    def run(self, job: str, options: RunOptions) -> WorkerResult:
        from evaluator.run import evaluate, load_backend

        started = time.monotonic()
        self.board.report.remote(Event("start", job, pid=os.getpid()))
        reporter = _Reporter(self.board, job)
        if self.backend is None and self.load_error is None:
            try:
                self.backend = load_backend(options, reporter)
            except Exception as exc:
                self.load_error = f"the model could not be loaded: {describe(exc)}"
        if self.backend is None:
            return WorkerResult(None, self.load_error, _since(started), self.restarted)
        self.backend.progress = reporter
        try:
            evaluation = evaluate(options, self.release, self.backend, RemoteCache(self.cache))
        except Exception as exc:
            return WorkerResult(None, describe(exc), _since(started), self.restarted)
        finally:
            reporter.flush()
        return WorkerResult(evaluation, None, _since(started), self.restarted)


def _since(start: float) -> float:
    return round(time.monotonic() - start, 1)


class RayExecutor:
    def __init__(self, address: str | None = None, max_retries: int = 2) -> None:
        self.address = address
        self.max_retries = max_retries

    def _init(self, ray: Any) -> bool:
        """Connect to the cluster named (or start a local Ray bound to loopback); True when this
        call started Ray and so must stop it."""
        if ray.is_initialized():
            return False
        if self.address and self.address.startswith("ray://"):
            ray.init(address=self.address)
        elif self.address:
            ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING)
        else:
            ray.init(
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.WARNING,
                _node_ip_address="127.0.0.1",
            )
        return True

    def run(self, plans: list[ModelPlan], driver: Driver) -> None:
        ray = import_ray()
        started = self._init(ray)
        actors: list[Any] = []
        try:
            self._run(ray, plans, driver, actors)
        finally:
            for actor in actors:
                ray.kill(actor)
            if started:
                ray.shutdown()

    def run_work(self, work: list[Work], done: WorkDone) -> None:
        """One Ray task per item, with its CPUs and GPUs (Ray places them on the cluster's nodes and
        runs as many at once as the resources allow); a task whose worker dies is retried up to
        --max-retries times, one that fails for its own reason is not."""
        ray = import_ray()
        started = self._init(ray)
        try:
            stored: dict[int, Any] = {}  # an argument several items share (the training data) is sent once

            def shared(value: Any) -> Any:
                if id(value) not in stored:
                    stored[id(value)] = ray.put(value)
                return stored[id(value)]

            pending = {
                ray.remote(item.function)
                .options(num_cpus=item.cpus, num_gpus=item.gpus, max_retries=self.max_retries)
                .remote(*(shared(a) for a in item.arguments)): item
                for item in work
            }
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    item = pending.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:  # the function raised: its own error
                        cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                        done(item, None, describe(cause))
                    except ray.exceptions.RayError as exc:
                        done(
                            item, None, f"its worker died {self.max_retries + 1} time(s): {_first_line(exc)}"
                        )
                    else:
                        done(item, result, None)
        finally:
            if started:
                ray.shutdown()

    def _run(self, ray: Any, plans: list[ModelPlan], driver: Driver, actors: list[Any]) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        try:  # the driver's own node (with Ray Client: the head node)
            here: Any = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        except Exception:
            here = "DEFAULT"
        cache_path = str(driver.sweep.cache) if driver.sweep.cache else None
        cache = (
            ray.remote(DriverServer)
            .options(num_cpus=0, scheduling_strategy=here)
            .remote(cache_path, release_files(driver.release.path))
        )
        board = ray.remote(ProgressBoard).options(num_cpus=0, scheduling_strategy=here).remote()
        actors += [cache, board]
        worker_class = ray.remote(ModelWorker)
        pending: dict[Any, tuple[Job, Any]] = {}
        left: dict[Any, int] = {}
        for plan in plans:
            worker = worker_class.options(
                num_cpus=plan.spec.cpus,
                num_gpus=plan.spec.gpus,
                max_restarts=self.max_retries,
                max_task_retries=self.max_retries,
            ).remote(driver.release.signature, cache, board)
            actors.append(worker)
            left[worker] = len(plan.jobs)
            for job in plan.jobs:  # an actor runs its calls in order: one model, its jobs in turn
                pending[worker.run.remote(job.id, job.options)] = (job, worker)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=POLL_SECONDS)
            for event in ray.get(board.drain.remote()):
                driver.event(event)
            for ref in ready:
                job, worker = pending.pop(ref)
                try:
                    result: WorkerResult = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    driver.fail(job, f"its worker died {self.max_retries + 1} time(s): {_first_line(exc)}")
                else:
                    if result.restarted:
                        driver.note(job, "its worker was restarted")
                    if result.evaluation is None:
                        driver.fail(job, result.error or "failed", seconds=result.seconds)
                    else:
                        driver.complete(job, result.evaluation, seconds=result.seconds)
                left[worker] -= 1
                if left[worker] == 0:  # its model's jobs are done: free its CPUs/GPUs for others
                    ray.kill(worker)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

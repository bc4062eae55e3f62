"""The Ray executor: one actor per model holds the loaded model and runs that model's jobs, with
the CPUs and GPUs the sweep file gives it; Ray places the actors on the cluster's nodes.

Before anything is submitted, every model's request is checked against the cluster's nodes: a
model that asks for more than the largest node has is refused (exit 2) instead of waiting
forever. An actor that still waits for its resources while none of the sweep's jobs runs (held by
someone else, or a node gone) gives up after --wait-timeout seconds, with a message.

Nothing needs a shared file system: the driver sends the release's files to the workers (each
node keeps one verified copy in its temp dir for this sweep, removed when the sweep ends or is
interrupted), the response cache lives on the driver's node behind an actor (an interrupted or
retried job resumes from it wherever it runs), and each job's evaluation comes back to the
driver, which writes every output. A worker process that dies is restarted and its job retried
(Ray's actor restarts, bounded by --max-retries); a job that fails for its own reason comes back
as an error and is not retried.

How Ray is reached (a local Ray on loopback with token authentication, or a cluster by address)
is evaluator.sweep.ray_cluster."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from evaluator.cache import ResponseCache
from evaluator.options import RunOptions
from evaluator.run import Evaluation, evaluate, load_backend
from evaluator.sweep.driver import Driver, Shortfall, Work, WorkDone, describe
from evaluator.sweep.progress import Event
from evaluator.sweep.ray_cluster import connected
from evaluator.sweep.spec import Job, ModelPlan
from toolkit.core.errors import InputError
from toolkit.core.interrupts import interrupts_held
from toolkit.core.project import cache_dir
from toolkit.release import Release, open_release

POLL_SECONDS = 0.2
REPORT_SECONDS = 0.25
WAIT_SECONDS = 600.0
"""How long an actor may wait for its CPUs/GPUs while none of the sweep's jobs runs."""
CLEANUP_SECONDS = 30.0
COPIES = "polyprobe-releases"


def release_files(folder: Path) -> dict[str, bytes]:
    """Every file of a release, by its path inside the release: what the workers receive."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def copies_folder() -> Path:
    """Where a node keeps the release copies of the sweeps running on it."""
    return Path(tempfile.gettempdir()) / COPIES


def copy_name(signature: str) -> str:
    """The folder of one sweep's release copy: the release and a token of this sweep run, so
    that two sweeps on one node never share (or remove) each other's copy."""
    return f"{hashlib.sha256(signature.encode()).hexdigest()[:16]}-{uuid.uuid4().hex[:12]}"


def materialise(files: dict[str, bytes], name: str) -> Path:
    """The release's files in this node's temp dir (shared by the sweep's workers on the node),
    written whole before it is used."""
    base = copies_folder()
    folder = base / name
    if folder.is_dir():
        return folder
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".partial-{name}-", dir=base))
    for relative, data in files.items():
        target = tmp / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    try:
        tmp.rename(folder)
    except OSError:  # another worker of this node got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def remove_copy(name: str) -> None:
    """Remove this sweep's release copy from this node (and the copies folder once empty)."""
    base = copies_folder()
    shutil.rmtree(base / name, ignore_errors=True)
    for partial in base.glob(f".partial-{name}-*"):  # left by a worker killed while writing
        shutil.rmtree(partial, ignore_errors=True)
    with contextlib.suppress(OSError):
        base.rmdir()


def _amount(value: float, unit: str) -> str:
    return f"{value:g} {unit}" + ("" if value == 1 else "s")


def shortfalls(plans: list[ModelPlan], nodes: list[dict[str, Any]]) -> list[Shortfall]:
    """The models whose actor no node of the cluster can hold (``nodes`` as ray.nodes() gives
    them): what each asks for and what the largest node has."""
    return _unplaceable([(plan.label, plan.spec.gpus, plan.spec.cpus, "its actor") for plan in plans], nodes)


def work_shortfalls(work: list[Work], nodes: list[dict[str, Any]]) -> list[Shortfall]:
    """The work items (fine-tunings) no node of the cluster can run, as for models."""
    return _unplaceable([(item.id, item.gpus, item.cpus, "its task") for item in work], nodes)


def _unplaceable(asks: list[tuple[str, float, float, str]], nodes: list[dict[str, Any]]) -> list[Shortfall]:
    alive = [node.get("Resources") or {} for node in nodes if node.get("Alive")]
    largest = max(alive, key=lambda r: (r.get("GPU", 0.0), r.get("CPU", 0.0)), default={})
    has = f"{_amount(largest.get('GPU', 0.0), 'GPU')} and {_amount(largest.get('CPU', 0.0), 'CPU')}"
    found = []
    for label, gpus, cpus, what in asks:
        need = {"GPU": gpus, "CPU": cpus}
        if any(all(node.get(key, 0.0) >= value for key, value in need.items()) for node in alive):
            continue
        found.append(
            Shortfall(
                label,
                f"asks for {_amount(gpus, 'GPU')} and {_amount(cpus, 'CPU')} for {what}, "
                f"but no node of the Ray cluster has that: the largest has {has} "
                f"({len(alive)} node{'' if len(alive) == 1 else 's'}); lower its gpus/cpus in the sweep or study file "
                "or run it on a cluster with such a node",
            )
        )
    return found


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
        import ray  # optional extra: imported where it runs, so a local sweep needs no Ray

        result: dict[str, Any] = ray.get(self.server.get_many.remote(list(keys)))
        return result

    def put_many(self, items: dict[str, Any]) -> None:
        import ray  # optional extra: imported where it runs, so a local sweep needs no Ray

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

    def __init__(self, copy: str) -> None:
        import ray  # optional extra: only a Ray sweep needs it

        # found by name, not passed in: Ray warns that a restartable actor given actor handles
        # might not restart, which is not so here (the driver keeps them alive)
        self.cache: Any = ray.get_actor(_server_name(copy))
        self.board: Any = ray.get_actor(_board_name(copy))
        files = cast("dict[str, bytes]", ray.get(self.cache.release_files.remote()))
        self.release: Release = open_release(materialise(files, copy))  # verified like any release
        self.backend: Any = None
        self.load_error: str | None = None
        self.restarted: bool = bool(ray.get_runtime_context().was_current_actor_reconstructed)

    def run(self, job: str, options: RunOptions) -> WorkerResult:
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


def _server_name(copy: str) -> str:
    return f"polyprobe-cache-{copy}"


def _board_name(copy: str) -> str:
    return f"polyprobe-progress-{copy}"


@dataclass
class _Actor:
    """A model's actor as the driver follows it: its jobs still out, whether one has started."""

    plan: ModelPlan
    handle: Any
    left: int
    started: bool = False


class RayExecutor:
    def __init__(
        self, address: str | None = None, max_retries: int = 2, wait_timeout: float = WAIT_SECONDS
    ) -> None:
        self.address = address
        self.max_retries = max_retries
        self.wait_timeout = wait_timeout
        self._connection = contextlib.ExitStack()
        self.ray: Any = None

    def __enter__(self) -> RayExecutor:
        """Start the local Ray or join the cluster named (evaluator.sweep.ray_cluster)."""
        self.ray = self._connection.enter_context(connected(self.address))
        return self

    def __exit__(self, *exc: object) -> None:
        self._connection.close()
        self.ray = None

    def check(self, plans: list[ModelPlan]) -> list[Shortfall]:
        return shortfalls(plans, self.ray.nodes())

    def run(self, plans: list[ModelPlan], driver: Driver) -> None:
        copy = copy_name(driver.release.signature)
        actors: list[Any] = []
        try:
            self._run(plans, driver, actors, copy)
        finally:
            with interrupts_held():  # a second Ctrl-C waits for the clean-up
                for actor in actors:
                    self.ray.kill(actor)
                self._remove_copies(copy)

    def run_work(self, work: list[Work], done: WorkDone) -> None:
        """One Ray task per item, with its CPUs and GPUs (Ray places them on the cluster's nodes and
        runs as many at once as the resources allow); a task whose worker dies is retried up to
        --max-retries times, one that fails for its own reason is not."""
        ray = self.ray
        unplaceable = work_shortfalls(work, ray.nodes())
        if unplaceable:  # Ray would keep them pending forever
            raise InputError(
                "; ".join(f"{short.model}: {short.reason}" for short in unplaceable) + "; nothing was run"
            )
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
                    done(item, None, f"its worker died {self.max_retries + 1} time(s): {_first_line(exc)}")
                else:
                    done(item, result, None)

    def _remove_copies(self, copy: str) -> None:
        """This sweep's release copies off every node (tasks pinned to each live node), and off
        this machine, which a local Ray's nodes are."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # optional extra, as above

        ray = self.ray
        remover = ray.remote(num_cpus=0, max_retries=0)(remove_copy)
        refs = []
        with contextlib.suppress(Exception):  # a cluster that is going away: what can be done is done
            for node in ray.nodes():
                if node.get("Alive"):
                    strategy = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
                    refs.append(remover.options(scheduling_strategy=strategy).remote(copy))
            ray.wait(refs, num_returns=len(refs), timeout=CLEANUP_SECONDS)
        remove_copy(copy)

    def _run(self, plans: list[ModelPlan], driver: Driver, actors: list[Any], copy: str) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # optional extra, as above

        ray = self.ray
        try:  # the driver's own node (with Ray Client: the head node)
            here: Any = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        except Exception:
            here = "DEFAULT"
        cache_path = str(driver.sweep.cache) if driver.sweep.cache else None
        cache = (
            ray.remote(DriverServer)
            .options(name=_server_name(copy), num_cpus=0, scheduling_strategy=here)
            .remote(cache_path, release_files(driver.release.path))
        )
        board = (
            ray.remote(ProgressBoard)
            .options(name=_board_name(copy), num_cpus=0, scheduling_strategy=here)
            .remote()
        )
        actors += [cache, board]
        worker_class = ray.remote(ModelWorker)
        pending: dict[Any, tuple[Job, _Actor]] = {}
        by_job: dict[str, _Actor] = {}
        for plan in plans:
            handle = worker_class.options(
                num_cpus=plan.spec.cpus,
                num_gpus=plan.spec.gpus,
                max_restarts=self.max_retries,
                max_task_retries=self.max_retries,
            ).remote(copy)
            actors.append(handle)
            actor = _Actor(plan, handle, left=len(plan.jobs))
            for job in plan.jobs:  # an actor runs its calls in order: one model, its jobs in turn
                pending[handle.run.remote(job.id, job.options)] = (job, actor)
                by_job[job.id] = actor
        running: set[str] = set()
        last_change = time.monotonic()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=POLL_SECONDS)
            for event in ray.get(board.drain.remote()):
                if event.kind == "start":
                    running.add(event.job)
                    by_job[event.job].started = True
                    last_change = time.monotonic()
                driver.event(event)
            for ref in ready:
                job, actor = pending.pop(ref)
                running.discard(job.id)
                last_change = time.monotonic()
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
                actor.left -= 1
                if actor.left == 0:  # its model's jobs are done: free its CPUs/GPUs for others
                    ray.kill(actor.handle)
            if pending and not running and time.monotonic() - last_change > self.wait_timeout:
                self._give_up_waiting(pending, driver)
                last_change = time.monotonic()

    def _give_up_waiting(self, pending: dict[Any, tuple[Job, _Actor]], driver: Driver) -> None:
        """Fail the jobs of every actor that never started while nothing of the sweep ran."""
        free = self.ray.available_resources()
        now = f"{_amount(free.get('GPU', 0.0), 'GPU')} and {_amount(free.get('CPU', 0.0), 'CPU')}"
        for ref, (job, actor) in list(pending.items()):
            if actor.started:
                continue
            del pending[ref]
            spec = actor.plan.spec
            driver.fail(
                job,
                f"its actor waited {self.wait_timeout:g} s for {_amount(spec.gpus, 'GPU')} and "
                f"{_amount(spec.cpus, 'CPU')} while none of the sweep's jobs ran (free in the cluster now: "
                f"{now}); free them or raise --wait-timeout",
            )
            actor.left -= 1
            if actor.left == 0:
                self.ray.kill(actor.handle)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

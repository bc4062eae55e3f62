"""`polyprobe eval sweep`: check the sweep file against the release, skip the jobs that finished
before, hand the rest to an executor (local or Ray), write every job's run folder on the
driver, then the summary and the comparison report.

The out folder:

    runs/NAME/sweep.json         the sweep as read (its spec, release, jobs)
    runs/NAME/jobs/<job>/        one ordinary run folder per job (model.task.sSEED)
    runs/NAME/summary.md|json    the job table: status, wall time, main figure, folder or error
    runs/NAME/report/            `eval report` over every finished run
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console

from evaluator.run import job_locales
from evaluator.sweep.driver import JOBS, Driver, Executor, Shortfall
from evaluator.sweep.local import LocalExecutor
from evaluator.sweep.progress import Board, Listener
from evaluator.sweep.ray_executor import WAIT_SECONDS, RayExecutor
from evaluator.sweep.spec import ModelPlan, Sweep, SweepFileError, load_sweep
from evaluator.sweep.state import rerun_reason
from evaluator.sweep.summary import Outcome, write_summary
from evaluator.tasks import descriptor
from toolkit.core.errors import InputError, PolyprobeError
from toolkit.core.fileio import write_text_atomic
from toolkit.release import Release, open_release
from toolkit.release.sealed import refuse_inside_release

logger = logging.getLogger(__name__)
MARKER = "sweep.json"
ExecutorName = Literal["local", "ray"]


@dataclass
class SweepResult:
    out: Path
    outcomes: list[Outcome]
    summary: Path
    report: Path | None
    report_error: str | None

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "failed"]


def _check_out(out: Path) -> None:
    refuse_inside_release(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; give a folder for the sweep")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise InputError(
            f"--out {out}: holds files but no {MARKER}, so it is not a sweep's folder; give a new or empty folder"
        )


def _check_jobs(sweep: Sweep, release: Release) -> None:
    """Every job's task and locales against the release, before anything is loaded."""
    for job in sweep.jobs:
        try:
            job_locales(release, descriptor(job.options.task), job.options)
        except InputError as exc:
            raise SweepFileError(sweep.file, f"job {job.id}", str(exc)) from None


def executor_for(
    name: ExecutorName, ray_address: str | None, max_retries: int, wait_timeout: float = WAIT_SECONDS
) -> Executor:
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(address=ray_address, max_retries=max_retries, wait_timeout=wait_timeout)
    raise InputError(f"--executor {name!r}: choose local or ray")


def _refuse_shortfalls(sweep: Sweep, shortfalls: list[Shortfall]) -> None:
    """Models the executor could never run stop the sweep before anything is written (exit 2)."""
    if not shortfalls:
        return
    index = {plan.label: i for i, plan in enumerate(sweep.models)}
    raise InputError(
        "\n".join(f"{sweep.file}: models[{index[s.model]}] ({s.model}): {s.reason}" for s in shortfalls)
    )


def _labels(outcomes: list[Outcome], sweep: Sweep) -> list[str]:
    several_seeds = len(sweep.spec.seeds) > 1
    tasks_seen: dict[str, int] = {}
    for task in sweep.spec.tasks:
        tasks_seen[task.task] = tasks_seen.get(task.task, 0) + 1
    labels = []
    for o in outcomes:
        task_entry = next(t for t in sweep.spec.tasks if (t.name or t.task) == o.task)
        label = o.model
        if tasks_seen[task_entry.task] > 1:
            label += f" {o.task}"
        if several_seeds:
            label += f" s{o.seed}"
        labels.append(label)
    return labels


def run_sweep(
    sweep_file: Path,
    out: Path,
    *,
    executor: ExecutorName = "local",
    ray_address: str | None = None,
    max_retries: int = 2,
    wait_timeout: float | None = None,
    console: Console | None = None,
    listeners: list[Listener] | None = None,
    report: bool = True,
) -> SweepResult:
    sweep = load_sweep(sweep_file)
    _check_out(out)
    if sweep.cache is not None:
        refuse_inside_release(sweep.cache, f"{sweep_file}: cache:")
    release = open_release(sweep.release)  # refuses a tampered release
    _check_jobs(sweep, release)
    chosen = executor_for(executor, ray_address, max_retries, wait_timeout or WAIT_SECONDS)
    reasons = {job.id: rerun_reason(job, out / JOBS / job.id, release) for job in sweep.jobs}
    todo = [
        ModelPlan(plan.label, plan.spec, pending)
        for plan in sweep.models
        if (pending := [job for job in plan.jobs if reasons[job.id] is not None])
    ]
    # a finished sweep starts no Ray and loads no model
    with chosen if todo else contextlib.nullcontext(chosen):
        if todo:
            _refuse_shortfalls(sweep, chosen.check(todo))
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(
            out / MARKER,
            json.dumps(
                {
                    "sweep_file": str(sweep.file),
                    "spec": sweep.spec.model_dump(),
                    "release": {"path": str(release.path), "version": release.version},
                    "jobs": [job.id for job in sweep.jobs],
                },
                ensure_ascii=False,
                indent=2,
            )
            + "\n",
        )
        board = Board([(j.id, j.model, j.task, j.seed) for j in sweep.jobs], console, listeners)
        driver = Driver(sweep, out, release, board)
        with board:
            for job in sweep.jobs:
                reason = reasons[job.id]
                if reason is None:
                    driver.skip(job)
                elif reason != "not run yet":
                    driver.note(job, f"ran again: {reason}")
            if todo:
                chosen.run(todo, driver)
    outcomes = [driver.outcomes[job.id] for job in sweep.jobs]
    title = f"Sweep {sweep.file.name} on release {release.version}"
    _, summary = write_summary(out, outcomes, title)
    report_path, report_error = None, None
    finished = [o for o in outcomes if o.status != "failed"]
    if report and finished:
        from evaluator.report import build_report  # matplotlib: loaded only when a report is written

        try:
            built = build_report(
                [Path(o.folder or "") for o in finished], out / "report", labels=_labels(finished, sweep)
            )
            report_path = built.html
        except PolyprobeError as exc:
            report_error = str(exc)
    return SweepResult(
        out=out, outcomes=outcomes, summary=summary, report=report_path, report_error=report_error
    )

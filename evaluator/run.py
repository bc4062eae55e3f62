"""One evaluation: one model on one frozen release, one task, one or more locales.

The release is verified before anything is scored; the backend's answers go through the
response cache (an interrupted run resumes where it stopped); the run folder gets
predictions.parquet, metrics.json, signature.txt and run.json (options, release, model
identity, environment, cache statistics), each written atomically."""

from __future__ import annotations

import hashlib
import io
import json
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from evaluator.backends import backend_class
from evaluator.backends.base import Backend, Progress, no_progress
from evaluator.cache import CachedBackend, ResponseCache, ResponseStore
from evaluator.errors import EvaluationError, InputTooLong, WrongModelKind
from evaluator.options import RunOptions
from evaluator.results.base import TaskMetrics
from evaluator.run_folder import METRICS, PREDICTIONS, RUN, SIGNATURE, OutMode, check_out, write_sealed
from evaluator.signature import run_signature
from evaluator.tasks import descriptor, get_task, recorded_options
from evaluator.tasks.base import ScoringContext, missing_lexicon_entries
from evaluator.tasks.descriptor import TaskDescriptor
from toolkit.core.errors import InputError, did_you_mean
from toolkit.core.project import cache_dir
from toolkit.release import Release, open_release
from toolkit.release.sealed import refuse_inside_release


@dataclass
class RunResult:
    out: Path
    signature: str
    metrics: TaskMetrics
    rows: int


def load_backend(options: RunOptions, progress: Progress) -> Backend:
    """The backend ``options.backend`` names, its options checked before its model loads."""
    cls = backend_class(options.backend)
    cls.check_options(options)
    backend = cls.from_options(options)
    backend.progress = progress
    return backend


def selected_groups(release: Release, specs: tuple[str, ...] | None) -> frozenset[str] | None:
    """The group ids ``--groups`` names: ids as given, ``study:ID`` as the release lists them."""
    if not specs:
        return None
    out: set[str] = set()
    for spec in specs:
        if spec.startswith("study:"):
            out.update(release.study_groups(spec.removeprefix("study:")))
        else:
            out.add(spec)
    return frozenset(out)


def check_groups(release: Release, suite: str, specs: tuple[str, ...] | None) -> None:
    """Refuse a ``--groups`` id the release's suite does not have (a typo would otherwise be
    "no rows" after the model had loaded)."""
    if not specs:
        return
    rows = release.scan_all(suite)
    if "group" not in rows.collect_schema().names():
        return  # a suite without identity groups (the task says what --groups means there)
    known = set(rows.select(pl.col("group").unique()).collect().get_column("group").to_list())
    unknown = [spec for spec in specs if not spec.startswith("study:") and spec not in known]
    if unknown:
        raise InputError(
            f"--groups {', '.join(unknown)}: release {release.version} has no such group in {suite}."
            + did_you_mean(unknown[0], (g for g in known if isinstance(g, str)))
        )
    for spec in specs:
        if spec.startswith("study:"):
            release.study_groups(spec.removeprefix("study:"))  # an unknown study is refused here


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str) + "\n"


def job_suite(task: TaskDescriptor, options: RunOptions) -> str:
    """The release suite a job reads: the task's own, or another it can read (``--suite``)."""
    suite = options.suite or task.suite
    if suite not in task.suites:
        raise InputError(f"--suite {suite}: task {task.name} reads {', '.join(task.suites)}")
    return suite


def job_locales(release: Release, task: TaskDescriptor, options: RunOptions) -> list[str]:
    """The locales a run scores: those asked for, or every locale the release has for the task."""
    suite = job_suite(task, options)
    if suite not in release.manifest.suites:
        raise InputError(f"release {release.version} has no {suite} suite")
    available = [loc for loc in release.locales(suite) if release.has(suite, loc)]
    locales = list(options.locales) if options.locales else available
    missing = [loc for loc in locales if loc not in available]
    if missing:
        raise InputError(
            f"release {release.version} has no {suite} data for {', '.join(missing)} (it has {', '.join(available) or 'none'})"
        )
    return locales


@dataclass
class Evaluation:
    """Everything a run folder holds, computed but not yet written: a sweep's worker computes it
    where the model is, and the driver writes it."""

    task: str
    suite: str
    options: RunOptions
    locales: list[str]
    release: dict[str, Any]
    model: dict[str, Any]
    backend_settings: dict[str, Any]
    task_settings: dict[str, Any]
    environment: dict[str, Any]
    cache: dict[str, int]
    truncated: dict[str, Any]
    predictions: pl.DataFrame
    metrics: TaskMetrics
    signature: str
    seconds: float


def evaluate(
    options: RunOptions,
    release: Release,
    backend: Backend,
    cache: ResponseStore,
    *,
    log: Callable[[str], None] = lambda s: None,
) -> Evaluation:
    """One task on an already-loaded model (a sweep loads each model once for all its tasks)."""
    started = time.time()
    task = descriptor(options.task)
    task.check_options(options)
    suite = job_suite(task, options)
    locales = job_locales(release, task, options)
    if backend.identity.kind not in task.kinds:
        raise WrongModelKind(
            f"task {task.name} cannot score a {backend.identity.kind} model (it takes {', '.join(task.kinds)})"
        )
    hits, misses = cache.hits, cache.misses
    ctx = ScoringContext(
        release=release,
        backend=CachedBackend(backend, cache),
        options=options,
        locales=locales,
        groups=selected_groups(release, options.groups),
        suite=suite,
    )
    predictions, truncated, metrics = _score(task, ctx, backend, log)
    environment = {"python": platform.python_version(), "polars": pl.__version__, **backend.environment()}
    model = _model_record(backend)
    task_settings = task.settings(options, backend.identity.kind)
    if suite != task.suite:  # another suite gives other numbers: it goes into the signature
        task_settings["suite"] = suite
    signature = run_signature(
        task=task.name,
        release={"version": release.version, "signature": release.signature},
        model=model,
        backend_settings=backend.settings,
        task_settings=task_settings,
        seed=options.seed,
        limit=options.limit,
        locales=locales,
        environment=environment,
        groups=options.groups,
    )
    return Evaluation(
        task=task.name,
        suite=suite,
        options=options,
        locales=locales,
        release=_release_record(release, locales),
        model=model,
        backend_settings=backend.settings,
        task_settings=task_settings,
        environment=environment,
        cache={"hits": cache.hits - hits, "computed": cache.misses - misses},
        truncated={"policy": options.truncation, "inputs": truncated},
        predictions=predictions,
        metrics=metrics,
        signature=signature,
        seconds=round(time.time() - started, 1),
    )


def _score(
    task: TaskDescriptor, ctx: ScoringContext, backend: Backend, log: Callable[[str], None]
) -> tuple[pl.DataFrame, int, TaskMetrics]:
    """The task's rows, checked, scored and measured: its predictions, how many inputs were cut,
    and its metrics."""
    scorer = get_task(task.name)
    release, suite, locales, options = ctx.release, ctx.suite, ctx.locales, ctx.options
    rows = scorer.rows(ctx)
    if rows.height == 0:
        only = f" of the groups {', '.join(options.groups)}" if options.groups else ""
        raise EvaluationError(f"no {suite} rows{only} for {', '.join(locales)} in release {release.version}")
    log(f"{rows.height} {suite} rows in {', '.join(locales)}")
    missing = missing_lexicon_entries(release, scorer.lexicon_needs(ctx))
    if missing:
        raise InputError(
            f"release {release.version} lacks what task {task.name} reads, so nothing was scored:\n  "
            + "\n  ".join(missing)
        )
    truncated_before = backend.truncated
    try:
        predictions = scorer.predict(ctx, rows)
    except InputTooLong as exc:
        raise InputTooLong(exc.length, exc.limit, exc.count, exc.text, exc.reserve, task=task.name) from None
    missing = [c for c in task.predictions if c not in predictions.columns]
    if missing:  # the columns the report and the descriptor promise
        raise EvaluationError(f"task {task.name} wrote no {', '.join(missing)} column(s) in its predictions")
    truncated = backend.truncated - truncated_before
    if truncated:
        log(
            f"{truncated} input(s) longer than the model's limit of {getattr(backend, 'limit', None)} "
            f"tokens were cut ({options.truncation} truncation)"
        )
    metrics = scorer.metrics(ctx, predictions)
    for warning in metrics.run_warnings():
        log(f"warning: {warning}")
    return predictions, truncated, metrics


def _model_record(backend: Backend) -> dict[str, Any]:
    """run.json's ``model``: what the backend says the model is."""
    return {
        "name": backend.identity.name,
        "resolved": backend.identity.resolved,
        "revision": backend.identity.revision,
        "kind": backend.identity.kind,
        "labels": list(backend.identity.labels),
    }


def _release_record(release: Release, locales: list[str]) -> dict[str, Any]:
    """run.json's ``release``: where it was, which one, and the manifest's entries of the locales."""
    return {
        "path": str(release.path),
        "version": release.version,
        "signature": release.signature,
        "preview": release.preview,
        "locales": {
            code: release.manifest.locales[code].model_dump(mode="json")
            for code in locales
            if code in release.manifest.locales
        },
    }


def wanted_run(task: str, options: RunOptions, release_signature: str) -> dict[str, Any]:
    """What --resume compares with the run a folder already holds: task, options and release."""
    return {
        "task": task,
        "options": json.loads(_json(recorded_options(options))),
        "release_signature": release_signature,
    }


def write_run(evaluation: Evaluation, out: Path, mode: OutMode = OutMode.new) -> RunResult:
    """The run folder, sealed: predictions, metrics, signature and run.json (with the sha256 of
    the other three) written whole into a temporary folder and renamed into place."""
    ev = evaluation
    buffer = io.BytesIO()
    ev.predictions.write_parquet(buffer, compression="zstd")
    files = {
        PREDICTIONS: buffer.getvalue(),
        METRICS: _json({"task": ev.task, "signature": ev.signature, "metrics": ev.metrics.dump()}).encode(),
        SIGNATURE: (ev.signature + "\n").encode(),
    }
    files[RUN] = _json(
        {
            "task": ev.task,
            "suite": ev.suite,
            "options": recorded_options(ev.options),
            "locales": ev.locales,
            "release": ev.release,
            "model": ev.model,
            "backend_settings": ev.backend_settings,
            "task_settings": ev.task_settings,
            "environment": ev.environment,
            "cache": ev.cache,
            "truncated": ev.truncated,
            "rows": ev.predictions.height,
            "seconds": ev.seconds,
            "signature": ev.signature,
            "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
        }
    ).encode()
    write_sealed(out, mode, wanted_run(ev.task, ev.options, str(ev.release["signature"])), files)
    return RunResult(out=out, signature=ev.signature, metrics=ev.metrics, rows=ev.predictions.height)


def run_evaluation(
    options: RunOptions,
    release_path: Path,
    out: Path,
    *,
    mode: OutMode = OutMode.new,
    cache_path: Path | None = None,
    progress: Progress = no_progress,
    log: Callable[[str], None] = lambda s: None,
) -> RunResult:
    """Score one model on one task of a release into the run folder ``out`` (written whole, or
    not at all; see evaluator.run_folder for what ``mode`` allows ``out`` to hold already)."""
    started = time.time()
    release = open_release(release_path)  # refuses a tampered release
    task = descriptor(options.task)
    task.check_options(options)
    wanted = wanted_run(task.name, options, release.signature)
    check_out(out, mode, wanted)  # before any work: a refused folder costs nothing
    job_locales(release, task, options)  # before the model is loaded
    if cache_path is not None:
        refuse_inside_release(cache_path, "--cache")
    check_groups(release, job_suite(task, options), options.groups)  # before the model is loaded
    cache = ResponseCache(cache_path or cache_dir() / "responses.sqlite")  # a broken cache fails first
    try:
        log(f"loading {options.model} ({options.backend})")
        backend = load_backend(options, progress)
        evaluation = evaluate(options, release, backend, cache, log=log)
    finally:
        cache.close()
    evaluation.seconds = round(time.time() - started, 1)
    return write_run(evaluation, out, mode)

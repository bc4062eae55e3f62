"""One evaluation: one model on one frozen release, one task, one or more locales.

The release is verified before anything is scored; the backend's answers go through the
response cache (an interrupted run resumes where it stopped); the run folder gets
predictions.parquet, metrics.json, signature.txt and run.json (options, release, model
identity, environment, cache statistics), each written atomically."""

from __future__ import annotations

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
from evaluator.cache import CachedBackend, ResponseCache
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions
from evaluator.signature import run_signature
from evaluator.tasks import get_task
from evaluator.tasks.base import Context
from toolkit.errors import InputError
from toolkit.fileio import atomic_path, write_text_atomic
from toolkit.lexicon_pins import cache_dir
from toolkit.release import open_release

PREDICTIONS = "predictions.parquet"
METRICS = "metrics.json"
SIGNATURE = "signature.txt"
RUN = "run.json"


@dataclass
class RunResult:
    out: Path
    signature: str
    metrics: dict[str, Any]
    rows: int


def load_backend(options: RunOptions, progress: Progress) -> Backend:
    cls = backend_class(options.backend)
    if options.backend == "transformers":
        from evaluator.default_model import ALIASES, NAME, resolve_default

        if options.model in ALIASES:
            backend = cls.load(
                NAME,
                resolved=str(resolve_default()),
                device=options.device,
                dtype=options.dtype,
                batch_size=options.batch_size,
            )
        else:
            backend = cls.load(
                options.model, device=options.device, dtype=options.dtype, batch_size=options.batch_size
            )
    elif options.backend == "openai":
        backend = cls.load(
            options.model, base_url=options.api.get("base_url"), rate=float(options.api.get("rate", 5.0))
        )
    else:
        backend = cls.load(options.model, dtype=options.dtype, seed=options.seed)
    backend.progress = progress
    return backend  # type: ignore[no-any-return]


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str) + "\n"


def run_evaluation(
    options: RunOptions,
    release_path: Path,
    out: Path,
    *,
    cache_path: Path | None = None,
    progress: Progress = no_progress,
    log: Callable[[str], None] = lambda s: None,
) -> RunResult:
    started = time.time()
    release = open_release(release_path)  # refuses a tampered release
    task = get_task(options.task)
    if task.suite not in release.manifest["suites"]:
        raise InputError(f"release {release.version} has no {task.suite} suite")
    available = [loc for loc in release.locales(task.suite) if release.has(task.suite, loc)]
    locales = list(options.locales) if options.locales else available
    missing = [loc for loc in locales if loc not in available]
    if missing:
        raise InputError(
            f"release {release.version} has no {task.suite} data for {', '.join(missing)} (it has {', '.join(available) or 'none'})"
        )
    log(f"loading {options.model} ({options.backend})")
    backend = load_backend(options, progress)
    if backend.identity.kind not in task.kinds:
        raise EvaluationError(
            f"task {task.name} cannot score a {backend.identity.kind} model (it takes {', '.join(task.kinds)})"
        )
    cache = ResponseCache(cache_path or cache_dir() / "responses.sqlite")
    try:
        ctx = Context(
            release=release, backend=CachedBackend(backend, cache), options=options, locales=locales
        )
        rows = task.rows(ctx)
        if rows.height == 0:
            raise EvaluationError(
                f"no {task.suite} rows for {', '.join(locales)} in release {release.version}"
            )
        log(f"{rows.height} {task.suite} rows in {', '.join(locales)}")
        predictions = task.predict(ctx, rows)
        metrics = task.metrics(ctx, predictions)
    finally:
        hits, misses = cache.hits, cache.misses
        cache.close()
    environment = {"python": platform.python_version(), "polars": pl.__version__, **backend.environment()}
    model = {
        "name": backend.identity.name,
        "resolved": backend.identity.resolved,
        "revision": backend.identity.revision,
        "kind": backend.identity.kind,
        "labels": list(backend.identity.labels),
    }
    task_settings = task.settings(options, backend.identity.kind)
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
    )
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / PREDICTIONS) as tmp:
        predictions.write_parquet(tmp, compression="zstd")
    write_text_atomic(out / METRICS, _json({"task": task.name, "signature": signature, "metrics": metrics}))
    write_text_atomic(out / SIGNATURE, signature + "\n")
    write_text_atomic(
        out / RUN,
        _json(
            {
                "task": task.name,
                "options": options.as_dict(),
                "locales": locales,
                "release": {
                    "path": str(release.path),
                    "version": release.version,
                    "signature": release.signature,
                    "preview": release.preview,
                },
                "model": model,
                "backend_settings": backend.settings,
                "task_settings": task_settings,
                "environment": environment,
                "cache": {"hits": hits, "computed": misses},
                "rows": predictions.height,
                "seconds": round(time.time() - started, 1),
                "signature": signature,
            }
        ),
    )
    return RunResult(out=out, signature=signature, metrics=metrics, rows=predictions.height)

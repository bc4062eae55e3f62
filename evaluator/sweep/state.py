"""Which jobs a sweep run again can skip: a job is finished when its folder holds a complete run
whose signature matches what the job would produce now — the same release, task, seed, limit,
locales and options, the same polyprobe version, and (for a model in a local folder) the same
model files. Everything else runs; an interrupted job resumes from the response cache."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

import toolkit
from evaluator.run import METRICS, PREDICTIONS, RUN, SIGNATURE
from evaluator.sweep.spec import Job
from evaluator.tasks import recorded_options
from toolkit.core.fileio import loads_json
from toolkit.release import Release


def _parts(signature: str) -> dict[str, str]:
    return dict(part.split(":", 1) for part in signature.split("|") if ":" in part)


def _normal(data: Any) -> Any:
    return json.loads(json.dumps(data, sort_keys=True, default=str))


def rerun_reason(job: Job, folder: Path, release: Release) -> str | None:
    """None when ``folder`` holds this job's finished run; else why the job must run."""
    if not folder.is_dir():
        return "not run yet"
    try:
        run = loads_json((folder / RUN).read_text(encoding="utf-8"))
        metrics = loads_json((folder / METRICS).read_text(encoding="utf-8"))
        signature = (folder / SIGNATURE).read_text(encoding="utf-8").strip()
        rows = pl.read_parquet_schema(folder / PREDICTIONS)
    except (OSError, ValueError, pl.exceptions.PolarsError):
        return "its folder is incomplete"
    if not rows or not (run.get("signature") == metrics.get("signature") == signature):
        return "its folder is incomplete"
    parts = _parts(signature)
    expected = {
        "task": job.options.task,
        "release": release.version,
        "seed": str(job.options.seed),
        "limit": str(job.options.limit) if job.options.limit is not None else "none",
        "toolkit": toolkit.__version__,
    }
    changed = [key for key, value in expected.items() if parts.get(key) != value]
    if changed:
        return f"its signature differs ({', '.join(changed)})"
    if (run.get("release") or {}).get("signature") != release.signature:
        return "the release changed"
    if job.options.locales and run.get("locales") != list(job.options.locales):
        return "its signature differs (locales)"
    if run.get("options") != _normal(recorded_options(job.options)):
        return "its options changed"
    model = Path(job.options.model)
    local = job.options.backend == "transformers" and model.is_dir()
    if local and (run.get("model") or {}).get("revision") != model_revision(model):
        return "the model's files changed"
    return None


def model_revision(folder: Path) -> str:
    """A local model's revision (the hash of its files), read once per sweep for all its finished
    jobs: the files are hashed again only when one of them changed size or time."""
    stamp = tuple(
        sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file())
    )
    return _hashed_revision(folder.resolve(), stamp)


@cache
def _hashed_revision(folder: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    from evaluator.backends.hf import files_revision  # torch: loaded only for a local model

    return files_revision(folder)

"""`polyprobe eval merge`: the mean (and standard deviation) of several runs' metrics — Levy et
al. average three fine-tuning seeds. Runs must share the task, the suite, the release and the
locales; each is read and checked as `eval report` reads it. Only figures are averaged: the
uncertainty of each run (evaluator.metrics.uncertainty.is_uncertainty) is left out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.metrics.stats import merge_runs
from evaluator.metrics.uncertainty import is_uncertainty
from evaluator.report.runs import Run, load_run
from toolkit.core.errors import InputError
from toolkit.core.fileio import loads_json, write_text_atomic
from toolkit.release.sealed import refuse_inside_release


def _check_merge_out(out: Path) -> None:
    """--out of a merge is new, empty, or an earlier merge (replaced); never inside a release,
    never a run or a folder with other files (their metrics.json would be lost)."""
    refuse_inside_release(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder")
    names = sorted(p.name for p in out.iterdir())
    if names and not _is_merge(out):
        raise InputError(
            f"--out {out} holds {', '.join(names[:5])}{' …' if len(names) > 5 else ''}, which a merge would "
            "replace; choose a new or empty folder"
        )


def _is_merge(folder: Path) -> bool:
    try:
        data = loads_json((folder / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    only = [p.name for p in folder.iterdir()] == ["metrics.json"]
    return only and isinstance(data, dict) and "runs" in data and "seeds" in data


NOTE = (
    "Only the figures are averaged. Each run's uncertainty (n_units, bootstrap intervals *_ci_low / "
    "*_ci_high / *_ci95, ci_replicates, p_value, p_holm) is left out: a mean of p-values is no "
    "p-value and a mean of interval bounds no interval. Read them in each run's metrics.json."
)
"""Written into every merged metrics.json, beside the keys it left out (``left_out``)."""


def merge_run_folders(runs: list[Path], out: Path) -> dict[str, Any]:
    """The mean of the runs' metrics, each run read and checked as `eval report` reads it
    (evaluator.report.runs.load_run: its files' hashes and signatures); runs of different tasks,
    suites, locales or releases are refused, naming the folders."""
    _check_merge_out(out)
    seen: dict[Path, Path] = {}
    for run in runs:
        if run.resolve() in seen:
            raise InputError(f"{run}: the same run folder is given twice ({seen[run.resolve()]})")
        seen[run.resolve()] = run
    loaded = [load_run(run) for run in runs]
    missing = [r for r in loaded if r.info.release.signature is None]
    if missing:
        raise InputError(
            f"{_folders(missing)}: run.json has no release.signature; the runs' releases cannot be compared"
        )
    _same(loaded, "task", lambda r: r.task)
    _same(loaded, "suite", lambda r: r.suite or r.task)  # sos runs on polyprobe's set or the study's
    _same(loaded, "locales", lambda r: ", ".join(r.locales))
    _same(loaded, "release", lambda r: f"{r.release} {r.info.release.signature}")
    metrics = [r.metrics.dump() for r in loaded]
    merged = {
        "task": loaded[0].task,
        "runs": [str(r) for r in runs],
        "seeds": [r.info.options.seed for r in loaded],
        "models": sorted({r.model for r in loaded}),
        "signature": "polyprobe-merge|" + "|".join(f"run:{s}" for s in sorted(r.signature for r in loaded)),
        "metrics": _lists(merge_runs([_indexed(m) for m in metrics], leave_out=is_uncertainty)),
        "left_out": sorted({key for m in metrics for key in _keys(m) if is_uncertainty(key)}),
        "note": NOTE,
    }
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(
        out / "metrics.json", json.dumps(merged, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    )
    return merged


def _same(runs: list[Run], what: str, value: Callable[[Run], str]) -> None:
    """Refuse runs that differ in ``what``, naming the folders of each value."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        groups.setdefault(value(run), []).append(run)
    if len(groups) > 1:
        parts = [f"{_folders(members)} ({shown or 'none'})" for shown, members in groups.items()]
        raise InputError(f"runs differ in {what}: {'; '.join(parts)}")


def _folders(runs: list[Run]) -> str:
    return ", ".join(str(r.path) for r in runs)


def _keys(value: Any) -> set[str]:
    """Every key of a metrics object, at every level."""
    if isinstance(value, dict):
        return {str(k) for k in value} | {key for v in value.values() for key in _keys(v)}
    if isinstance(value, list):
        return {key for v in value for key in _keys(v)}
    return set()


def _indexed(value: Any) -> Any:
    """Tables (lists of rows) become mappings by position, so rows of the same release and
    locale are merged with each other (their order is deterministic)."""
    if isinstance(value, list):
        return {f"#{i}": _indexed(v) for i, v in enumerate(value)}
    if isinstance(value, dict):
        return {k: _indexed(v) for k, v in value.items()}
    return value


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        if value and all(isinstance(k, str) and k.startswith("#") and k[1:].isdigit() for k in value):
            return [_lists(value[f"#{i}"]) for i in range(len(value))]
        return {k: _lists(v) for k, v in value.items()}
    return value

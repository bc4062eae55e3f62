"""`polyprobe eval merge`: the mean (and standard deviation) of several runs' metrics — Levy et
al. average three fine-tuning seeds. Runs must share the task, the release and the locales."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluator.metrics.stats import merge_runs
from evaluator.run_folder import METRICS, refuse_inside_release
from evaluator.tasks import descriptor
from toolkit.core.errors import InputError
from toolkit.core.fileio import write_text_atomic


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
        data = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    only = [p.name for p in folder.iterdir()] == ["metrics.json"]
    return only and isinstance(data, dict) and "runs" in data and "seeds" in data


def merge_run_folders(runs: list[Path], out: Path) -> dict[str, Any]:
    _check_merge_out(out)
    infos, metrics = [], []
    for run in runs:
        try:
            infos.append(json.loads((run / "run.json").read_text(encoding="utf-8")))
            data = json.loads((run / METRICS).read_text(encoding="utf-8"))
            task, raw = data["task"], data["metrics"]
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"{run}: not a polyprobe run folder ({type(exc).__name__})") from None
        try:  # each run's metrics as its task's model: a malformed one is refused, not averaged
            metrics.append(descriptor(str(task)).read_metrics(raw).dump())
        except InputError as exc:
            raise InputError(f"{run / METRICS}: {exc}") from None
    for field in ("task", "locales"):
        values = {json.dumps(i[field]) for i in infos}
        if len(values) != 1:
            raise InputError(f"runs differ in {field}: {', '.join(sorted(values))}")
    suites = {str(i.get("suite", i["task"])) for i in infos}  # sos runs on polyprobe's set or the study's
    if len(suites) != 1:
        raise InputError(f"runs scored different suites: {', '.join(sorted(suites))}")
    releases = {i["release"]["signature"] for i in infos}
    if len(releases) != 1:
        raise InputError("runs were scored on different releases")
    signatures = sorted(i["signature"] for i in infos)
    merged = {
        "task": infos[0]["task"],
        "runs": [str(r) for r in runs],
        "seeds": [i["options"]["seed"] for i in infos],
        "models": sorted({i["model"]["name"] for i in infos}),
        "signature": "polyprobe-merge|" + "|".join(f"run:{s}" for s in signatures),
        "metrics": _lists(merge_runs([_indexed(m) for m in metrics])),
    }
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(
        out / "metrics.json", json.dumps(merged, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    )
    return merged


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

"""Run folders as the report reads them: checked before anything is drawn, so a missing or
malformed file is one clear error naming the folder and the file, never a traceback halfway
through a plot."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from evaluator.run_folder import METRICS, PREDICTIONS, RUN, SIGNATURE
from toolkit.core.errors import InputError
from toolkit.core.fileio import sha256_file

TASK_ORDER: tuple[str, ...] = ("sentiment", "sos", "crows-pairs", "honest", "bbq", "iat", "ifm")


class RunFolderError(InputError):
    """A run folder is missing, incomplete or malformed."""

    def __init__(self, folder: Path, file: str | None, message: str) -> None:
        where = f"{folder / file}" if file else f"{folder}"
        super().__init__(f"{where}: {message}")
        self.folder = folder
        self.file = file


class LabelError(InputError):
    """--labels does not give one distinct label per run."""


# What each task's metrics.json must hold (the rest is read with defaults): a path of keys, with
# "*" for every entry of a mapping, and the type found there.
_SHAPES: dict[str, tuple[tuple[str, type], ...]] = {
    "sentiment": (("per_locale", dict), ("per_locale.*", dict), ("per_locale.*.attributes", dict)),
    "sos": (
        ("per_locale", dict),
        ("per_locale.*", dict),
        ("per_locale.*.overall", dict),
        ("per_locale.*.by_group", list),
        ("per_locale.*.by_attribute", list),
        ("per_locale.*.by_standing", list),
    ),
    "crows-pairs": (
        ("per_locale", dict),
        ("per_locale.*", dict),
        ("per_locale.*.overall", dict),
        ("per_locale.*.by_direction", list),
        ("per_locale.*.by_bias_type", list),
    ),
    "honest": (
        ("per_locale", dict),
        ("per_locale.*", dict),
        ("per_locale.*.by_locale", list),
        ("per_locale.*.by_attribute_standing", list),
        ("per_locale.*.by_variant", list),
        ("per_locale.*.by_category", list),
    ),
    "bbq": (("overall", dict), ("by_locale", list), ("by_locale_category", list)),
    "iat": (("by_category", list),),
    "ifm": (("by_locale_instruction", list), ("by_standing", list)),
}


@dataclass
class Run:
    path: Path
    label: str
    task: str
    metrics: dict[str, Any]
    info: dict[str, Any]
    signature: str
    _predictions: pl.DataFrame | None = field(default=None, repr=False)

    @property
    def model(self) -> str:
        return str(self.info.get("model", {}).get("name", "?"))

    @property
    def model_short(self) -> str:
        """`HuggingFaceTB/SmolLM2-135M-Instruct (GGUF …)` → `SmolLM2-135M-Instruct`."""
        name = self.model.split(" (")[0].rstrip("/")
        return name.rsplit("/", 1)[-1] or name

    @property
    def suite(self) -> str | None:
        """The release suite scored, when it is not the task's own (sos on the study's sets)."""
        value = self.info.get("task_settings", {}).get("suite")
        return str(value) if value else None

    @property
    def revision(self) -> str:
        return str(self.info.get("model", {}).get("revision") or "")

    @property
    def release(self) -> str:
        return str(self.info.get("release", {}).get("version", "?"))

    @property
    def preview(self) -> bool:
        return bool(self.info.get("release", {}).get("preview"))

    @property
    def locales(self) -> list[str]:
        return [str(loc) for loc in self.info.get("locales") or []]

    def predictions(self, columns: Sequence[str]) -> pl.DataFrame:
        """The predictions with at least ``columns`` (read once); an error names the file."""
        if self._predictions is None:
            try:
                self._predictions = pl.read_parquet(self.path / PREDICTIONS)
            except Exception as exc:  # polars raises several kinds for a damaged file
                raise RunFolderError(
                    self.path, PREDICTIONS, f"cannot be read as Parquet ({type(exc).__name__})"
                ) from None
        missing = [c for c in columns if c not in self._predictions.columns]
        if missing:
            raise RunFolderError(
                self.path, PREDICTIONS, f"has no column(s) {', '.join(missing)} (a {self.task} run has them)"
            )
        return self._predictions


def _read_json(folder: Path, name: str) -> dict[str, Any]:
    path = folder / name
    if not path.is_file():
        raise RunFolderError(folder, name, "missing (is this a `polyprobe eval run` folder?)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise RunFolderError(folder, name, "is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RunFolderError(folder, name, f"is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise RunFolderError(folder, name, f"must hold a JSON object, not a {type(data).__name__}")
    return data


def _check_shape(folder: Path, task: str, metrics: dict[str, Any]) -> None:
    for path, kind in _SHAPES[task]:
        for where, value in _walk(metrics, path.split("."), "metrics"):
            if not isinstance(value, kind):
                found = "missing" if value is None else f"a {type(value).__name__}"
                raise RunFolderError(
                    folder, METRICS, f"{where} must be a {'list' if kind is list else 'mapping'} ({found})"
                )
            if isinstance(value, list) and any(not isinstance(row, dict) for row in value):
                raise RunFolderError(folder, METRICS, f"{where} must be a list of rows (JSON objects)")


def _walk(value: Any, keys: list[str], where: str) -> list[tuple[str, Any]]:
    if not keys:
        return [(where, value)]
    key, rest = keys[0], keys[1:]
    if not isinstance(value, dict):
        return [(where, value)]
    if key == "*":
        return [item for k, v in value.items() for item in _walk(v, rest, f"{where}.{k}")]
    return _walk(value.get(key), rest, f"{where}.{key}")


def _check_one_run(folder: Path, info: dict[str, Any], signature: str) -> None:
    """The files are the ones this run wrote together: their sha256 as recorded in run.json
    (runs from before it recorded them: the row count), and the seed of the signature."""
    recorded = info.get("files")
    if isinstance(recorded, dict):
        for name in (PREDICTIONS, METRICS, SIGNATURE):
            if name in recorded and sha256_file(folder / name) != recorded[name]:
                raise RunFolderError(
                    folder,
                    name,
                    "is not the file this run wrote (its sha256 differs from run.json): "
                    "files of different runs (e.g. seeds) are mixed in this folder",
                )
    elif isinstance(info.get("rows"), int):
        try:
            rows = pl.scan_parquet(folder / PREDICTIONS).select(pl.len()).collect().item()
        except Exception as exc:  # polars raises several kinds for a damaged file
            raise RunFolderError(
                folder, PREDICTIONS, f"cannot be read as Parquet ({type(exc).__name__})"
            ) from None
        if rows != info["rows"]:
            raise RunFolderError(
                folder,
                PREDICTIONS,
                f"has {rows} rows, run.json says {info['rows']} (files of different runs?)",
            )
    options = info.get("options")
    seed = options.get("seed") if isinstance(options, dict) else None
    found = re.search(r"\|seed:([^|]*)\|", signature)
    if seed is not None and found and found.group(1) != str(seed):
        raise RunFolderError(
            folder, RUN, f"says seed {seed}, the signature seed {found.group(1)} (files of different runs?)"
        )


def load_run(folder: Path) -> Run:
    """Read and check one run folder (the label is set by :func:`load_runs`)."""
    if not folder.exists():
        raise RunFolderError(folder, None, "no such run folder")
    if not folder.is_dir():
        raise RunFolderError(folder, None, "is a file; a run folder (`polyprobe eval run --out`) is expected")
    metrics = _read_json(folder, METRICS)
    if "runs" in metrics and "seeds" in metrics:
        raise RunFolderError(
            folder, METRICS, "is a merged folder (`polyprobe eval merge`); report on the runs it merges"
        )
    for key, kind in (("task", str), ("signature", str), ("metrics", dict)):
        if not isinstance(metrics.get(key), kind):
            raise RunFolderError(folder, METRICS, f"has no {kind.__name__} {key!r}")
    task = metrics["task"]
    if task not in _SHAPES:
        raise RunFolderError(folder, METRICS, f"unknown task {task!r} (one of {', '.join(TASK_ORDER)})")
    info = _read_json(folder, RUN)
    if info.get("task") != task:
        raise RunFolderError(folder, RUN, f"is for task {info.get('task')!r}, metrics.json for {task!r}")
    for key in ("model", "release"):
        if not isinstance(info.get(key), dict):
            raise RunFolderError(folder, RUN, f"has no {key!r} object")
    if not isinstance(info.get("locales"), list):
        raise RunFolderError(folder, RUN, "has no 'locales' list")
    signature_path = folder / SIGNATURE
    if not signature_path.is_file():
        raise RunFolderError(folder, SIGNATURE, "missing")
    signature = signature_path.read_text(encoding="utf-8", errors="replace").strip()
    if signature != metrics["signature"] or info.get("signature", signature) != signature:
        raise RunFolderError(
            folder,
            SIGNATURE,
            "does not match the signature in metrics.json / run.json (files of different runs?)",
        )
    if not (folder / PREDICTIONS).is_file():
        raise RunFolderError(folder, PREDICTIONS, "missing")
    _check_one_run(folder, info, signature)
    _check_shape(folder, task, metrics["metrics"])
    return Run(path=folder, label="", task=task, metrics=metrics["metrics"], info=info, signature=signature)


def load_runs(folders: Sequence[Path], labels: Sequence[str] | None = None) -> list[Run]:
    """Every run checked, labelled: by --labels, else by model, then release, then folder name —
    whichever first tells the runs of one task apart."""
    if not folders:
        raise InputError("no run folders given")
    seen: dict[Path, Path] = {}
    for folder in map(Path, folders):
        if folder.resolve() in seen:
            raise InputError(f"{folder}: the same run folder is given twice ({seen[folder.resolve()]})")
        seen[folder.resolve()] = folder
    runs = [load_run(Path(folder)) for folder in folders]
    if labels:
        if len(labels) != len(runs):
            raise LabelError(f"--labels: {len(labels)} label(s) for {len(runs)} run(s); give one per run")
        for run, label in zip(runs, labels, strict=True):
            if not label.strip():
                raise LabelError(f"--labels: the label of {run.path} is empty")
            run.label = label.strip()
    else:
        for run in runs:
            run.label = run.model_short + (f" · {run.suite}" if run.suite else "")
        for task in TASK_ORDER:
            same = [r for r in runs if r.task == task]
            for level in (1, 2):
                if len({r.label for r in same}) == len(same):
                    break
                for r in same:
                    r.label = f"{r.model_short} @ {r.release}" if level == 1 else f"{r.label} ({r.path.name})"
    for task in TASK_ORDER:
        names = [r.label for r in runs if r.task == task]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise LabelError(f"two {task} runs are both labelled {repeated[0]!r}: give distinct --labels")
    return runs


def slug(text: str) -> str:
    """A file-name-safe form of a label (plots/<task>-<slug>-<plot>.png)."""
    cleaned = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return cleaned[:60] or "run"

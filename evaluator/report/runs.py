"""Run folders as the report reads them: checked before anything is drawn, so a missing or
malformed file is one clear error naming the folder and the file, never a traceback halfway
through a plot."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.results.base import MetricsInvalid, TaskMetrics
from evaluator.run_folder import METRICS, PREDICTIONS, RUN, SIGNATURE
from evaluator.tasks import TASKS, task_names
from toolkit.core.errors import InputError
from toolkit.core.fileio import loads_json, sha256_file

M = TypeVar("M", bound=TaskMetrics)


class RunFolderError(InputError):
    """A run folder is missing, incomplete or malformed."""

    def __init__(self, folder: Path, file: str | None, message: str) -> None:
        where = f"{folder / file}" if file else f"{folder}"
        super().__init__(f"{where}: {message}")
        self.folder = folder
        self.file = file


class LabelError(InputError):
    """--labels does not give one distinct label per run."""


class _Seen(BaseModel):
    """A part of run.json as the report reads it (the rest of the file is not its business)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class RunModel(_Seen):
    name: str = "?"
    revision: str | None = None
    kind: str = "?"


class RunLocale(_Seen):
    """A locale as the run's release describes it (its manifest's ``locales`` entry)."""

    name: str
    direction: str = "ltr"
    native_name: str | None = None
    colour: str | None = Field(default=None, pattern=r"^#[0-9A-Fa-f]{6}$")
    html_lang: str | None = None
    position: int | None = None
    """Where lexicons/locales.yaml lists the locale: reports list locales in this order."""


class RunRelease(_Seen):
    version: str = "?"
    preview: bool = False
    signature: str | None = None
    """The release's signature (what `eval merge` compares); None where run.json has none."""
    locales: dict[str, RunLocale] = Field(default_factory=dict)
    """The run's locales as the release describes them (runs from before: none)."""


class RunOptionsSeen(_Seen):
    seed: int | None = None
    limit: int | None = None


class RunInfo(_Seen):
    """run.json: what the report shows of a run besides its metrics."""

    task: str
    locales: list[str]
    model: RunModel
    release: RunRelease
    options: RunOptionsSeen = RunOptionsSeen()
    task_settings: dict[str, Any] = Field(default_factory=dict)
    """The task's settings (its descriptor's ``settings``), e.g. sentiment's mode."""
    signature: str | None = None
    files: dict[str, str] | None = None
    """The sha256 of the run's other files (runs from before it was recorded: none)."""
    rows: int | None = None


@dataclass
class Run:
    path: Path
    label: str
    task: str
    metrics: TaskMetrics
    info: RunInfo
    signature: str
    _predictions: pl.DataFrame | None = field(default=None, repr=False)

    def metrics_as(self, kind: type[M]) -> M:
        """The run's metrics as its task's model (what the section of that task reads)."""
        if not isinstance(self.metrics, kind):
            raise TypeError(f"a {self.task} run has {type(self.metrics).__name__}, not {kind.__name__}")
        return self.metrics

    @property
    def model(self) -> str:
        return self.info.model.name

    @property
    def model_short(self) -> str:
        """`HuggingFaceTB/SmolLM2-135M-Instruct (GGUF …)` → `SmolLM2-135M-Instruct`."""
        name = self.model.split(" (")[0].rstrip("/")
        return name.rsplit("/", 1)[-1] or name

    @property
    def suite(self) -> str | None:
        """The release suite scored, when it is not the task's own (sos on the study's sets)."""
        value = self.info.task_settings.get("suite")
        return str(value) if value else None

    @property
    def revision(self) -> str:
        return self.info.model.revision or ""

    @property
    def release(self) -> str:
        return self.info.release.version

    @property
    def preview(self) -> bool:
        return self.info.release.preview

    @property
    def locales(self) -> list[str]:
        return list(self.info.locales)

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
        data = loads_json(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise RunFolderError(folder, name, "is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RunFolderError(folder, name, f"is not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise RunFolderError(folder, name, f"must hold a JSON object, not a {type(data).__name__}")
    return data


def _check_one_run(folder: Path, info: RunInfo, signature: str) -> None:
    """The files are the ones this run wrote together: their sha256 as recorded in run.json
    (runs from before it recorded them: the row count), and the seed of the signature."""
    if info.files is not None:
        for name in (PREDICTIONS, METRICS, SIGNATURE):
            if name in info.files and sha256_file(folder / name) != info.files[name]:
                raise RunFolderError(
                    folder,
                    name,
                    "is not the file this run wrote (its sha256 differs from run.json): "
                    "files of different runs (e.g. seeds) are mixed in this folder",
                )
    elif info.rows is not None:
        try:
            rows = pl.scan_parquet(folder / PREDICTIONS).select(pl.len()).collect().item()
        except Exception as exc:  # polars raises several kinds for a damaged file
            raise RunFolderError(
                folder, PREDICTIONS, f"cannot be read as Parquet ({type(exc).__name__})"
            ) from None
        if rows != info.rows:
            raise RunFolderError(
                folder,
                PREDICTIONS,
                f"has {rows} rows, run.json says {info.rows} (files of different runs?)",
            )
    seed = info.options.seed
    found = re.search(r"\|seed:([^|]*)\|", signature)
    if seed is not None and found and found.group(1) != str(seed):
        raise RunFolderError(
            folder, RUN, f"says seed {seed}, the signature seed {found.group(1)} (files of different runs?)"
        )


def _run_info(folder: Path, task: str) -> RunInfo:
    data = _read_json(folder, RUN)
    if data.get("task") != task:
        raise RunFolderError(folder, RUN, f"is for task {data.get('task')!r}, metrics.json for {task!r}")
    try:
        return RunInfo.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise RunFolderError(folder, RUN, f"{where}: {error['msg']}") from None


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
    if task not in TASKS:
        raise RunFolderError(folder, METRICS, f"unknown task {task!r} (one of {', '.join(task_names())})")
    info = _run_info(folder, task)
    signature_path = folder / SIGNATURE
    if not signature_path.is_file():
        raise RunFolderError(folder, SIGNATURE, "missing")
    signature = signature_path.read_text(encoding="utf-8", errors="replace").strip()
    if signature != metrics["signature"] or (info.signature or signature) != signature:
        raise RunFolderError(
            folder,
            SIGNATURE,
            "does not match the signature in metrics.json / run.json (files of different runs?)",
        )
    if not (folder / PREDICTIONS).is_file():
        raise RunFolderError(folder, PREDICTIONS, "missing")
    _check_one_run(folder, info, signature)
    try:
        typed = TASKS[task].read_metrics(metrics["metrics"])
    except MetricsInvalid as exc:
        raise RunFolderError(folder, METRICS, str(exc)) from None
    return Run(path=folder, label="", task=task, metrics=typed, info=info, signature=signature)


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
        for task in task_names():
            same = [r for r in runs if r.task == task]
            for level in (1, 2):
                if len({r.label for r in same}) == len(same):
                    break
                for r in same:
                    r.label = f"{r.model_short} @ {r.release}" if level == 1 else f"{r.label} ({r.path.name})"
    for task in task_names():
        names = [r.label for r in runs if r.task == task]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise LabelError(f"two {task} runs are both labelled {repeated[0]!r}: give distinct --labels")
    return runs


def slug(text: str) -> str:
    """A file-name-safe form of a label (plots/<task>-<slug>-<plot>.png)."""
    cleaned = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return cleaned[:60] or "run"

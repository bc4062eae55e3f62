"""The sweep file: one release, the models (how each is loaded and what it needs), the tasks with
their options, the locales, seeds and limit. It expands in code to jobs, model × task × seed
(a model's `tasks` narrows its tasks), each an ordinary `eval run` with a folder of its own.

    release: ../dist/polyprobe-0.1.0          # relative to the sweep file
    locales: [en, de, ar]                     # default for every task (default: all the release has)
    seeds: [0, 1, 2]
    limit: 200                                # optional, per locale, like --limit
    cache: responses.sqlite                   # optional (default: the user cache)
    models:
      - name: xlmr                            # the label in folder names and reports
        model: xlm-roberta-base               # a folder, hub name or API id, as for --model
        backend: transformers                 # a registered backend: transformers | vllm | openai
        dtype: bf16
        batch_size: 64
        truncation: right                     # inputs longer than the model: error (default) | left | right
        gpus: 1                               # per Ray actor; tensor_parallel: N for vLLM
        locales: [en]                         # optional: this model only in these locales
        tasks: [sos, honest-k20]              # optional: the task entries this model runs (default: all)
    tasks:
      - task: sos
      - task: honest
        name: honest-k20                      # needed when one task appears twice
        options: {k: 20, strategy: sample}    # any task option of `eval run`
        locales: [en, de]                     # this task only
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, TypeAdapter, ValidationError

from evaluator.backends import BACKENDS
from evaluator.options import MAX_LIMIT, Device, Dtype, RunOptions, Truncation
from evaluator.tasks import TASKS
from evaluator.tasks import task_options as registered_task_options
from evaluator.tasks.descriptor import TaskDescriptor, TaskOption
from toolkit.core.errors import InputError, did_you_mean
from toolkit.core.fileio import load_yaml
from toolkit.core.model import StrictModel

MODEL_FIELDS = frozenset(
    {"task", "model", "locales", "backend", "device", "dtype", "batch_size", "seed", "limit", "api"}
    | {"tensor_parallel", "truncation"}
)
"""RunOptions fields the sweep sets from the model, the task entry or the seeds, never from `options`."""
ENTRY_FIELDS = ("groups", "suite")
"""RunOptions fields a task entry's `options` may set, besides the task's own options."""


def all_task_options() -> tuple[str, ...]:
    """Every key a task entry's `options` may hold, for one task or another."""
    return tuple(sorted({*ENTRY_FIELDS, *registered_task_options()}))


def task_options(task: TaskDescriptor) -> tuple[str, ...]:
    """The options a task entry of ``task`` may set."""
    return tuple(sorted({*ENTRY_FIELDS, *task.option_names}))


LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SweepFileError(InputError):
    """The sweep file is malformed or names something that does not exist."""

    def __init__(self, file: Path, where: str, message: str) -> None:
        super().__init__(f"{file}: {where}: {message}" if where else f"{file}: {message}")


class ModelSpec(StrictModel):
    model: str = Field(min_length=1)
    name: str | None = None
    backend: str = "transformers"
    """A name of the backend registry (evaluator.backends.BACKENDS)."""
    device: Device = "auto"
    dtype: Dtype = "auto"
    truncation: Truncation = "error"
    """Set when the model loads, so per model: every task of a model is run with one policy."""
    batch_size: int | None = Field(default=None, ge=1)
    gpus: float = Field(default=0, ge=0)
    """GPUs reserved for this model's Ray actor (the local executor uses `device`)."""
    cpus: float = Field(default=1, gt=0)
    """CPUs reserved for this model's Ray actor (also its torch threads)."""
    tensor_parallel: int = Field(default=1, ge=1)
    api_base: str | None = None
    api_rate: float = Field(default=5.0, gt=0, allow_inf_nan=False)
    locales: list[str] | None = Field(default=None, min_length=1)
    """Only these locales for this model (a monolingual fine-tuning is scored in its language)."""
    tasks: list[str] | None = Field(default=None, min_length=1)
    """The task entries (by label: `name`, or the task) this model runs; default: every one. A
    classifier and masked LMs in one study each get the tasks that can score them."""


class TaskSpec(StrictModel):
    task: str
    name: str | None = None
    locales: list[str] | None = Field(default=None, min_length=1)
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT)
    options: dict[str, Any] = Field(default_factory=dict)


class SweepSpec(StrictModel):
    release: str
    models: list[ModelSpec] = Field(min_length=1)
    tasks: list[TaskSpec] = Field(min_length=1)
    locales: list[str] | None = Field(default=None, min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    limit: int | None = Field(default=None, ge=1, le=MAX_LIMIT)
    cache: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class Job:
    """One run of a sweep: one model, one task entry, one seed."""

    id: str
    model: str
    """The model's label (its `name`)."""
    task: str
    """The task entry's label (its `name`, by default the task)."""
    seed: int
    options: RunOptions


@dataclass
class ModelPlan:
    label: str
    spec: ModelSpec
    jobs: list[Job]


@dataclass
class Sweep:
    file: Path
    spec: SweepSpec
    release: Path
    cache: Path | None
    models: list[ModelPlan]

    @property
    def jobs(self) -> list[Job]:
        return [job for plan in self.models for job in plan.jobs]


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _label(text: str) -> str:
    """A folder-safe label from a model name or path: `org/Model-1.5B` → `Model-1.5B`."""
    tail = text.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip("-.") or "model"


def _model_location(model: str, base: Path) -> str:
    """A model given as a path relative to the sweep file, made absolute; anything else as given."""
    candidate = base / model
    if not Path(model).is_absolute() and candidate.is_dir():
        return str(candidate.resolve())
    return model


def _task_options(file: Path, index: int, task: TaskSpec) -> dict[str, Any]:
    """The entry's own task options, checked against what the task declares and read as their
    declared types."""
    where = f"tasks[{index}].options"
    descriptor = TASKS[task.task]
    allowed = task_options(descriptor)
    declared = {o.name: o for o in descriptor.options}
    values: dict[str, Any] = {}
    for key, value in task.options.items():
        if key in MODEL_FIELDS:
            raise SweepFileError(
                file, f"{where}.{key}", "is set per model or per task entry, not in the task's options"
            )
        if key not in all_task_options():
            raise SweepFileError(file, f"{where}.{key}", f"not a task option.{did_you_mean(key, allowed)}")
        if key not in allowed:
            raise SweepFileError(
                file,
                f"{where}.{key}",
                f"task {task.task} does not take it (its options: {', '.join(allowed)})",
            )
        if key in declared:
            values[key] = _option_value(file, f"{where}.{key}", declared[key], value)
    return values


def _entry_fields(file: Path, index: int, task: TaskSpec) -> dict[str, Any]:
    """The RunOptions fields a task entry's `options` set: groups, suite, and the task's own
    options (checked; the defaults of those not set)."""
    own = _task_options(file, index, task)
    given = {key: task.options[key] for key in ENTRY_FIELDS if key in task.options}
    return {**given, "task_options": TASKS[task.task].run_options(own, model="-").task_options}


def _option_value(file: Path, where: str, option: TaskOption, value: Any) -> Any:
    """A task option's value as its declared type (a minimum: a positive whole number)."""
    if option.minimum is not None and value is not None and (not isinstance(value, int) or value < 1):
        raise SweepFileError(file, where, f"must be a positive whole number, not {value!r}")
    try:
        return TypeAdapter(option.annotation).validate_python(value)
    except ValidationError as exc:
        raise SweepFileError(file, where, exc.errors()[0]["msg"]) from None


def _run_options(file: Path, where: str, fields: dict[str, Any]) -> RunOptions:
    try:
        options: RunOptions = TypeAdapter(RunOptions).validate_python(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise SweepFileError(file, f"{where}.{_where(error['loc'])}", error["msg"]) from None
    return options


def _model_tasks(file: Path, index: int, model: ModelSpec, task_labels: dict[str, int]) -> set[str]:
    """The labels of the task entries ``model`` runs: its `tasks`, each checked, or all of them."""
    if model.tasks is None:
        return set(task_labels)
    for position, label in enumerate(model.tasks):
        if label not in task_labels:
            raise SweepFileError(
                file,
                f"models[{index}].tasks[{position}]",
                f"no task entry is labelled {label!r}.{did_you_mean(label, task_labels)}",
            )
    if len(set(model.tasks)) != len(model.tasks):
        raise SweepFileError(file, f"models[{index}].tasks", "a task is listed twice")
    return set(model.tasks)


def _jobs(file: Path, spec: SweepSpec) -> Iterator[ModelPlan]:
    base = file.parent
    model_labels: dict[str, int] = {}
    task_labels: dict[str, int] = {}
    own: dict[int, dict[str, Any]] = {}
    for t_index, task in enumerate(spec.tasks):
        if task.task not in TASKS:
            raise SweepFileError(
                file, f"tasks[{t_index}].task", f"unknown task {task.task!r}.{did_you_mean(task.task, TASKS)}"
            )
        label = task.name or task.task
        if not LABEL.match(label):
            raise SweepFileError(file, f"tasks[{t_index}].name", f"{label!r}: use letters, digits, . _ -")
        if label in task_labels:
            raise SweepFileError(
                file,
                f"tasks[{t_index}]",
                f"a second {label!r} entry (tasks[{task_labels[label]}]): give each a distinct `name`",
            )
        task_labels[label] = t_index
        own[t_index] = _entry_fields(file, t_index, task)
    if len(set(spec.seeds)) != len(spec.seeds):
        raise SweepFileError(file, "seeds", "a seed is listed twice")
    for m_index, model in enumerate(spec.models):
        label = model.name or _label(model.model)
        if not LABEL.match(label):
            raise SweepFileError(file, f"models[{m_index}].name", f"{label!r}: use letters, digits, . _ -")
        if label in model_labels:
            raise SweepFileError(
                file,
                f"models[{m_index}]",
                f"a second model labelled {label!r} (models[{model_labels[label]}]): give each a distinct `name`",
            )
        model_labels[label] = m_index
        if model.backend not in BACKENDS:
            raise SweepFileError(
                file,
                f"models[{m_index}].backend",
                f"unknown backend {model.backend!r}.{did_you_mean(model.backend, BACKENDS)}",
            )
        if model.backend == "vllm" and model.gpus < model.tensor_parallel:
            raise SweepFileError(
                file,
                f"models[{m_index}].gpus",
                f"vLLM with tensor_parallel {model.tensor_parallel} needs gpus ≥ {model.tensor_parallel}",
            )
        location = _model_location(model.model, base)
        chosen = _model_tasks(file, m_index, model, task_labels)
        jobs = []
        for t_index, task in enumerate(spec.tasks):
            task_label = task.name or task.task
            if task_label not in chosen:
                continue
            locales = task.locales or spec.locales
            if model.locales:
                locales = [loc for loc in (locales or model.locales) if loc in model.locales]
                if not locales:
                    continue  # the task's locales are not the model's: no job
            for seed in spec.seeds:
                fields: dict[str, Any] = {
                    "task": task.task,
                    "model": location,
                    "locales": tuple(locales) if locales else None,
                    "backend": model.backend,
                    "device": model.device,
                    "dtype": model.dtype,
                    "batch_size": model.batch_size,
                    "seed": seed,
                    "limit": task.limit or spec.limit,
                    "tensor_parallel": model.tensor_parallel,
                    "truncation": model.truncation,
                    "api": {"base_url": model.api_base, "rate": model.api_rate}
                    if model.backend == "openai"
                    else {},
                    **own[t_index],
                }
                options = _run_options(file, f"tasks[{t_index}].options", fields)
                job_id = f"{label}.{task_label}.s{seed}"
                jobs.append(Job(id=job_id, model=label, task=task_label, seed=seed, options=options))
        yield ModelPlan(label=label, spec=model, jobs=jobs)


def load_sweep(file: Path) -> Sweep:
    """Read and check a sweep file (nothing is loaded or run): an error names the file and the
    entry, e.g. `sweep.yaml: tasks[1].options.scor: not a task option. Did you mean 'score'?`."""
    data = load_yaml(file)
    if not isinstance(data, dict):
        raise SweepFileError(file, "", "must be a mapping with release, models and tasks")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise SweepFileError(file, _where(error["loc"]), error["msg"]) from None
    base = file.parent
    release = base / spec.release
    if not release.is_dir():
        what = "is not a folder" if release.exists() else "no such folder"
        raise SweepFileError(file, "release", f"{spec.release}: {what} ({release.absolute()})")
    models = list(_jobs(file, spec))
    return Sweep(
        file=file,
        spec=spec,
        release=release,
        cache=base / spec.cache if spec.cache else None,
        models=models,
    )

"""The task registry: one descriptor per task (evaluator.tasks.descriptor), in the order the
report shows them. Everything that names tasks (eval run, sweep files, the report and its
comparisons, eval merge, the sweep summary) reads it. Each task is one module (its options,
settings, descriptor and scoring code: evaluator.tasks.sos, ...), imported with the registry:
polars, pydantic and scipy, which the CLI loads anyway, never torch; the report sections load
only when used.

Stable API: ``TASKS`` (name → descriptor, read-only), ``task_names()``, ``descriptor(name)``,
``get_task(name)``, ``register(descriptor)`` and ``task_options()`` (every task's own options)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from evaluator.options import RunOptions
from evaluator.plugins import TASK_GROUP, plugin_entries, warn_left_out
from evaluator.tasks import bbq, crows_pairs, honest, iat, ifm, sentiment, sentiment_control, sos
from evaluator.tasks.descriptor import COMMON_OPTIONS, TaskDescriptor, TaskOption, load_attribute
from toolkit.core.errors import InputError, did_you_mean

if TYPE_CHECKING:
    from evaluator.tasks.base import Task

_DESCRIPTORS = (
    sentiment.SENTIMENT,
    sentiment_control.SENTIMENT_CONTROL,
    sos.SOS,
    crows_pairs.CROWS_PAIRS,
    honest.HONEST,
    bbq.BBQ,
    iat.IAT,
    ifm.IFM,
)

_REGISTRY: dict[str, TaskDescriptor] = {d.name: d for d in _DESCRIPTORS}
_RECORDED: dict[str, Any] = {o.name: o.default for d in _DESCRIPTORS for o in d.options}
"""The built-in tasks' options at their defaults: run.json has always listed them all, whatever the
task, so runs written before compare equal (--resume, a sweep's rerun)."""
TASKS: Mapping[str, TaskDescriptor] = MappingProxyType(_REGISTRY)
"""Every task by name, in the report's order (a live read-only view: registered tasks included)."""


def register(task: TaskDescriptor) -> None:
    """Add a task after the built-in ones (a plugin's, or a test's): everything that reads ``TASKS``
    sees it at once. `eval run --task` offers it, and its options, only when it is registered
    before evaluator.cli is imported (the command's choices are made then), as installed plugins
    are (evaluator.plugins)."""
    if task.name in _REGISTRY:
        raise ValueError(f"task {task.name!r} is registered already")
    check_declared_options(task)
    check_headline(task)
    _REGISTRY[task.name] = task


def check_declared_options(task: TaskDescriptor) -> None:
    """Refuse options that would make a second meaning of a name: a common option's, or another
    task's option of the same name declared with another type, default or choices (tasks that
    declare one name share its `eval run` flag and its sweep key)."""
    known = task_options()
    for option in task.options:
        if option.name in COMMON_OPTIONS or not option.name.isidentifier():
            raise ValueError(f"task {task.name!r}: {option.name!r} cannot be the name of a task's option")
        other = known.get(option.name)
        if other is not None and other.shape() != option.shape():
            raise ValueError(
                f"task {task.name!r} declares option {option.name!r} as {option.shape()}, "
                f"another task as {other.shape()}: one name, one meaning"
            )


def check_headline(task: TaskDescriptor) -> None:
    """Refuse a headline its metrics model cannot make (the sweep summary would print "—" for
    every run): its table must be one the model's ``TABLES`` declares, and its measure, when it
    names one, a measure of that table. Imports the metrics model (and pydantic with it)."""
    try:
        tables = task.metrics.TABLES
    except Exception as exc:  # a model that cannot be imported cannot make the headline either
        raise ValueError(
            f"task {task.name!r}: its metrics model {task.metrics_model} cannot be loaded "
            f"({type(exc).__name__}: {exc})"
        ) from exc
    table, measure = task.headline.table, task.headline.measure
    if table not in tables:
        declared = ", ".join(repr(t) for t in tables) or "none"
        raise ValueError(
            f"task {task.name!r}: its headline's table {table!r} is not one its metrics model "
            f"{task.metrics_model} declares (its TABLES: {declared})"
        )
    if measure is not None and measure not in tables[table]:
        declared = ", ".join(repr(m) for m in tables[table]) or "none: its last key is data"
        raise ValueError(
            f"task {task.name!r}: its headline's measure {measure!r} is not one of table {table!r} "
            f"(its measures: {declared})"
        )


def task_options() -> dict[str, TaskOption]:
    """Every registered task's options by name, each once, in the report's order of the tasks
    (`eval run` makes one flag of each, sweep files accept each)."""
    out: dict[str, TaskOption] = {}
    for task in TASKS.values():
        for option in task.options:
            out.setdefault(option.name, option)
    return out


def recorded_options(options: RunOptions) -> dict[str, Any]:
    """A run's options as run.json records them: the common ones, the task's own, and every
    built-in task's option at its default (the shape run.json has always had)."""
    return {**_RECORDED, **options.as_dict()}


def task_names() -> tuple[str, ...]:
    """The task names, in the report's order (the choices of `eval run --task`)."""
    return tuple(TASKS)


def descriptor(name: str) -> TaskDescriptor:
    """The descriptor of task ``name``; an unknown name says which tasks exist."""
    if name not in TASKS:
        raise InputError(f"unknown task {name!r}.{did_you_mean(name, TASKS)}")
    return TASKS[name]


def get_task(name: str) -> Task:
    """The scoring code of task ``name``."""
    task = descriptor(name)
    cls = load_attribute(task.implementation)
    scorer: Task = cls(task)
    return scorer


def _register_plugins() -> None:
    """Tasks of other installed packages (evaluator.plugins), after the built-in ones."""
    for ep in plugin_entries(TASK_GROUP):
        try:
            task = ep.load()
        except Exception as exc:  # a broken plugin must not take the CLI down with it
            warn_left_out(ep, f"it cannot be loaded ({type(exc).__name__}: {exc})")
            continue
        if not isinstance(task, TaskDescriptor):
            warn_left_out(ep, f"it names a {type(task).__name__}, not a TaskDescriptor")
        elif task.name != ep.name:
            warn_left_out(
                ep, f"its descriptor is named {task.name!r}: the entry point's name must be the task's"
            )
        elif task.name in _REGISTRY:
            warn_left_out(ep, f"a task {task.name!r} exists already")
        else:
            try:
                register(task)
            except ValueError as exc:
                warn_left_out(ep, str(exc))


_register_plugins()

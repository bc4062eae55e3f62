"""What one evaluation task is, declared once (evaluator.tasks registers one per task): the
release suite it reads, the model kinds it scores, the options it takes, the settings that change
its numbers, the columns it adds to the predictions, its metrics model, and its report section.
The metrics model, the scoring code and the report section are named by "module:attribute" and
imported when used, so that the registry stays light (the CLI reads it for every command)."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evaluator.backends.base import ModelKind
from evaluator.options import RunOptions
from toolkit.core.errors import InputError

if TYPE_CHECKING:
    from evaluator.results.base import TaskMetrics

COMMON_OPTIONS: tuple[str, ...] = (
    "task",
    "model",
    "locales",
    "backend",
    "device",
    "dtype",
    "batch_size",
    "truncation",
    "seed",
    "limit",
    "groups",
    "suite",
    "tensor_parallel",
    "api",
)
"""RunOptions fields every task takes (what to score, where, on which rows)."""

GENERATION_OPTIONS: tuple[str, ...] = ("strategy", "max_new_tokens", "chat")
"""RunOptions fields of a task that generates text."""

Legend = Literal["standing", "gender"]


@dataclass(frozen=True)
class Headline:
    """A task's main figure in the sweep summary: the comparison table (of its metrics'
    measures) it comes from, the measure kept when the table has several, and its name."""

    table: str
    measure: str | None
    name: str


@dataclass(frozen=True)
class TaskDescriptor:
    name: str
    suite: str
    """The release suite the task reads."""
    kinds: tuple[ModelKind, ...]
    """Model kinds the task can score, in order of preference."""
    options: tuple[str, ...]
    """The RunOptions fields of this task's own (besides COMMON_OPTIONS)."""
    settings: Callable[[RunOptions, ModelKind], dict[str, Any]]
    """The settings that change the task's numbers, for run.json and the signature."""
    predictions: tuple[str, ...]
    """The columns the task adds to its rows in predictions.parquet."""
    metrics_model: str
    """The model of the run's metrics.json ``metrics`` (a TaskMetrics), as "module:Class"."""
    title: str
    """The report section's title."""
    intro: str
    """What the section's figures measure (with their sources)."""
    headline: Headline
    implementation: str
    """The Task subclass that scores it, as "module:Class"."""
    section: str
    """The report section builder, as "module:function"."""
    also_reads: tuple[str, ...] = ()
    """Other release suites with the columns of this task's own (sos: the regional study's set)."""
    legend: tuple[Legend, ...] = ()
    """Colour keys its plots use besides the locales."""
    digits: int = 3
    """Digits a comparison of its runs shows."""

    @property
    def metrics(self) -> type[TaskMetrics]:
        """The model of the run's metrics.json ``metrics`` (imported now, and pydantic with it)."""
        from evaluator.results.base import TaskMetrics  # not at the top: the registry stays light

        model = load_attribute(self.metrics_model)
        if not (isinstance(model, type) and issubclass(model, TaskMetrics)):
            raise TypeError(f"{self.metrics_model} is not a TaskMetrics model")
        return model

    @property
    def suites(self) -> tuple[str, ...]:
        """Every release suite the task can read, its own first."""
        return (self.suite, *self.also_reads)

    def takes(self, option: str) -> bool:
        return option in COMMON_OPTIONS or option in self.options

    def unused_options(self, options: RunOptions, given: Collection[str] = ()) -> list[str]:
        """The options this task does not take that are set away from their default, or named
        at all (``given``: the fields the user wrote, e.g. on the command line): `--k 5` on sos
        is as much a mistake as `--k 7`, though 5 is the default."""
        return [
            f.name
            for f in dataclasses.fields(RunOptions)
            if not self.takes(f.name) and (f.name in given or getattr(options, f.name) != _default(f))
        ]

    def check_options(self, options: RunOptions, given: Collection[str] = ()) -> None:
        """Refuse options this task would ignore (a --k on sos is a mistake, not a setting)."""
        unused = self.unused_options(options, given)
        if unused:
            flags = ", ".join(option_flag(name) for name in unused)
            own = ", ".join(option_flag(name) for name in self.options) or "none of its own"
            raise InputError(f"task {self.name} does not take {flags} (its options: {own})")

    def read_metrics(self, values: object) -> TaskMetrics:
        """A run's ``metrics`` (from its metrics.json) as the task's model, or MetricsInvalid
        naming the first field that is missing, unknown or of the wrong kind."""
        from pydantic import ValidationError  # not at the top: the registry stays light

        from evaluator.results.base import MetricsInvalid

        try:
            return self.metrics.model_validate(values)
        except ValidationError as exc:
            raise MetricsInvalid.of(exc) from None


def option_flag(name: str) -> str:
    """The `eval run` flag of a RunOptions field."""
    return "--" + name.replace("_", "-")


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def load_attribute(reference: str) -> Any:
    """What a "module:attribute" reference of a descriptor names (the module imported now)."""
    module, attribute = reference.split(":")
    return getattr(importlib.import_module(module), attribute)

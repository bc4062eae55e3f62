"""What one evaluation task is, declared once (evaluator.tasks registers one per task): the
release suite it reads, the model kinds it scores, the options it takes, the settings that change
its numbers, the columns it adds to the predictions, its metrics model, and its report section.
The metrics model, the scoring code and the report section are named by "module:attribute" and
imported when used: this module stays light, and a plugin's descriptor can name its code
without importing it."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Collection, Mapping
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

PER_TASK = "Per task"
GENERATION = "Generation (honest, bbq, iat, ifm)"


@dataclass(frozen=True)
class TaskOption:
    """One option a task declares: `eval run` makes its flag (``--name``, help, choices, default)
    from it, a sweep file's task entry may set it, and the run reads it from
    ``RunOptions.option(name)``. Tasks that declare the same name share one flag, so they must
    declare it alike (the registry refuses two meanings of one name)."""

    name: str
    """The option's name, snake_case: the flag is ``--`` and the name with dashes."""
    type: type
    """What a value is: str, int, float or bool."""
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    """The values a str option may take (the first is not the default unless ``default`` says)."""
    minimum: int | None = None
    """The smallest value an int option may take."""
    panel: str = PER_TASK
    """The section of `eval run --help` the flag is listed in."""

    @property
    def flag(self) -> str:
        """The `eval run` flag (a bool without a default is the pair ``--name/--no-name``)."""
        return option_flag(self.name)

    @property
    def annotation(self) -> Any:
        """The value's type as typer and pydantic read it: a Literal of the choices, optional
        when the default is None."""
        kind: Any = Literal[self.choices] if self.choices else self.type
        return kind | None if self.default is None else kind

    def shape(self) -> tuple[Any, ...]:
        """What two tasks declaring this name must agree on (the help may differ)."""
        return (self.type, self.default, self.choices, self.minimum)


GENERATION_OPTIONS: tuple[TaskOption, ...] = (
    TaskOption(
        "strategy",
        str,
        "auto",
        "Decoding.",
        choices=("auto", "greedy", "sample", "beam"),
        panel=GENERATION,
    ),
    TaskOption(
        "max_new_tokens",
        int,
        None,
        "Tokens generated per answer (default: the task's).",
        minimum=1,
        panel=GENERATION,
    ),
    TaskOption(
        "chat",
        bool,
        None,
        "Wrap prompts in the model's chat template (default: when it has one).",
        panel=GENERATION,
    ),
)
"""The options of a task that generates text."""

SCORE = TaskOption(
    "score",
    str,
    "auto",
    "sos, crows-pairs: pseudo-log-likelihood (pll), log-likelihood (ll), or shared-token PLL (shared).",
    choices=("auto", "pll", "ll", "shared"),
)
ORIGINAL_SCRIPT = TaskOption(
    "original_script",
    bool,
    False,
    "crows-pairs, sos: compare pair scores as the dataset's own script does (rounded to 3 "
    "decimals, ties in the denominator), to match published numbers.",
)
PAIR_OPTIONS = (SCORE, ORIGINAL_SCRIPT)
"""The options of a task that compares the scores of a pair of sentences (sos, crows-pairs)."""

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
    """Everything about one task but its scoring code: what it reads, scores and records, and how
    the report shows it (see the module's docstring)."""

    name: str
    suite: str
    """The release suite the task reads."""
    kinds: tuple[ModelKind, ...]
    """Model kinds the task can score, in order of preference."""
    options: tuple[TaskOption, ...]
    """The options of this task's own (besides COMMON_OPTIONS), in the order its errors list them."""
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

    @property
    def option_names(self) -> tuple[str, ...]:
        """The names of the task's own options."""
        return tuple(o.name for o in self.options)

    def takes(self, option: str) -> bool:
        """Whether a run of this task may set ``option`` (a common option or one it declares)."""
        return option in COMMON_OPTIONS or option in self.option_names

    def unused_options(self, options: RunOptions, given: Collection[str] = ()) -> list[str]:
        """The options this task does not declare that a run names: set in its ``task_options``,
        or written by the user at all (``given``, e.g. on the command line), whatever the value:
        `--k 5` on sos is as much a mistake as `--k 7`, though 5 is honest's default."""
        named = [*options.task_options, *(name for name in given if name not in options.task_options)]
        return [name for name in named if not self.takes(name)]

    def check_options(self, options: RunOptions, given: Collection[str] = ()) -> None:
        """Refuse options this task would ignore (a --k on sos is a mistake, not a setting)."""
        unused = self.unused_options(options, given)
        if unused:
            flags = ", ".join(option_flag(name) for name in unused)
            own = ", ".join(option_flag(name) for name in self.option_names) or "none of its own"
            raise InputError(f"task {self.name} does not take {flags} (its options: {own})")

    def run_options(self, values: Mapping[str, Any] | None = None, **common: Any) -> RunOptions:
        """A run of this task: the common options as given, and the task's own options from
        ``values`` (refused when the task does not declare one), their defaults for the rest."""
        values = dict(values or {})
        options = RunOptions(task=self.name, **common, task_options=values)
        self.check_options(options)
        filled = {o.name: values.get(o.name, o.default) for o in self.options}
        return dataclasses.replace(options, task_options=filled)

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
    """The `eval run` flag of an option (a RunOptions field or a task's own)."""
    return "--" + name.replace("_", "-")


def load_attribute(reference: str) -> Any:
    """What a "module:attribute" reference of a descriptor names (the module imported now)."""
    module, attribute = reference.split(":")
    return getattr(importlib.import_module(module), attribute)

"""A new task's module, written by `polyprobe dev new-task`: everything a task is in one file
(its option, settings, descriptor, metrics model with its TABLES, scoring code and report
section) that runs as it is: each row's probability of one classifier label, averaged per
locale. The task is offered once its package declares the module's descriptor under the
``polyprobe.tasks`` entry point (evaluator.plugins); the scaffold says which line to add."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from toolkit.core.errors import InputError
from toolkit.core.fileio import write_text_atomic

NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
"""A task name: lower-case words joined by dashes (sos, crows-pairs)."""

MODULE = Template('''\
"""The $name task: each row's probability of one classifier label (--$flag), averaged per
locale. Written by `polyprobe dev new-task`; make it yours: score what the task measures in
predict(), report it in metrics() and measures(), declare each table measures() makes in TABLES
(the registry checks the headline against it), and say in settings() what changes the numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import polars as pl

from evaluator.backends.base import ModelKind
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions
from evaluator.results.base import Measure, Part, TaskMetrics, number
from evaluator.tasks.base import ScoringContext, Task, per_locale
from evaluator.tasks.descriptor import Headline, TaskDescriptor, TaskOption

if TYPE_CHECKING:  # the report's modules load matplotlib: not with the registry, on every command
    from evaluator.report.document import Section
    from evaluator.report.runs import Run
    from evaluator.report.sections.common import SectionContext

TABLE = "$title per locale"
"""The comparison table of the task's main figure (its headline)."""

LABEL = TaskOption(
    "$option",
    str,
    None,
    "$name: the classifier label whose probability is averaged (default: the model's first).",
)


def label_setting(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    """What changes the task's numbers, for run.json and the run's signature: the label."""
    return {"label": options.option("$option")}


class ${cls}Locale(Part):
    """One locale's rows and the mean probability of the label over them."""

    rows: int
    mean: float | None


class ${cls}Metrics(TaskMetrics):
    """metrics.json of the $name task: the label averaged, and each locale's mean."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {TABLE: ()}

    label: str
    per_locale: dict[str, ${cls}Locale]

    def measures(self) -> list[Measure]:
        """Each locale's mean probability (plotted), for comparisons and the sweep summary."""
        return [
            Measure(TABLE, ("locale",), (loc,), number(entry.mean), "higher", plot=True)
            for loc, entry in self.per_locale.items()
        ]


class ${cls}Task(Task):
    """Scores each row with the model's class probabilities."""

    def label(self, ctx: ScoringContext) -> str:
        """The label whose probability is averaged: the option's, or the model's first."""
        labels = list(ctx.backend.identity.labels)
        chosen = ctx.options.option("$option") or labels[0]
        if chosen not in labels:
            raise EvaluationError(
                f"$name: the model has no label {chosen!r} (its labels: {', '.join(labels)})"
            )
        return str(chosen)

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """The rows with the model's probability of the label (``p_label``)."""
        at = list(ctx.backend.identity.labels).index(self.label(ctx))
        probs = ctx.backend.classify(rows["text"].to_list())
        return rows.with_columns(pl.Series("p_label", [p[at] for p in probs], dtype=pl.Float64))

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> ${cls}Metrics:
        """Each locale's rows and mean probability of the label."""

        def report(frame: pl.DataFrame) -> dict[str, Any]:
            mean = frame["p_label"].mean()
            return {"rows": frame.height, "mean": None if mean is None else float(mean)}  # type: ignore[arg-type]

        per = per_locale(ctx, predictions, report)
        return ${cls}Metrics.model_validate({"label": self.label(ctx), "per_locale": per})


def ${module}_section(run: Run, index: int, ctx: SectionContext) -> Section:
    """The report's section of one run: a row per locale."""
    from evaluator.report.document import Locale, Section, Table  # when a report is made (matplotlib)
    from evaluator.report.sections.common import run_key

    metrics = run.metrics_as(${cls}Metrics)
    table = Table(
        TABLE,
        ["locale", "rows", f"mean P({metrics.label})"],
        [[Locale(loc), entry.rows, entry.mean] for loc, entry in metrics.per_locale.items()],
    )
    return Section(anchor=run_key(run, index), title=run.label, blocks=[table])


$const = TaskDescriptor(
    name="$name",
    suite="$suite",
    kinds=("classifier",),
    options=(LABEL,),
    settings=label_setting,
    predictions=("p_label",),
    metrics_model=f"{__name__}:${cls}Metrics",
    title="$title",
    intro="The model's mean probability of one label over the suite's rows, per locale.",
    headline=Headline(TABLE, None, "mean P(label)"),
    implementation=f"{__name__}:${cls}Task",
    section=f"{__name__}:${module}_section",
)
''')


@dataclass(frozen=True)
class Scaffold:
    """A task's module as `polyprobe dev new-task` writes it, and the entry point that offers it."""

    name: str
    suite: str

    def __post_init__(self) -> None:
        if not NAME.fullmatch(self.name) or keyword.iskeyword(self.module):
            raise InputError(
                f"{self.name!r} cannot name a task: lower-case words joined by dashes (crows-pairs)"
            )

    @property
    def module(self) -> str:
        """The module's name: the task's, with underscores."""
        return self.name.replace("-", "_")

    @property
    def descriptor(self) -> str:
        """The descriptor's name in the module."""
        return self.module.upper()

    def text(self) -> str:
        """The module's source."""
        return MODULE.substitute(
            name=self.name,
            suite=self.suite,
            module=self.module,
            const=self.descriptor,
            cls="".join(part.capitalize() for part in self.name.split("-")),
            title=self.name.replace("-", " ").capitalize(),
            option=f"{self.module}_label",
            flag=f"{self.name}-label",
        )

    def entry_point(self, package: str) -> str:
        """The pyproject.toml lines that offer the task, its module in ``package`` ("" for none)."""
        where = f"{package}.{self.module}" if package else self.module
        return f'[project.entry-points."polyprobe.tasks"]\n{self.name} = "{where}:{self.descriptor}"\n'

    def write(self, folder: Path) -> Path:
        """The module written in ``folder``; an existing file is refused, not replaced."""
        path = folder / f"{self.module}.py"
        if path.exists():
            raise InputError(f"{path} exists already: choose another name or folder")
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, self.text())
        return path

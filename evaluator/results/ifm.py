"""The ifm task's metrics (evaluator/tasks/ifm.py; formulas in evaluator/metrics/ifm.py): the
confusion counts, hallucinations, F1 and rectified F1 per locale and instruction language, and
per attribute and standing, with bootstrap intervals over sentence pairs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from evaluator.results.base import Measure, Part, TaskMetrics, number


class IfmRow(Part):
    """The confusion counts (toxic is positive), hallucinations, F1 and rectified F1 of the
    answers in one locale under one instruction language, with intervals over sentence pairs."""

    locale: str
    instruction: str
    t: int
    """Answers."""
    h: int
    """Hallucinated answers (neither yes nor no)."""
    hallucination_rate: float | None
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None
    rectified_f1: float | None
    n_units: int | None = None
    f1_ci_low: float | None = None
    f1_ci_high: float | None = None
    rectified_f1_ci_low: float | None = None
    rectified_f1_ci_high: float | None = None


class IfmByAttribute(IfmRow):
    """The answers on sentences about the groups of one attribute."""

    attribute: str


class IfmByStanding(IfmRow):
    """The answers on sentences about the groups of one standing."""

    standing: str


class IfmMetrics(TaskMetrics):
    """metrics.json of the ifm task: rows per locale and instruction language, per attribute
    (a run may have none) and per standing."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {"IFM rectified F1": (), "IFM hallucination rate": ()}

    by_locale_instruction: list[IfmRow]
    by_attribute: list[IfmByAttribute] = Field(default_factory=list)
    by_standing: list[IfmByStanding]

    def measures(self) -> list[Measure]:
        """Rectified F1 (plotted) and the hallucination rate per locale and instruction language."""
        out = []
        for r in self.by_locale_instruction:
            key = (r.locale, r.instruction)
            out.append(
                Measure(
                    "IFM rectified F1",
                    ("locale", "instruction"),
                    key,
                    number(r.rectified_f1),
                    "higher",
                    plot=True,
                )
            )
            out.append(
                Measure(
                    "IFM hallucination rate",
                    ("locale", "instruction"),
                    key,
                    number(r.hallucination_rate),
                    "lower",
                )
            )
        return out

"""The ifm task's metrics (evaluator/tasks/ifm.py; formulas in evaluator/metrics/ifm.py): the
confusion counts, hallucinations, F1 and rectified F1 per locale and instruction language, and
per attribute and standing, with bootstrap intervals over sentence pairs."""

from __future__ import annotations

from pydantic import Field

from evaluator.results.base import Measure, Part, TaskMetrics, number


class IfmRow(Part):
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
    attribute: str


class IfmByStanding(IfmRow):
    standing: str


class IfmMetrics(TaskMetrics):
    by_locale_instruction: list[IfmRow]
    by_attribute: list[IfmByAttribute] = Field(default_factory=list)
    by_standing: list[IfmByStanding]

    def measures(self) -> list[Measure]:
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

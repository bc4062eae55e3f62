"""The sentiment-control task's metrics (evaluator/tasks/sentiment_control.py; formulas in
evaluator/metrics/classification.py): per locale the accuracy and macro F1 with bootstrap
intervals over sentences, per-label precision, recall and F1; McNemar between every two locales
with Holm's adjustment, and the sets of locales that perform alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from evaluator.results.base import Failed, Measure, Part, TaskMetrics, number
from evaluator.results.sentiment import McNemar

PERFORMANCE_TABLE = "Task performance per locale"


class LabelScores(Part):
    """Precision, recall and F1 of one gold label, and its support (sentences)."""

    precision: float | None
    recall: float | None
    f1: float | None
    support: int


class ControlLocale(Part):
    """One locale's performance on the control set, with intervals over sentences."""

    n: int
    """Sentences scored."""
    correct: int
    accuracy: float | None
    macro_f1: float | None
    unanswered: int
    """Sentences without a positive/negative prediction (counted wrong)."""
    per_label: dict[str, LabelScores]
    confusion: dict[str, dict[str, int]]
    """Gold label → predicted label (or none) → sentences."""
    n_units: int
    accuracy_ci_low: float | None
    accuracy_ci_high: float | None
    macro_f1_ci_low: float | None
    macro_f1_ci_high: float | None


class SentimentControlMetrics(TaskMetrics):
    """metrics.json of the sentiment-control task: each locale's performance, McNemar between
    locales, and the sets of locales that perform alike at ``alpha``."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {PERFORMANCE_TABLE: ("accuracy", "macro F1")}

    per_locale: dict[str, ControlLocale]
    mcnemar: dict[str, McNemar | Failed] = Field(default_factory=dict)
    """Between each two locales, keyed ``a-b``: are the same sentences right in both?"""
    alpha: float
    alike: list[list[str]]
    """The maximal sets of locales of which no two differ significantly (McNemar, Holm, alpha)."""

    def measures(self) -> list[Measure]:
        """Each locale's accuracy and macro F1."""
        out = []
        for loc, entry in self.per_locale.items():
            for name, value in (("accuracy", entry.accuracy), ("macro F1", entry.macro_f1)):
                out.append(
                    Measure(PERFORMANCE_TABLE, ("locale", "measure"), (loc, name), number(value), "higher")
                )
        return out

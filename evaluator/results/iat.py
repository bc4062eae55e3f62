"""The iat task's metrics (evaluator/tasks/iat.py; formulas in evaluator/metrics/iat.py): the mean
D per locale and category with its standard error, the answers scored and unparsable, a bootstrap
interval over responses and a t-test of D against 0."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from evaluator.results.base import Measure, Part, TaskMetrics, number


class IatRow(Part):
    """The mean D of one locale's answers on one category of one IAT dataset, with its standard
    error, the answers it rests on, its interval and its t-test against 0."""

    locale: str
    category: str
    dataset: str
    mean_d: float | None
    se: float | None
    n_scored: int
    n_unparsable: int
    n_units: int | None = None
    mean_d_ci_low: float | None = None
    mean_d_ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None


class IatMetrics(TaskMetrics):
    """metrics.json of the iat task: a row per locale and category."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {"IAT D per category": ()}

    by_category: list[IatRow]

    def measures(self) -> list[Measure]:
        """The mean D per locale and category (plotted; 0 is no association)."""
        return [
            Measure(
                "IAT D per category",
                ("locale", "category"),
                (r.locale, f"{r.category} ({r.dataset})"),
                number(r.mean_d),
                "zero",
                plot=True,
            )
            for r in self.by_category
        ]

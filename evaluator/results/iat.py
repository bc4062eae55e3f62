"""The iat task's metrics (evaluator/tasks/iat.py; formulas in evaluator/metrics/iat.py): the mean
D per locale and category with its standard error, the answers scored and unparsable, a bootstrap
interval over responses and a t-test of D against 0."""

from __future__ import annotations

from evaluator.results.base import Measure, Part, TaskMetrics, number


class IatRow(Part):
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
    by_category: list[IatRow]

    def measures(self) -> list[Measure]:
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

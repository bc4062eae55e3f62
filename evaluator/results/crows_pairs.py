"""The crows-pairs task's metrics (evaluator/tasks/crows_pairs.py; formulas in
evaluator/metrics/crows_pairs.py): per locale the stereotype score overall, per direction and per
bias type, with ties and the pairs whose sentences share no scorable token."""

from __future__ import annotations

from evaluator.results.base import Measure, Part, TaskMetrics, number


class CrowsRow(Part):
    pairs: int
    more_higher: int
    less_higher: int
    ties: int
    score: float | None
    """100 · more higher / pairs (50: no preference)."""
    tie_share: float | None


class CrowsByDirection(CrowsRow):
    direction: str


class CrowsByBiasType(CrowsRow):
    bias_type: str


class CrowsLocale(Part):
    rule: str
    overall: CrowsRow
    by_direction: list[CrowsByDirection]
    by_bias_type: list[CrowsByBiasType]
    no_shared_tokens: int


class CrowsPairsMetrics(TaskMetrics):
    score: str | None
    """How sentences were scored: shared or ll (None: no predictions)."""
    rule: str
    per_locale: dict[str, CrowsLocale]

    def measures(self) -> list[Measure]:
        out = []
        for loc, entry in self.per_locale.items():
            score = number(entry.overall.score)
            out.append(
                Measure(
                    "CrowS-Pairs score − 50 per locale (0: no preference)",
                    ("locale",),
                    (loc,),
                    None if score is None else score - 50,
                    "zero",
                    plot=True,
                )
            )
            for r in entry.by_bias_type:
                score = number(r.score)
                out.append(
                    Measure(
                        "CrowS-Pairs score − 50 by bias type",
                        ("locale", "bias type"),
                        (loc, r.bias_type),
                        None if score is None else score - 50,
                        "zero",
                    )
                )
        return out

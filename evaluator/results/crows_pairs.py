"""The crows-pairs task's metrics (evaluator/tasks/crows_pairs.py; formulas in
evaluator/metrics/crows_pairs.py): per locale the stereotype score overall, per direction and per
bias type, with ties and the pairs whose sentences share no scorable token."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from evaluator.results.base import Measure, Part, TaskMetrics, number


class CrowsRow(Part):
    """The stereotype score of a set of pairs, with the counts it rests on and its ties."""

    pairs: int
    more_higher: int
    less_higher: int
    ties: int
    score: float | None
    """100 · more higher / pairs (50: no preference)."""
    tie_share: float | None


class CrowsByDirection(CrowsRow):
    """The pairs that state a stereotype (stereo) or violate one (antistereo)."""

    direction: str


class CrowsByBiasType(CrowsRow):
    """The pairs of one bias type."""

    bias_type: str


class CrowsLocale(Part):
    """One locale's scores: overall, by direction and by bias type, under ``rule`` (paper or
    original); ``no_shared_tokens`` counts the pairs scored as ties because their sentences share
    no scorable token."""

    rule: str
    overall: CrowsRow
    by_direction: list[CrowsByDirection]
    by_bias_type: list[CrowsByBiasType]
    no_shared_tokens: int


class CrowsPairsMetrics(TaskMetrics):
    """metrics.json of the crows-pairs task: how sentences were scored, the rule, and each
    locale's scores."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "CrowS-Pairs score − 50 per locale (0: no preference)": (),
        "CrowS-Pairs score − 50 by bias type": (),
    }

    score: str | None
    """How sentences were scored: shared or ll (None: no predictions)."""
    rule: str
    per_locale: dict[str, CrowsLocale]

    def measures(self) -> list[Measure]:
        """Each locale's score − 50 (plotted; 0 is no preference), and per bias type."""
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

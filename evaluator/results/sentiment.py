"""The sentiment task's metrics (evaluator/tasks/sentiment.py; formulas in
evaluator/metrics/sentiment.py): per locale the accuracy and, per attribute, V, MCM with its
bootstrap interval, VBCM, MBCM and the Friedman / Wilcoxon tests; McNemar between locales."""

from __future__ import annotations

from pydantic import Field

from evaluator.results.base import Failed, Measure, Part, TaskMetrics, number

MCM_TABLE = "MCM per locale and attribute"
"""The comparison table of MCM (a comparison of runs also plots its change)."""


class LabelAccuracy(Part):
    accuracy: float | None
    correct: int
    n: int


class Accuracy(Part):
    """Accuracy over the gold labels the model can predict."""

    accuracy: float | None
    correct: int
    n: int
    unanswered: int
    excluded: int
    per_label: dict[str, LabelAccuracy]


class GroupV(Part):
    group: str
    n: int
    v: float | None


class GroupVbcm(Part):
    group: str
    n: int
    vbcm: float | None


class GroupMbcm(Part):
    group: str
    n: int
    mbcm: float | None


class Interval(Part):
    low: float | None
    high: float | None


class Mbcm(Part):
    """Against the locale's reference group (religion)."""

    overall: float | Failed | None
    groups: list[GroupMbcm] | Failed


class Friedman(Part):
    statistic: float | None
    p_value: float | None
    groups: int
    blocks: int
    dropped_blocks: int
    mean_ranks: dict[str, float]
    p_holm: float | None = None


class Wilcoxon(Part):
    statistic: float | None
    p_value: float | None
    n_pairs: int
    n_nonzero: int
    mean_difference: float | None
    unpaired: int
    p_holm: float | None = None


class McNemarTable(Part):
    both: int
    a_only: int
    b_only: int
    neither: int


class McNemar(Part):
    outcome: str
    table: McNemarTable
    b: int
    c: int
    statistic: float | None
    p_value: float | None
    method: str
    n: int
    unmatched_a: int
    unmatched_b: int
    p_holm: float | None = None


class AttributeMetrics(Part):
    n: int
    v: list[GroupV] | Failed
    mcm: float | Failed | None
    mcm_ci95: Interval | Failed
    vbcm: list[GroupVbcm] | Failed
    friedman: Friedman | Failed | None = None
    """Not for gender (two groups, one per variant)."""
    wilcoxon_gender: Wilcoxon | Failed | None = None
    mbcm: Mbcm | None = None
    """Only where the attribute has a reference group."""


class SentimentLocale(Part):
    accuracy: Accuracy | Failed
    accuracy_2way: Accuracy | Failed | None = None
    attributes: dict[str, AttributeMetrics]


class SentimentMetrics(TaskMetrics):
    per_locale: dict[str, SentimentLocale]
    mcnemar: dict[str, McNemar | Failed] = Field(default_factory=dict)
    """Between each two locales, keyed ``a-b``."""

    def measures(self) -> list[Measure]:
        out = []
        for loc, entry in self.per_locale.items():
            for attribute, values in entry.attributes.items():
                out.append(
                    Measure(
                        MCM_TABLE,
                        ("locale", "attribute"),
                        (loc, attribute),
                        number(values.mcm),
                        "lower",
                        plot=True,
                    )
                )
            for accuracy, name in ((entry.accuracy, "accuracy"), (entry.accuracy_2way, "2-way accuracy")):
                if accuracy is not None:
                    value = number(accuracy.accuracy) if isinstance(accuracy, Accuracy) else None
                    out.append(
                        Measure("Sentiment accuracy", ("locale", "measure"), (loc, name), value, "higher")
                    )
        return out

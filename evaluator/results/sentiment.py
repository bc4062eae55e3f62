"""The sentiment task's metrics (evaluator/tasks/sentiment.py; formulas in
evaluator/metrics/sentiment.py): per locale the accuracy and, per attribute, V, MCM with its
bootstrap interval, VBCM, MBCM and the Friedman / Wilcoxon tests; McNemar between locales."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from evaluator.results.base import Failed, Measure, Part, TaskMetrics, number

MCM_TABLE = "MCM per locale and attribute"
"""The comparison table of MCM (a comparison of runs also plots its change)."""


class LabelAccuracy(Part):
    """Accuracy on the samples of one gold label."""

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
    """V of one group: its mean score over its samples."""

    group: str
    n: int
    v: float | None


class GroupVbcm(Part):
    """VBCM of one group: its mean difference from the mean score of all groups in its instances."""

    group: str
    n: int
    vbcm: float | None


class GroupMbcm(Part):
    """MBCM of one group: its mean difference from the reference group in the instances of both."""

    group: str
    n: int
    mbcm: float | None


class Interval(Part):
    """A bootstrap 95% interval (MCM's, over template instances)."""

    low: float | None
    high: float | None


class Mbcm(Part):
    """Against the locale's reference group (religion)."""

    overall: float | Failed | None
    groups: list[GroupMbcm] | Failed


class Friedman(Part):
    """Friedman's test of whether the groups of an attribute score alike across template
    instances (the blocks; incomplete ones dropped)."""

    statistic: float | None
    p_value: float | None
    groups: int
    blocks: int
    dropped_blocks: int
    mean_ranks: dict[str, float]
    p_holm: float | None = None


class Wilcoxon(Part):
    """Wilcoxon's signed-rank test of female against male scores on paired samples."""

    statistic: float | None
    p_value: float | None
    n_pairs: int
    n_nonzero: int
    mean_difference: float | None
    unpaired: int
    p_holm: float | None = None


class McNemarTable(Part):
    """The 2×2 table of a McNemar test: samples with the outcome in both locales, in a only, in b
    only, in neither."""

    both: int
    a_only: int
    b_only: int
    neither: int


class McNemar(Part):
    """McNemar's test between two locales on their parallel samples: are the same samples right
    (or positive) in both? ``b`` and ``c`` are the discordant counts, ``method`` exact
    (binomial) or chi2."""

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
    """The group metrics of one attribute in one locale; a metric the slice cannot give is
    :class:`Failed`."""

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
    """One locale's accuracy (and Levy et al.'s 2-way accuracy: positive and negative only) and
    the group metrics of each attribute."""

    accuracy: Accuracy | Failed
    accuracy_2way: Accuracy | Failed | None = None
    attributes: dict[str, AttributeMetrics]


class SentimentMetrics(TaskMetrics):
    """metrics.json of the sentiment task: each locale's figures and McNemar between locales."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {
        MCM_TABLE: (),
        "Sentiment accuracy": ("accuracy", "2-way accuracy"),
    }

    per_locale: dict[str, SentimentLocale]
    mcnemar: dict[str, McNemar | Failed] = Field(default_factory=dict)
    """Between each two locales, keyed ``a-b``."""

    def measures(self) -> list[Measure]:
        """MCM per locale and attribute (plotted), and each locale's accuracies."""
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

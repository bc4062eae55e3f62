"""The honest task's metrics (evaluator/tasks/honest.py; formulas in evaluator/metrics/honest.py):
per locale the lexicon used and HONEST by locale, group, attribute, standing, variant and
attribute × standing, each row with its bootstrap interval over templates, and the share of
completions per HurtLex category and standing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from evaluator.results.base import Measure, Part, TaskMetrics, number


class HonestRow(Part):
    """HONEST of a set of prompts: the share of their K completions that are or hold a
    hurtful HurtLex lemma, with its interval over templates where the table has one."""

    n_rows: int
    k: int
    n_completions: int
    n_hurtful: int
    honest: float | None
    n_units: int | None = None
    honest_ci_low: float | None = None
    honest_ci_high: float | None = None


class HonestByLocale(HonestRow):
    """All of a locale's prompts."""

    locale: str


class HonestByGroup(HonestRow):
    """The prompts about one group."""

    group: str


class HonestByAttribute(HonestRow):
    """The prompts about the groups of one attribute (religion, nationality, …)."""

    attribute: str


class HonestByStanding(HonestRow):
    """The prompts about the groups of one standing (majority, minority, …)."""

    standing: str


class HonestByVariant(HonestRow):
    """The prompts of one gender variant (f, m, n)."""

    variant: str


class HonestByAttributeStanding(HonestRow):
    """The prompts about the groups of one standing within one attribute."""

    attribute: str
    standing: str


class CategoryShare(Part):
    """The share of completions with a lemma of one HurtLex category."""

    standing: str
    category: str
    n_completions: int
    n_with_category: int
    share: float | None


class HonestLocale(Part):
    """One locale's HONEST tables and HurtLex category shares; ``note`` says when its lexicon
    is another locale's."""

    hurtlex: str
    """The HurtLex language scored with (Egyptian Arabic: AR)."""
    note: str | None = None
    by_locale: list[HonestByLocale]
    by_group: list[HonestByGroup]
    by_attribute: list[HonestByAttribute]
    by_standing: list[HonestByStanding]
    by_variant: list[HonestByVariant]
    by_attribute_standing: list[HonestByAttributeStanding]
    by_category: list[CategoryShare]


class HonestMetrics(TaskMetrics):
    """metrics.json of the honest task: what was completed (a word or a sentence), K
    completions per prompt, the HurtLex level, and each locale's tables."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "HONEST per locale": (),
        "HONEST by standing": (),
        "HONEST by gender variant": (),
    }

    completion: Literal["word", "sentence"]
    k: int
    level: str
    """The HurtLex level: conservative, inclusive or both."""
    per_locale: dict[str, HonestLocale]

    def measures(self) -> list[Measure]:
        """Each locale's HONEST (plotted), and by standing and by gender variant."""
        out = []
        for loc, entry in self.per_locale.items():
            for r in entry.by_locale:
                out.append(
                    Measure("HONEST per locale", ("locale",), (loc,), number(r.honest), "lower", plot=True)
                )
            for rs in entry.by_standing:
                out.append(
                    Measure(
                        "HONEST by standing",
                        ("locale", "standing"),
                        (loc, rs.standing),
                        number(rs.honest),
                        "lower",
                    )
                )
            for rv in entry.by_variant:
                out.append(
                    Measure(
                        "HONEST by gender variant",
                        ("locale", "variant"),
                        (loc, rv.variant),
                        number(rv.honest),
                        "lower",
                    )
                )
        return out

"""The bbq task's metrics (evaluator/tasks/bbq.py; formulas in evaluator/metrics/bbq.py):
accuracy and the bias scores s_DIS / s_AMB overall, per locale and per locale × category, with
the counts they rest on, bootstrap intervals over families and a binomial test of s_DIS."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from evaluator.results.base import Better, Measure, Part, TaskMetrics, number


class BbqRow(Part):
    """Accuracy (overall, ambiguous, disambiguated) and the bias scores s_DIS and s_AMB of a set
    of BBQ rows, with the counts each rests on; intervals and tests where the table has them."""

    n: int
    n_unparsable: int
    n_no_target: int = 0
    """Rows whose item names no stereotyped answer (left out of the bias scores)."""
    accuracy: float | None
    n_ambig: int | None = None
    accuracy_ambig: float | None
    n_disambig: int | None = None
    accuracy_disambig: float | None
    n_non_unknown_disambig: int | None = None
    n_biased_disambig: int | None = None
    s_dis: float | None
    n_bias_ambig: int | None = None
    n_non_unknown_ambig: int | None = None
    n_biased_ambig: int | None = None
    s_amb: float | None
    n_units: int | None = None
    accuracy_ci_low: float | None = None
    accuracy_ci_high: float | None = None
    s_dis_ci_low: float | None = None
    s_dis_ci_high: float | None = None
    s_amb_ci_low: float | None = None
    s_amb_ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None


class BbqByLocale(BbqRow):
    """A locale's BBQ figures (the ones a comparison of runs sets side by side)."""

    locale: str


class BbqByLocaleCategory(BbqRow):
    """A locale's BBQ figures on one bias category."""

    locale: str
    category: str


MEASURES: tuple[tuple[str, str, Better], ...] = (
    ("accuracy_ambig", "accuracy (ambiguous)", "higher"),
    ("accuracy_disambig", "accuracy (disambiguated)", "higher"),
    ("s_dis", "s_DIS", "zero"),
    ("s_amb", "s_AMB", "zero"),
)


class BbqMetrics(TaskMetrics):
    """metrics.json of the bbq task: all rows, per locale and per locale and category."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "BBQ per locale": tuple(name for _, name, _ in MEASURES),
        "BBQ s_DIS per category": (),
        "BBQ s_AMB per category": (),
    }

    overall: BbqRow
    by_locale: list[BbqByLocale]
    by_locale_category: list[BbqByLocaleCategory]
    warnings: list[str] = Field(default_factory=list)
    """One line per locale and category with rows that have no target answer."""

    def run_warnings(self) -> list[str]:
        """The locales and categories with rows the bias scores leave out (no target answer)."""
        return list(self.warnings)

    def measures(self) -> list[Measure]:
        """Each locale's accuracies, s_DIS and s_AMB (plotted), and s_DIS and s_AMB per category."""
        out = []
        for r in self.by_locale:
            values = {
                "accuracy_ambig": r.accuracy_ambig,
                "accuracy_disambig": r.accuracy_disambig,
                "s_dis": r.s_dis,
                "s_amb": r.s_amb,
            }
            for column, name, better in MEASURES:
                out.append(
                    Measure(
                        "BBQ per locale",
                        ("locale", "measure"),
                        (r.locale, name),
                        number(values[column]),
                        better,
                        plot=True,
                    )
                )
        for rc in self.by_locale_category:
            key = (rc.locale, rc.category)
            out.append(
                Measure("BBQ s_DIS per category", ("locale", "category"), key, number(rc.s_dis), "zero")
            )
            out.append(
                Measure("BBQ s_AMB per category", ("locale", "category"), key, number(rc.s_amb), "zero")
            )
        return out

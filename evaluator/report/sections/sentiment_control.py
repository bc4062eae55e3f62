"""The sentiment-control section: accuracy and macro F1 per locale with their intervals, per-label
scores, McNemar between every two locales (raw and Holm-adjusted p), and the sets of locales that
perform alike (Levy et al. 2023's sets of languages whose biases may be compared)."""

from __future__ import annotations

from evaluator.report.document import Block, Cell, Locale, Note, Problems, PValue, Section, Table
from evaluator.report.palette import locale_label, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import (
    SectionContext,
    failure,
    interval,
    locale_colors,
    locale_ticks,
    run_key,
)
from evaluator.results.base import number
from evaluator.results.sentiment import McNemar
from evaluator.results.sentiment_control import SentimentControlMetrics


def sentiment_control(run: Run, index: int, ctx: SectionContext) -> Section:
    metrics = run.metrics_as(SentimentControlMetrics)
    locales = locale_order(metrics.per_locale)
    key = run_key(run, index)
    blocks: list[Block] = []
    if locales:
        blocks.append(_performance_plot(metrics, locales, key, ctx))
    blocks.append(_performance_table(metrics, locales))
    tests, problems = _mcnemar(metrics)
    if tests is not None:
        blocks.append(tests)
    if metrics.alike:
        sets = "; ".join("{" + ", ".join(locale_label(loc) for loc in group) + "}" for group in metrics.alike)
        blocks.append(
            Note(
                f"Locales that perform alike (no two differ at Holm-adjusted p < {metrics.alpha:g}): {sets}. "
                "Compare the biases of locales within one set."
            )
        )
    if problems:
        blocks.append(Problems(problems))
    return Section(anchor=key, title=run.label, blocks=blocks)


def _performance_plot(
    metrics: SentimentControlMetrics, locales: list[str], key: str, ctx: SectionContext
) -> Block:
    """Accuracy with its interval as error bars, and macro F1 hatched beside it, a bar per locale."""
    accuracy = {loc: number(metrics.per_locale[loc].accuracy) for loc in locales}
    macro = {loc: number(metrics.per_locale[loc].macro_f1) for loc in locales}
    errors: dict[str, float | tuple[float, float] | None] = {}
    for loc in locales:
        entry = metrics.per_locale[loc]
        low, high, value = entry.accuracy_ci_low, entry.accuracy_ci_high, accuracy[loc]
        if low is not None and high is not None and value is not None:
            errors[loc] = (max(value - low, 0.0), max(high - value, 0.0))
    return ctx.plot(
        bars(
            [
                BarFacet(
                    "",
                    locale_ticks(locales),
                    [
                        Series("accuracy (95% CI)", accuracy, locale_colors(locales), errors=errors),
                        Series("macro F1", macro, locale_colors(locales), hatch="///"),
                    ],
                )
            ],
            xlabel="accuracy / macro F1 on the control set",
            xlim=(0.0, 1.0),
            reference=0.5,
            legend=[LegendItem("accuracy", "#FFFFFF"), LegendItem("macro F1", "#FFFFFF", "///")],
        ),
        f"{key}-performance",
        "Accuracy (with its bootstrap 95% interval over sentences) and macro F1 (hatched) per "
        "locale on the control set; the dotted line is chance (0.5, balanced labels).",
    )


def _performance_table(metrics: SentimentControlMetrics, locales: list[str]) -> Table:
    rows: list[list[Cell]] = []
    for loc in locales:
        e = metrics.per_locale[loc]
        rows.append(
            [
                Locale(loc),
                e.n,
                e.correct,
                number(e.accuracy),
                interval(e.accuracy_ci_low, e.accuracy_ci_high),
                number(e.macro_f1),
                interval(e.macro_f1_ci_low, e.macro_f1_ci_high),
                *(number(e.per_label[c].f1) if c in e.per_label else None for c in ("positive", "negative")),
                e.unanswered,
            ]
        )
    return Table(
        "Task performance per locale",
        [
            "locale",
            "n",
            "correct",
            "accuracy",
            "95% CI",
            "macro F1",
            "95% CI",
            "F1 positive",
            "F1 negative",
            "unanswered",
        ],
        rows,
        note="The prediction is the likelier of positive and negative. Intervals: percentile bootstrap "
        "over sentences (1000 replicates, seeded). Unanswered sentences count as wrong.",
    )


def _mcnemar(metrics: SentimentControlMetrics) -> tuple[Table | None, list[tuple[str, str]]]:
    """The table of McNemar tests between locales (None: no pair could be tested), and why the
    pairs that could not be tested were not."""
    problems: list[tuple[str, str]] = []
    tests: list[list[Cell]] = []
    for pair, test in metrics.mcnemar.items():
        reason = failure(test)
        if reason:
            problems.append((f"McNemar {pair}", reason))
        if isinstance(test, McNemar):
            first, _, second = pair.partition("-")
            tests.append(
                [
                    f"{first} vs {second}",
                    test.n,
                    test.b,
                    test.c,
                    number(test.statistic),
                    test.method,
                    PValue(number(test.p_value)),
                    PValue(number(test.p_holm)),
                ]
            )
    if not tests:
        return None, problems
    table = Table(
        "McNemar test between locales (the same sentences right in one and wrong in the other)",
        ["locales", "n", "b (first only)", "c (second only)", "statistic", "method", "p", "p (Holm)"],
        tests,
        note="Holm's adjustment over every pair of locales. * p < 0.05, ** p < 0.01, *** p < 0.001.",
    )
    return table, problems

"""The CrowS-Pairs section: the stereotype score per locale and bias type (Nangia et al. 2020; 50 is
no preference), per direction, with ties and pairs without a shared token counted."""

from __future__ import annotations

from evaluator.report.document import Block, Cell, Locale, Section, Table
from evaluator.report.palette import locale_color, locale_label, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, Tick, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import SectionContext, breakdown_table, by_locale, run_key
from evaluator.results.base import number
from evaluator.results.crows_pairs import CrowsLocale, CrowsPairsMetrics

RULES = {
    "paper": "the paper's definition (exact comparison; a tie does not prefer sent_more)",
    "original": "the original script's rule (scores rounded to 3 decimals; per-direction scores over untied pairs)",
}


def _direction(entry: CrowsLocale, name: str) -> float | None:
    row = next((r for r in entry.by_direction if r.direction == name), None)
    return number(row.score) if row else None


def crows_pairs(run: Run, index: int, ctx: SectionContext) -> Section:
    metrics = run.metrics_as(CrowsPairsMetrics)
    locales = locale_order(metrics.per_locale)
    key = run_key(run, index)
    blocks: list[Block] = [
        *_bias_type_plot(metrics, locales, key, ctx),
        _locale_table(metrics, locales),
        breakdown_table(
            "CrowS-Pairs by bias type",
            ["locale", "bias type", "pairs", "ties", "score"],
            by_locale(metrics.per_locale, locales, lambda e: e.by_bias_type),
            lambda r: [r.bias_type, r.pairs, r.ties, number(r.score)],
            digits=2,
        ),
    ]
    score = metrics.score
    how = (
        "the pseudo-log-likelihood of the tokens both sentences share"
        if score == "shared"
        else "sentence log-likelihood"
    )
    return Section(
        anchor=key,
        title=run.label,
        intro=f"Sentences scored by {how} ({score}); pairs compared by {RULES.get(metrics.rule, metrics.rule)}.",
        blocks=blocks,
    )


def _bias_type_plot(
    metrics: CrowsPairsMetrics, locales: list[str], key: str, ctx: SectionContext
) -> list[Block]:
    """The stereotype score of all pairs and per bias type, a bar per locale."""
    per_locale = metrics.per_locale
    types = sorted({r.bias_type for _, r in by_locale(per_locale, locales, lambda e: e.by_bias_type)})
    if not types:
        return []
    ticks = [Tick("all", "all pairs"), *(Tick(t, t) for t in types)]
    series = []
    for loc in locales:
        values = {r.bias_type: number(r.score) for r in per_locale[loc].by_bias_type}
        values["all"] = number(per_locale[loc].overall.score)
        series.append(Series(locale_label(loc), values, locale_color(loc)))
    return [
        ctx.plot(
            bars(
                [BarFacet("", ticks, series)],
                xlabel="stereotype score (%)",
                xlim=(0.0, 100.0),
                reference=50.0,
                legend=[LegendItem(locale_label(loc), locale_color(loc)) for loc in locales],
            ),
            f"{key}-bias-types",
            "CrowS-Pairs: percentage of pairs whose more stereotyping sentence the model scores higher, "
            "per bias type and locale (dotted: 50, no preference).",
        )
    ]


def _locale_table(metrics: CrowsPairsMetrics, locales: list[str]) -> Table:
    rows: list[list[Cell]] = []
    for loc in locales:
        entry = metrics.per_locale[loc]
        overall = entry.overall
        rows.append(
            [
                Locale(loc),
                overall.pairs,
                overall.more_higher,
                overall.less_higher,
                overall.ties,
                entry.no_shared_tokens,
                number(overall.score),
                _direction(entry, "stereo"),
                _direction(entry, "antistereo"),
            ]
        )
    return Table(
        "CrowS-Pairs per locale",
        [
            "locale",
            "pairs",
            "more higher",
            "less higher",
            "ties",
            "no shared token",
            "score",
            "stereo",
            "antistereo",
        ],
        rows,
        note="score: 100 · more higher / pairs (50: no preference); stereo / antistereo: the same over the "
        "pairs whose more stereotyping sentence states / violates a stereotype. A pair without a shared "
        "token scores 0 against 0 and ties.",
        digits=2,
    )

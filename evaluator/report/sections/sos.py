"""The SOS section: SOS per group and locale (groups ordered by standing, so refugees and other
marginalized groups stand apart from dominant ones), per attribute and per standing, ties counted."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import polars as pl

from evaluator.metrics.stats import MIN_DEFINED
from evaluator.report.document import Block, Cell, Locale, Section, Table
from evaluator.report.palette import STANDING_COLORS, STANDING_ORDER, locale_order, standing_color
from evaluator.report.plots import BarFacet, HeatPanel, LegendItem, Series, Tick, bars, diverging, heatmap
from evaluator.report.runs import Run
from evaluator.report.sections.common import (
    CI_COLUMNS,
    TEST_COLUMNS,
    SectionContext,
    breakdown_table,
    by_locale,
    locale_ticks,
    run_key,
    standings,
    uncertainty,
)
from evaluator.results.base import number
from evaluator.results.sos import SosMetrics, SosRow

SOS_CMAP = diverging("#2166AC", "#B2182B")

_HOW = {
    "pll": "pseudo-log-likelihood",
    "shared": "the pseudo-log-likelihood of the tokens both twins share",
}


@dataclass
class _Parts:
    """What the section's pieces share: the run's metrics, its locales in order, the plot key
    and each group's standing."""

    metrics: SosMetrics
    locales: list[str]
    key: str
    ctx: SectionContext
    standing: dict[str, str]


def _standing_of(run: Run) -> dict[str, str]:
    """group → standing, from the predictions (the metrics' by_group table has no standing)."""
    frame = run.predictions(["group", "standing"])
    if not frame.height:
        return {}
    pairs = frame.select(pl.col("group").cast(pl.String), pl.col("standing").cast(pl.String)).unique()
    return {str(g): str(s) for g, s in pairs.sort("group", "standing").rows() if g is not None}


def _sos_text(row: SosRow) -> str:
    value = number(row.sos)
    shown = "" if value is None else f"{value:.2f}"
    return shown + ("*" if row.ties > 0 else "")


def _tested(row: SosRow) -> list[Cell]:
    """The row's units, interval and binomial test (CI_COLUMNS, TEST_COLUMNS); where the run gave
    no interval because too few bootstrap replicates were defined, how many were."""
    cells = uncertainty(row.n_units, row.sos_ci_low, row.sos_ci_high, tests=(row.p_value, row.p_holm))
    replicates = row.ci_replicates
    defined = replicates.defined.get("sos") if replicates is not None else None
    if (
        cells[1] is None
        and replicates is not None
        and defined is not None
        and defined < MIN_DEFINED * replicates.resamples
    ):
        cells[1] = f"none ({defined} of {replicates.resamples} replicates defined)"
    return cells


def _no_shared(parts: _Parts) -> bool:
    """Whether the overall table shows the pairs without a shared token (scored on shared tokens,
    or any counted)."""
    counts = [e.no_shared_tokens for e in parts.metrics.per_locale.values()]
    return parts.metrics.score == "shared" or any(c for c in counts)


def sos(run: Run, index: int, ctx: SectionContext) -> Section:
    metrics = run.metrics_as(SosMetrics)
    parts = _Parts(
        metrics=metrics,
        locales=locale_order(metrics.per_locale),
        key=run_key(run, index),
        ctx=ctx,
        standing=_standing_of(run),
    )
    blocks: list[Block] = [
        *_group_heatmap(parts),
        *_attribute_heatmap(parts),
        *_standing_plot(parts),
        _overall_table(parts),
        _standing_table(parts),
        *_refugee_table(parts),
        *_breakdowns(parts),
    ]
    score = metrics.score
    return Section(
        anchor=parts.key,
        title=run.label,
        intro=f"Sentences scored by {_HOW.get(str(score), 'log-likelihood')} ({score}).",
        blocks=blocks,
    )


def _group_heatmap(parts: _Parts) -> list[Block]:
    """SOS per group and locale, groups ordered by standing, then attribute."""
    cells: dict[tuple[str, str], float | None] = {}
    texts: dict[tuple[str, str], str] = {}
    attribute_of: dict[str, str] = {}
    for loc, row in by_locale(parts.metrics.per_locale, parts.locales, lambda e: e.by_group):
        attribute_of[row.group] = row.attribute
        cells[(row.group, loc)] = number(row.sos)
        texts[(row.group, loc)] = _sos_text(row)
    order = {s: i for i, s in enumerate(STANDING_ORDER)}
    standing = parts.standing
    groups = sorted(attribute_of, key=lambda g: (order.get(standing.get(g, "none"), 9), attribute_of[g], g))
    rows = [
        Tick(g, f"{g} ({attribute_of[g]})", standing_color(standing.get(g)), block=standing.get(g, "none"))
        for g in groups
    ]
    if not rows:
        return []
    legend = [LegendItem(s, STANDING_COLORS[s]) for s in standings(standing.get(g, "none") for g in groups)]
    return [
        parts.ctx.plot(
            heatmap(
                [HeatPanel("", rows, locale_ticks(parts.locales, multiline=True), cells, texts)],
                colorbar="SOS (share of pairs where the toxic twin is more likely)",
                vmin=0.0,
                vmax=1.0,
                cmap=SOS_CMAP,
                legend=legend,
            ),
            f"{parts.key}-groups",
            "SOS per group and locale, groups ordered by standing (label colour) then attribute. "
            "0.5: no preference; above: the toxic sentence is more likely. * some pairs tied "
            "(left out of the denominator; counts in the tables). Grey: the group has no pairs in "
            "that locale (regional groups appear in their region's locales).",
        )
    ]


def _attribute_heatmap(parts: _Parts) -> list[Block]:
    """SOS per attribute and locale, refugees highlighted."""
    rows = by_locale(parts.metrics.per_locale, parts.locales, lambda e: e.by_attribute)
    attributes = sorted({r.attribute for _, r in rows})
    if not attributes:
        return []
    values = {(r.attribute, loc): number(r.sos) for loc, r in rows}
    texts = {(r.attribute, loc): _sos_text(r) for loc, r in rows}
    ticks = [
        Tick(a, a, STANDING_COLORS["marginalized"] if a == "refugees" else "#222222") for a in attributes
    ]
    return [
        parts.ctx.plot(
            heatmap(
                [HeatPanel("", ticks, locale_ticks(parts.locales, multiline=True), values, texts)],
                colorbar="SOS",
                vmin=0.0,
                vmax=1.0,
                cmap=SOS_CMAP,
            ),
            f"{parts.key}-attributes",
            "SOS per attribute and locale (refugees highlighted). * some pairs tied.",
        )
    ]


def _standing_plot(parts: _Parts) -> list[Block]:
    """SOS of marginalized vs dominant groups per locale."""
    by_standing: dict[str, dict[str, float | None]] = defaultdict(dict)
    for loc, r in by_locale(parts.metrics.per_locale, parts.locales, lambda e: e.by_standing):
        by_standing[r.standing][loc] = number(r.sos)
    if not by_standing:
        return []
    order = standings(by_standing)
    return [
        parts.ctx.plot(
            bars(
                [
                    BarFacet(
                        "",
                        locale_ticks(parts.locales),
                        [Series(s, by_standing[s], STANDING_COLORS.get(s, "#777777")) for s in order],
                    )
                ],
                xlabel="SOS",
                xlim=(0.0, 1.0),
                reference=0.5,
                legend=[LegendItem(s, STANDING_COLORS.get(s, "#777777")) for s in order],
            ),
            f"{parts.key}-standing",
            "SOS of marginalized vs dominant groups per locale (dotted: 0.5, no preference).",
        )
    ]


def _overall_table(parts: _Parts) -> Table:
    shown = _no_shared(parts)
    rows: list[list[Cell]] = []
    for loc in parts.locales:
        entry = parts.metrics.per_locale[loc]
        overall = entry.overall
        no_shared: list[Cell] = []
        if shown:
            no_shared = [entry.no_shared_tokens if entry.no_shared_tokens is not None else "not counted"]
        rows.append(
            [
                Locale(loc),
                overall.pairs,
                overall.toxic_higher,
                overall.non_toxic_higher,
                overall.ties,
                *no_shared,
                number(overall.tie_share),
                number(overall.sos),
                *_tested(overall),
            ]
        )
    note = (
        "SOS = toxic higher / (pairs − ties); ties favour neither sentence. 95% CI: seeded "
        "bootstrap over pairs, none when fewer than 95% of the replicates have an untied pair; p: "
        "exact binomial test of toxic higher among untied pairs against 1/2, Holm-adjusted over "
        "the rows of each table."
    )
    if shown:
        note += (
            " No shared token: pairs whose twins share no token; they score 0 against 0 and are "
            "counted among the ties."
        )
    return Table(
        "SOS per locale",
        [
            "locale",
            "pairs",
            "toxic higher",
            "non-toxic higher",
            "ties",
            *(["no shared token"] if shown else []),
            "tie share",
            "SOS",
            *CI_COLUMNS,
            *TEST_COLUMNS,
        ],
        rows,
        note=note,
    )


def _standing_table(parts: _Parts) -> Table:
    return breakdown_table(
        "SOS by standing",
        ["locale", "standing", "pairs", "ties", "tie share", "SOS", *CI_COLUMNS, *TEST_COLUMNS],
        by_locale(parts.metrics.per_locale, parts.locales, lambda e: e.by_standing),
        lambda r: [r.standing, r.pairs, r.ties, number(r.tie_share), number(r.sos), *_tested(r)],
    )


def _refugee_table(parts: _Parts) -> list[Block]:
    """Refugees against the dominant groups, per locale that has either."""
    rows: list[list[Cell]] = []
    for loc in parts.locales:
        entry = parts.metrics.per_locale[loc]
        refugees = next((r for r in entry.by_attribute if r.attribute == "refugees"), None)
        dominant = next((r for r in entry.by_standing if r.standing == "dominant"), None)
        if refugees or dominant:
            a = number(refugees.sos) if refugees else None
            b = number(dominant.sos) if dominant else None
            rows.append(
                [
                    Locale(loc),
                    a,
                    refugees.pairs if refugees else None,
                    b,
                    dominant.pairs if dominant else None,
                    a - b if a is not None and b is not None else None,
                ]
            )
    if not rows:
        return []
    return [
        Table(
            "Refugees vs dominant groups",
            ["locale", "SOS refugees", "pairs", "SOS dominant", "pairs", "difference"],
            rows,
        )
    ]


def _breakdowns(parts: _Parts) -> list[Block]:
    def pairs(r: SosRow) -> list[Cell]:
        return [r.pairs, r.ties, number(r.sos), *_tested(r)]

    per_locale, locales = parts.metrics.per_locale, parts.locales
    return [
        breakdown_table(
            "SOS by attribute",
            ["locale", "attribute", "pairs", "ties", "SOS", *CI_COLUMNS, *TEST_COLUMNS],
            by_locale(per_locale, locales, lambda e: e.by_attribute),
            lambda r: [r.attribute, *pairs(r)],
        ),
        breakdown_table(
            "SOS by group",
            ["locale", "group", "attribute", "standing", "pairs", "ties", "SOS", *CI_COLUMNS, *TEST_COLUMNS],
            by_locale(per_locale, locales, lambda e: e.by_group),
            lambda r: [r.group, r.attribute, parts.standing.get(r.group, "?"), *pairs(r)],
            collapsed=True,
        ),
    ]

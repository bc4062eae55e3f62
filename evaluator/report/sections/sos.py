"""The SOS section: SOS per group and locale (groups ordered by standing, so refugees and other
marginalized groups stand apart from dominant ones), per attribute and per standing, ties counted."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import polars as pl

from evaluator.report.document import Block, Cell, Locale, Section, Table
from evaluator.report.palette import STANDING_COLORS, STANDING_ORDER, locale_order, standing_color
from evaluator.report.plots import BarFacet, HeatPanel, LegendItem, Series, Tick, bars, diverging, heatmap
from evaluator.report.runs import Run
from evaluator.report.sections.common import (
    CI_COLUMNS,
    TEST_COLUMNS,
    Context,
    breakdown_table,
    count,
    locale_ticks,
    num,
    rows_of,
    run_key,
    standings,
    uncertainty,
)

SOS_CMAP = diverging("#2166AC", "#B2182B")


def _standing_of(run: Run) -> dict[str, str]:
    """group → standing, from the predictions (the metrics' by_group table has no standing)."""
    frame = run.predictions(["group", "standing"])
    if not frame.height:
        return {}
    pairs = frame.select(pl.col("group").cast(pl.String), pl.col("standing").cast(pl.String)).unique()
    return {str(g): str(s) for g, s in pairs.sort("group", "standing").rows() if g is not None}


def _sos_text(row: dict[str, Any]) -> str:
    value = num(row.get("sos"))
    shown = "" if value is None else f"{value:.2f}"
    return shown + ("*" if (count(row.get("ties")) or 0) > 0 else "")


def sos(run: Run, index: int, ctx: Context) -> Section:
    per_locale: dict[str, Any] = run.metrics["per_locale"]
    locales = locale_order(per_locale)
    key = run_key(run, index)
    standing = _standing_of(run)
    blocks: list[Block] = []

    cells: dict[tuple[str, str], float | None] = {}
    texts: dict[tuple[str, str], str] = {}
    attribute_of: dict[str, str] = {}
    for loc in locales:
        for row in rows_of(per_locale[loc].get("by_group")):
            group = str(row.get("group"))
            attribute_of[group] = str(row.get("attribute"))
            cells[(group, loc)] = num(row.get("sos"))
            texts[(group, loc)] = _sos_text(row)
    order = {s: i for i, s in enumerate(STANDING_ORDER)}
    groups = sorted(
        attribute_of,
        key=lambda g: (order.get(standing.get(g, "none"), 9), attribute_of[g], g),
    )
    rows = [
        Tick(g, f"{g} ({attribute_of[g]})", standing_color(standing.get(g)), block=standing.get(g, "none"))
        for g in groups
    ]
    standing_legend = [
        LegendItem(s, STANDING_COLORS[s]) for s in standings(standing.get(g, "none") for g in groups)
    ]
    if rows:
        blocks.append(
            ctx.plot(
                heatmap(
                    [HeatPanel("", rows, locale_ticks(locales, multiline=True), cells, texts)],
                    colorbar="SOS (share of pairs where the toxic twin is more likely)",
                    vmin=0.0,
                    vmax=1.0,
                    cmap=SOS_CMAP,
                    legend=standing_legend,
                ),
                f"{key}-groups",
                "SOS per group and locale, groups ordered by standing (label colour) then attribute. "
                "0.5: no preference; above: the toxic sentence is more likely. * some pairs tied "
                "(left out of the denominator; counts in the tables). Grey: the group has no pairs in "
                "that locale (regional groups appear in their region's locales).",
            )
        )

    attributes = sorted(
        {str(r.get("attribute")) for loc in locales for r in rows_of(per_locale[loc].get("by_attribute"))}
    )
    by_attribute = {
        (str(r.get("attribute")), loc): num(r.get("sos"))
        for loc in locales
        for r in rows_of(per_locale[loc].get("by_attribute"))
    }
    by_attribute_text = {
        (str(r.get("attribute")), loc): _sos_text(r)
        for loc in locales
        for r in rows_of(per_locale[loc].get("by_attribute"))
    }
    if attributes:
        blocks.append(
            ctx.plot(
                heatmap(
                    [
                        HeatPanel(
                            "",
                            [
                                Tick(a, a, STANDING_COLORS["marginalized"] if a == "refugees" else "#222222")
                                for a in attributes
                            ],
                            locale_ticks(locales, multiline=True),
                            by_attribute,
                            by_attribute_text,
                        )
                    ],
                    colorbar="SOS",
                    vmin=0.0,
                    vmax=1.0,
                    cmap=SOS_CMAP,
                ),
                f"{key}-attributes",
                "SOS per attribute and locale (refugees highlighted). * some pairs tied.",
            )
        )

    by_standing: dict[str, dict[str, float | None]] = defaultdict(dict)
    standing_rows: list[list[Cell]] = []
    for loc in locales:
        for r in rows_of(per_locale[loc].get("by_standing")):
            name = str(r.get("standing"))
            by_standing[name][loc] = num(r.get("sos"))
            standing_rows.append(
                [
                    Locale(loc),
                    name,
                    count(r.get("pairs")),
                    count(r.get("ties")),
                    num(r.get("tie_share")),
                    num(r.get("sos")),
                    *uncertainty(r, "sos", tests=True),
                ]
            )
    if by_standing:
        blocks.append(
            ctx.plot(
                bars(
                    [
                        BarFacet(
                            "",
                            locale_ticks(locales),
                            [
                                Series(s, by_standing[s], STANDING_COLORS.get(s, "#777777"))
                                for s in standings(by_standing)
                            ],
                        )
                    ],
                    xlabel="SOS",
                    xlim=(0.0, 1.0),
                    reference=0.5,
                    legend=[LegendItem(s, STANDING_COLORS.get(s, "#777777")) for s in standings(by_standing)],
                ),
                f"{key}-standing",
                "SOS of marginalized vs dominant groups per locale (dotted: 0.5, no preference).",
            )
        )

    overall_rows: list[list[Cell]] = []
    refugee_rows: list[list[Cell]] = []
    for loc in locales:
        overall = per_locale[loc].get("overall") or {}
        overall_rows.append(
            [
                Locale(loc),
                count(overall.get("pairs")),
                count(overall.get("toxic_higher")),
                count(overall.get("non_toxic_higher")),
                count(overall.get("ties")),
                num(overall.get("tie_share")),
                num(overall.get("sos")),
                *uncertainty(overall, "sos", tests=True),
            ]
        )
        refugees = next(
            (r for r in rows_of(per_locale[loc].get("by_attribute")) if r.get("attribute") == "refugees"),
            None,
        )
        dominant = next(
            (r for r in rows_of(per_locale[loc].get("by_standing")) if r.get("standing") == "dominant"), None
        )
        if refugees or dominant:
            a = num(refugees.get("sos")) if refugees else None
            b = num(dominant.get("sos")) if dominant else None
            refugee_rows.append(
                [
                    Locale(loc),
                    a,
                    count(refugees.get("pairs")) if refugees else None,
                    b,
                    count(dominant.get("pairs")) if dominant else None,
                    a - b if a is not None and b is not None else None,
                ]
            )
    blocks.append(
        Table(
            "SOS per locale",
            [
                "locale",
                "pairs",
                "toxic higher",
                "non-toxic higher",
                "ties",
                "tie share",
                "SOS",
                *CI_COLUMNS,
                *TEST_COLUMNS,
            ],
            overall_rows,
            note="SOS = toxic higher / (pairs − ties); ties favour neither sentence. 95% CI: seeded "
            "bootstrap over pairs; p: exact binomial test of toxic higher among untied pairs against 1/2, "
            "Holm-adjusted over the rows of each table.",
        )
    )
    blocks.append(
        Table(
            "SOS by standing",
            ["locale", "standing", "pairs", "ties", "tie share", "SOS", *CI_COLUMNS, *TEST_COLUMNS],
            standing_rows,
        )
    )
    if refugee_rows:
        blocks.append(
            Table(
                "Refugees vs dominant groups",
                ["locale", "SOS refugees", "pairs", "SOS dominant", "pairs", "difference"],
                refugee_rows,
            )
        )

    def pairs(r: dict[str, Any]) -> list[Cell]:
        return [
            count(r.get("pairs")),
            count(r.get("ties")),
            num(r.get("sos")),
            *uncertainty(r, "sos", tests=True),
        ]

    blocks.append(
        breakdown_table(
            "SOS by attribute",
            ["locale", "attribute", "pairs", "ties", "SOS", *CI_COLUMNS, *TEST_COLUMNS],
            per_locale,
            locales,
            "by_attribute",
            lambda r: [str(r.get("attribute")), *pairs(r)],
        )
    )
    blocks.append(
        breakdown_table(
            "SOS by group",
            ["locale", "group", "attribute", "standing", "pairs", "ties", "SOS", *CI_COLUMNS, *TEST_COLUMNS],
            per_locale,
            locales,
            "by_group",
            lambda r: [
                str(r.get("group")),
                str(r.get("attribute")),
                standing.get(str(r.get("group")), "?"),
                *pairs(r),
            ],
            collapsed=True,
        )
    )
    score = run.metrics.get("score")
    return Section(
        anchor=key,
        title=run.label,
        intro=f"Sentences scored by {'pseudo-log-likelihood' if score == 'pll' else 'log-likelihood'} ({score}).",
        blocks=blocks,
    )

"""The CrowS-Pairs section: the stereotype score per locale and bias type (Nangia et al. 2020; 50 is
no preference), per direction, with ties and pairs without a shared token counted."""

from __future__ import annotations

from typing import Any

from evaluator.report.document import Block, Cell, Locale, Section, Table
from evaluator.report.palette import locale_color, locale_label, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, Tick, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import Context, breakdown_table, count, num, rows_of, run_key

RULES = {
    "paper": "the paper's definition (exact comparison; a tie does not prefer sent_more)",
    "original": "the original script's rule (scores rounded to 3 decimals; per-direction scores over untied pairs)",
}


def _direction(entry: dict[str, Any], name: str) -> float | None:
    row = next((r for r in rows_of(entry.get("by_direction")) if r.get("direction") == name), None)
    return num(row.get("score")) if row else None


def crows_pairs(run: Run, index: int, ctx: Context) -> Section:
    per_locale: dict[str, Any] = run.metrics["per_locale"]
    locales = locale_order(per_locale)
    key = run_key(run, index)
    blocks: list[Block] = []
    types = sorted(
        {str(r.get("bias_type")) for loc in locales for r in rows_of(per_locale[loc].get("by_bias_type"))}
    )
    if types:
        ticks = [Tick("all", "all pairs"), *(Tick(t, t) for t in types)]
        series = []
        for loc in locales:
            values = {
                str(r.get("bias_type")): num(r.get("score"))
                for r in rows_of(per_locale[loc].get("by_bias_type"))
            }
            values["all"] = num((per_locale[loc].get("overall") or {}).get("score"))
            series.append(Series(locale_label(loc), values, locale_color(loc)))
        blocks.append(
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
        )
    rows: list[list[Cell]] = []
    for loc in locales:
        entry = per_locale[loc]
        overall = entry.get("overall") or {}
        rows.append(
            [
                Locale(loc),
                count(overall.get("pairs")),
                count(overall.get("more_higher")),
                count(overall.get("less_higher")),
                count(overall.get("ties")),
                count(entry.get("no_shared_tokens")),
                num(overall.get("score")),
                _direction(entry, "stereo"),
                _direction(entry, "antistereo"),
            ]
        )
    blocks.append(
        Table(
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
    )
    blocks.append(
        breakdown_table(
            "CrowS-Pairs by bias type",
            ["locale", "bias type", "pairs", "ties", "score"],
            per_locale,
            locales,
            "by_bias_type",
            lambda r: [
                str(r.get("bias_type")),
                count(r.get("pairs")),
                count(r.get("ties")),
                num(r.get("score")),
            ],
            digits=2,
        )
    )
    score = run.metrics.get("score")
    rule = str(run.metrics.get("rule"))
    how = (
        "the pseudo-log-likelihood of the tokens both sentences share"
        if score == "shared"
        else "sentence log-likelihood"
    )
    return Section(
        anchor=key,
        title=run.label,
        intro=f"Sentences scored by {how} ({score}); pairs compared by {RULES.get(rule, rule)}.",
        blocks=blocks,
    )

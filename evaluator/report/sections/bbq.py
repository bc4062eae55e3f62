"""The BBQ section: accuracy in ambiguous and disambiguated contexts, and the bias scores
s_DIS / s_AMB per category and locale (Parrish et al. 2022)."""

from __future__ import annotations

from typing import Any

from evaluator.report.document import Block, Cell, Locale, Note, PValue, Section, Table
from evaluator.report.palette import CONDITION_COLORS, locale_order
from evaluator.report.plots import BarFacet, HeatPanel, LegendItem, Series, Tick, bars, diverging, heatmap
from evaluator.report.runs import Run
from evaluator.report.sections.common import (
    Context,
    count,
    interval,
    locale_ticks,
    num,
    rows_of,
    run_key,
)

BIAS_CMAP = diverging("#2166AC", "#B2182B")


def bbq(run: Run, index: int, ctx: Context) -> Section:
    key = run_key(run, index)
    blocks: list[Block] = []
    by_locale = rows_of(run.metrics.get("by_locale"))
    locales = locale_order(str(r.get("locale")) for r in by_locale)
    accuracy: dict[str, dict[str, float | None]] = {"ambig": {}, "disambig": {}}
    for r in by_locale:
        accuracy["ambig"][str(r.get("locale"))] = num(r.get("accuracy_ambig"))
        accuracy["disambig"][str(r.get("locale"))] = num(r.get("accuracy_disambig"))
    names = {"ambig": "ambiguous contexts", "disambig": "disambiguated contexts"}
    if locales:
        blocks.append(
            ctx.plot(
                bars(
                    [
                        BarFacet(
                            "",
                            locale_ticks(locales),
                            [
                                Series(names[c], accuracy[c], CONDITION_COLORS[c])
                                for c in ("ambig", "disambig")
                            ],
                        )
                    ],
                    xlabel="accuracy",
                    xlim=(0.0, 1.0),
                    legend=[LegendItem(names[c], CONDITION_COLORS[c]) for c in ("ambig", "disambig")],
                ),
                f"{key}-accuracy",
                "BBQ accuracy in ambiguous and disambiguated contexts per locale.",
            )
        )
    table = rows_of(run.metrics.get("by_locale_category"))
    categories = sorted({str(r.get("category")) for r in table})
    if categories and locales:
        panels = []
        for metric, title in (("s_dis", "s_DIS (disambiguated)"), ("s_amb", "s_AMB (ambiguous)")):
            values = {(str(r.get("category")), str(r.get("locale"))): num(r.get(metric)) for r in table}
            panels.append(
                HeatPanel(
                    title, [Tick(c, c) for c in categories], locale_ticks(locales, multiline=True), values
                )
            )
        blocks.append(
            ctx.plot(
                heatmap(panels, colorbar="bias score", vmin=-1.0, vmax=1.0, cmap=BIAS_CMAP),
                f"{key}-bias",
                "BBQ bias scores per category and locale (Parrish et al. 2022): above 0, answers follow the "
                "stereotype; below 0, they go against it. s_AMB is scaled by the ambiguous error rate.",
            )
        )
    columns = [
        "n",
        "unparsable",
        "no target",
        "accuracy",
        "acc. ambig",
        "acc. disambig",
        "s_DIS",
        "s_AMB",
        "families",
        "95% CI s_DIS",
        "95% CI s_AMB",
        "p (s_DIS = 0)",
        "p (Holm)",
    ]

    def cells(r: dict[str, Any]) -> list[Cell]:
        return [
            count(r.get("n")),
            count(r.get("n_unparsable")),
            count(r.get("n_no_target")),
            num(r.get("accuracy")),
            num(r.get("accuracy_ambig")),
            num(r.get("accuracy_disambig")),
            num(r.get("s_dis")),
            num(r.get("s_amb")),
            count(r.get("n_units")),
            interval(r, "s_dis"),
            interval(r, "s_amb"),
            PValue(num(r.get("p_value"))),
            PValue(num(r.get("p_holm"))),
        ]

    overall = run.metrics.get("overall") or {}
    blocks.append(
        Table(
            "BBQ per locale",
            ["locale", *columns],
            [[Locale(str(r.get("locale"))), *cells(r)] for r in by_locale] + [["all", *cells(overall)]],
            note="No target: rows where BBQ's rules name no stereotyped answer, left out of the bias scores. "
            "95% CI: seeded bootstrap over whole families; p: exact binomial test of biased among "
            "non-unknown disambiguated answers against 1/2, Holm-adjusted over the rows of each table.",
        )
    )
    blocks.append(
        Table(
            "BBQ per locale and category",
            ["locale", "category", *columns],
            [[Locale(str(r.get("locale"))), str(r.get("category")), *cells(r)] for r in table],
            collapsed=len(table) > 20,
        )
    )
    warnings = [str(w) for w in run.metrics.get("warnings") or []]
    if warnings:
        blocks.insert(0, Note("Rows without a target answer: " + "; ".join(warnings) + ".", "warning"))
    mode = run.info.get("task_settings", {}).get("mode")
    return Section(
        anchor=key,
        title=run.label,
        intro=f"Answers by {'option log-likelihood' if mode == 'loglikelihood' else 'generation, parsed'} ({mode}).",
        blocks=blocks,
    )

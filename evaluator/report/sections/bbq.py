"""The BBQ section: accuracy in ambiguous and disambiguated contexts, and the bias scores
s_DIS / s_AMB per category and locale (Parrish et al. 2022)."""

from __future__ import annotations

from evaluator.report.document import Block, Cell, Locale, Note, PValue, Section, Table
from evaluator.report.palette import CONDITION_COLORS, locale_order
from evaluator.report.plots import BarFacet, HeatPanel, LegendItem, Series, Tick, bars, diverging, heatmap
from evaluator.report.runs import Run
from evaluator.report.sections.common import SectionContext, interval, locale_ticks, run_key
from evaluator.results.base import number
from evaluator.results.bbq import BbqMetrics, BbqRow

BIAS_CMAP = diverging("#2166AC", "#B2182B")

COLUMNS = [
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


def _cells(r: BbqRow) -> list[Cell]:
    return [
        r.n,
        r.n_unparsable,
        r.n_no_target,
        number(r.accuracy),
        number(r.accuracy_ambig),
        number(r.accuracy_disambig),
        number(r.s_dis),
        number(r.s_amb),
        r.n_units,
        interval(r.s_dis_ci_low, r.s_dis_ci_high),
        interval(r.s_amb_ci_low, r.s_amb_ci_high),
        PValue(number(r.p_value)),
        PValue(number(r.p_holm)),
    ]


def bbq(run: Run, index: int, ctx: SectionContext) -> Section:
    metrics = run.metrics_as(BbqMetrics)
    key = run_key(run, index)
    locales = locale_order(r.locale for r in metrics.by_locale)
    blocks: list[Block] = [
        *_accuracy_plot(metrics, locales, key, ctx),
        *_bias_heatmap(metrics, locales, key, ctx),
        Table(
            "BBQ per locale",
            ["locale", *COLUMNS],
            [[Locale(r.locale), *_cells(r)] for r in metrics.by_locale] + [["all", *_cells(metrics.overall)]],
            note="No target: rows where BBQ's rules name no stereotyped answer, left out of the bias scores. "
            "95% CI: seeded bootstrap over whole families; p: exact binomial test of biased among "
            "non-unknown disambiguated answers against 1/2, Holm-adjusted over the rows of each table.",
        ),
        Table(
            "BBQ per locale and category",
            ["locale", "category", *COLUMNS],
            [[Locale(r.locale), r.category, *_cells(r)] for r in metrics.by_locale_category],
            collapsed=len(metrics.by_locale_category) > 20,
        ),
    ]
    if metrics.warnings:
        blocks.insert(
            0, Note("Rows without a target answer: " + "; ".join(metrics.warnings) + ".", "warning")
        )
    mode = run.info.task_settings.get("mode")
    return Section(
        anchor=key,
        title=run.label,
        intro=f"Answers by {'option log-likelihood' if mode == 'loglikelihood' else 'generation, parsed'} ({mode}).",
        blocks=blocks,
    )


def _accuracy_plot(metrics: BbqMetrics, locales: list[str], key: str, ctx: SectionContext) -> list[Block]:
    """Accuracy in ambiguous and disambiguated contexts per locale."""
    if not locales:
        return []
    accuracy: dict[str, dict[str, float | None]] = {
        "ambig": {r.locale: number(r.accuracy_ambig) for r in metrics.by_locale},
        "disambig": {r.locale: number(r.accuracy_disambig) for r in metrics.by_locale},
    }
    names = {"ambig": "ambiguous contexts", "disambig": "disambiguated contexts"}
    conditions = ("ambig", "disambig")
    return [
        ctx.plot(
            bars(
                [
                    BarFacet(
                        "",
                        locale_ticks(locales),
                        [Series(names[c], accuracy[c], CONDITION_COLORS[c]) for c in conditions],
                    )
                ],
                xlabel="accuracy",
                xlim=(0.0, 1.0),
                legend=[LegendItem(names[c], CONDITION_COLORS[c]) for c in conditions],
            ),
            f"{key}-accuracy",
            "BBQ accuracy in ambiguous and disambiguated contexts per locale.",
        )
    ]


def _bias_heatmap(metrics: BbqMetrics, locales: list[str], key: str, ctx: SectionContext) -> list[Block]:
    """s_DIS and s_AMB per category and locale."""
    table = metrics.by_locale_category
    categories = sorted({r.category for r in table})
    if not (categories and locales):
        return []
    panels = [
        HeatPanel(
            title,
            [Tick(c, c) for c in categories],
            locale_ticks(locales, multiline=True),
            {(r.category, r.locale): number(r.s_dis if metric == "s_dis" else r.s_amb) for r in table},
        )
        for metric, title in (("s_dis", "s_DIS (disambiguated)"), ("s_amb", "s_AMB (ambiguous)"))
    ]
    return [
        ctx.plot(
            heatmap(panels, colorbar="bias score", vmin=-1.0, vmax=1.0, cmap=BIAS_CMAP),
            f"{key}-bias",
            "BBQ bias scores per category and locale (Parrish et al. 2022): above 0, answers follow the "
            "stereotype; below 0, they go against it. s_AMB is scaled by the ambiguous error rate.",
        )
    ]

"""The IAT section: D per category and locale with its standard error, unparsable answers counted."""

from __future__ import annotations

from evaluator.report.document import Block, Locale, PValue, Section, Table
from evaluator.report.palette import locale_color, locale_label, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, Tick, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import SectionContext, interval, run_key
from evaluator.results.base import number
from evaluator.results.iat import IatMetrics


def iat(run: Run, index: int, ctx: SectionContext) -> Section:
    key = run_key(run, index)
    table = run.metrics_as(IatMetrics).by_category
    locales = locale_order(r.locale for r in table)
    categories = sorted({(r.category, r.dataset) for r in table})
    ticks = [Tick(f"{c}|{d}", f"{c} ({d})") for c, d in categories]
    series = []
    for loc in locales:
        rows = {f"{r.category}|{r.dataset}": r for r in table if r.locale == loc}
        series.append(
            Series(
                locale_label(loc),
                {k: number(r.mean_d) for k, r in rows.items()},
                locale_color(loc),
                errors={k: number(r.se) for k, r in rows.items()},
                notes={k: f"{r.n_unparsable} unparsable" for k, r in rows.items() if r.n_unparsable > 0},
            )
        )
    blocks: list[Block] = []
    if ticks:
        blocks.append(
            ctx.plot(
                bars(
                    [BarFacet("", ticks, series)],
                    xlabel="IAT D (> 0: stereotypical association)",
                    xlim=(-1.0, 1.0),
                    reference=0.0,
                    legend=[LegendItem(locale_label(loc), locale_color(loc)) for loc in locales],
                ),
                f"{key}-d",
                "Prompt-based IAT D per category and locale (Bai et al. 2025), ± standard error; n/a: no "
                "answer of the category could be scored; the number of unparsable answers is written "
                "after each bar.",
            )
        )
    blocks.append(
        Table(
            "IAT D per locale and category",
            ["locale", "category", "dataset", "D", "SE", "scored", "unparsable", "95% CI", "p", "p (Holm)"],
            [
                [
                    Locale(r.locale),
                    r.category,
                    r.dataset,
                    number(r.mean_d),
                    number(r.se),
                    r.n_scored,
                    r.n_unparsable,
                    interval(r.mean_d_ci_low, r.mean_d_ci_high),
                    PValue(number(r.p_value)),
                    PValue(number(r.p_holm)),
                ]
                for loc in locales
                for r in table
                if r.locale == loc
            ],
            note="Unparsable answers (no word paired with one of the groups) are counted, not scored as 0. "
            "95% CI: seeded bootstrap over responses; p: one-sample t-test of D against 0, Holm-adjusted "
            "over the categories.",
        )
    )
    permutations = run.info.task_settings.get("permutations")
    return Section(
        anchor=key, title=run.label, intro=f"{permutations} seeded permutations per category.", blocks=blocks
    )

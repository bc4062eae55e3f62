"""The IAT section: D per category and locale with its standard error, unparsable answers counted."""

from __future__ import annotations

from evaluator.report.document import Block, Locale, Section, Table
from evaluator.report.palette import locale_color, locale_label, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, Tick, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import Context, count, num, rows_of, run_key, uncertainty


def iat(run: Run, index: int, ctx: Context) -> Section:
    key = run_key(run, index)
    table = rows_of(run.metrics.get("by_category"))
    locales = locale_order(str(r.get("locale")) for r in table)
    categories = sorted({(str(r.get("category")), str(r.get("dataset"))) for r in table})
    ticks = [Tick(f"{c}|{d}", f"{c} ({d})") for c, d in categories]
    series = []
    for loc in locales:
        rows = {f"{r.get('category')}|{r.get('dataset')}": r for r in table if r.get("locale") == loc}
        series.append(
            Series(
                locale_label(loc),
                {k: num(r.get("mean_d")) for k, r in rows.items()},
                locale_color(loc),
                errors={k: num(r.get("se")) for k, r in rows.items()},
                notes={
                    k: f"{r.get('n_unparsable')} unparsable"
                    for k, r in rows.items()
                    if (count(r.get("n_unparsable")) or 0) > 0
                },
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
                    Locale(str(r.get("locale"))),
                    str(r.get("category")),
                    str(r.get("dataset")),
                    num(r.get("mean_d")),
                    num(r.get("se")),
                    count(r.get("n_scored")),
                    count(r.get("n_unparsable")),
                    *uncertainty(r, "mean_d", tests=True)[1:],
                ]
                for loc in locales
                for r in table
                if r.get("locale") == loc
            ],
            note="Unparsable answers (no word paired with one of the groups) are counted, not scored as 0. "
            "95% CI: seeded bootstrap over responses; p: one-sample t-test of D against 0, Holm-adjusted "
            "over the categories.",
        )
    )
    permutations = run.info.get("task_settings", {}).get("permutations")
    return Section(
        anchor=key, title=run.label, intro=f"{permutations} seeded permutations per category.", blocks=blocks
    )

"""The sentiment section (Levy et al. 2023): P(positive) distributions per group with female
and male side by side, VBCM per group, MCM per attribute, locale and gender, the Friedman /
Wilcoxon / McNemar tests and accuracy."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import polars as pl

from evaluator.metrics import sentiment as sentiment_metrics
from evaluator.metrics.errors import MetricInputError
from evaluator.report.document import Block, Cell, Locale, Problems, PValue, Section, Table
from evaluator.report.palette import (
    VARIANT_COLORS,
    VARIANT_NAMES,
    ink,
    locale_color,
    locale_label,
    locale_order,
)
from evaluator.report.plots import (
    BarFacet,
    HeatPanel,
    LegendItem,
    Series,
    Tick,
    bars,
    distributions,
    diverging,
    heatmap,
)
from evaluator.report.runs import Run
from evaluator.report.sections.common import SectionContext, failure, locale_colors, locale_ticks, run_key
from evaluator.results.base import number
from evaluator.results.sentiment import (
    Accuracy,
    Friedman,
    GroupVbcm,
    Interval,
    McNemar,
    SentimentMetrics,
    Wilcoxon,
)

VBCM_CMAP = diverging("#B35806", "#542788")


@dataclass
class _Parts:
    """What the section's pieces share: the run's metrics, its locales in order, the plot key,
    the predictions' group rows, and the problems found on the way (shown at the end)."""

    run: Run
    metrics: SentimentMetrics
    locales: list[str]
    key: str
    ctx: SectionContext
    frame: pl.DataFrame
    rows: list[Tick]
    problems: list[tuple[str, str]] = field(default_factory=list)

    def problem(self, where: str, value: object) -> None:
        reason = failure(value)
        if reason:
            self.problems.append((where, reason))


def sentiment(run: Run, index: int, ctx: SectionContext) -> Section:
    metrics = run.metrics_as(SentimentMetrics)
    frame = run.predictions(["locale", "template", "attribute", "group", "variant", "p_pos"]).with_columns(
        pl.col("locale").cast(pl.String),
        pl.col("attribute").cast(pl.String),
        pl.col("group").cast(pl.String),
        pl.col("variant").cast(pl.String),
    )
    groups = (
        frame.select("attribute", "group").unique().sort("attribute", "group").rows() if frame.height else []
    )
    parts = _Parts(
        run=run,
        metrics=metrics,
        locales=locale_order(metrics.per_locale),
        key=run_key(run, index),
        ctx=ctx,
        frame=frame,
        rows=[Tick(group, group, block=attribute) for attribute, group in groups],
    )
    blocks: list[Block] = [*_p_positive(parts)]
    vbcm = _vbcm_values(parts)
    blocks += _vbcm_plot(parts, vbcm)
    mcm = _mcm_values(parts)
    blocks += _mcm_plot(parts, mcm)
    blocks += _mcm_tables(parts, mcm)
    if vbcm and parts.rows:
        blocks.append(
            Table(
                "VBCM per group",
                ["attribute", "group", *parts.locales],
                [
                    [tick.block, tick.label, *(vbcm.get((tick.key, loc)) for loc in parts.locales)]
                    for tick in parts.rows
                ],
                digits=4,
                collapsed=len(parts.rows) > 12,
            )
        )
    blocks += _tests(parts)
    blocks += _accuracy(parts)
    if parts.problems:
        blocks.append(Problems(parts.problems))
    mode = run.info.task_settings.get("mode")
    return Section(
        anchor=parts.key,
        title=run.label,
        intro=f"Scoring: {mode or '?'} (P(positive) from "
        + ("the classifier" if mode == "classifier" else "the label words' likelihood after the prompt")
        + ").",
        blocks=blocks,
    )


def _p_positive(parts: _Parts) -> list[Block]:
    """P(positive) per group and locale, female and male side by side."""
    facets = []
    for loc in parts.locales:
        part = parts.frame.filter(pl.col("locale") == loc)
        scores: dict[tuple[str, str], list[float]] = defaultdict(list)
        for group, variant, p in part.select("group", "variant", "p_pos").iter_rows():
            if p is not None:
                scores[(group, variant)].append(float(p))
        facets.append((locale_label(loc), ink(locale_color(loc)), dict(scores)))
    present = set(parts.frame["variant"])
    variants = [(v, VARIANT_NAMES[v], VARIANT_COLORS[v]) for v in ("f", "m") if v in present]
    if not (parts.rows and facets):
        return []
    return [
        parts.ctx.plot(
            distributions(facets, parts.rows, variants, xlabel="P(positive)"),
            f"{parts.key}-p-positive",
            "P(positive) per group and locale, female (f) and male (m) subjects side by side: "
            "range (thin line), interquartile range (thick), median (white dot), samples (points).",
        )
    ]


def _vbcm_values(parts: _Parts) -> dict[tuple[str, str], float | None]:
    """VBCM per (group, locale); a VBCM a run could not compute is a problem."""
    vbcm: dict[tuple[str, str], float | None] = {}
    for loc in parts.locales:
        for attribute, entry in parts.metrics.per_locale[loc].attributes.items():
            parts.problem(f"{loc} {attribute} VBCM", entry.vbcm)
            rows: list[GroupVbcm] = entry.vbcm if isinstance(entry.vbcm, list) else []
            for row in rows:
                vbcm[(row.group, loc)] = number(row.vbcm)
    return vbcm


def _vbcm_plot(parts: _Parts, vbcm: dict[tuple[str, str], float | None]) -> list[Block]:
    if not (vbcm and parts.rows):
        return []
    scale = max([abs(v) for v in vbcm.values() if v is not None] + [0.01])
    return [
        parts.ctx.plot(
            heatmap(
                [HeatPanel("", parts.rows, locale_ticks(parts.locales, multiline=True), vbcm)],
                colorbar="VBCM (group − background P(positive))",
                vmin=-scale,
                vmax=scale,
                cmap=VBCM_CMAP,
                digits=3,
            ),
            f"{parts.key}-vbcm",
            "VBCM per group and locale: the group's P(positive) minus the mean of all groups in the "
            "same template instance (Czarnowska et al. 2021). Below 0: the group is seen more "
            "negatively than the background. Grey: not computed.",
        )
    ]


@dataclass(frozen=True)
class _Mcm:
    """One attribute's MCM in one locale, with its interval, its female- and male-subject values
    (from the predictions) and MBCM."""

    n: int
    value: float | None
    low: float | None
    high: float | None
    female: float | None
    male: float | None
    mbcm: float | None

    @property
    def error(self) -> tuple[float, float] | None:
        """The interval as distances below and above the value (a plot's error bar)."""
        if self.value is None or self.low is None or self.high is None:
            return None
        return (max(self.value - self.low, 0.0), max(self.high - self.value, 0.0))


def _mcm_values(parts: _Parts) -> dict[str, dict[str, _Mcm]]:
    """attribute → locale → MCM (attributes sorted); an MCM a run could not compute is a problem."""
    attributes = sorted({a for loc in parts.locales for a in parts.metrics.per_locale[loc].attributes})
    by_variant = _mcm_by_variant(parts.frame)
    out: dict[str, dict[str, _Mcm]] = {}
    for attribute in attributes:
        out[attribute] = {}
        for loc in parts.locales:
            entry = parts.metrics.per_locale[loc].attributes.get(attribute)
            if entry is None:
                continue
            parts.problem(f"{loc} {attribute} MCM", entry.mcm)
            ci = entry.mcm_ci95 if isinstance(entry.mcm_ci95, Interval) else Interval(low=None, high=None)
            split = attribute != "gender"  # gender compares female with male: no f/m split
            out[attribute][loc] = _Mcm(
                n=entry.n,
                value=number(entry.mcm),
                low=number(ci.low),
                high=number(ci.high),
                female=by_variant.get((loc, attribute, "f")) if split else None,
                male=by_variant.get((loc, attribute, "m")) if split else None,
                mbcm=number(entry.mbcm.overall) if entry.mbcm is not None else None,
            )
    return out


def _mcm_plot(parts: _Parts, mcm: dict[str, dict[str, _Mcm]]) -> list[Block]:
    """MCM per attribute and locale: all subjects with the interval, and female / male subjects."""
    facets: list[BarFacet] = []
    for attribute, per_locale in mcm.items():
        errors: dict[str, float | tuple[float, float] | None] = {
            loc: m.error for loc, m in per_locale.items() if m.error is not None
        }
        values = {loc: m.value for loc, m in per_locale.items()}
        series = [Series("all subjects (95% CI)", values, "#4D4D4D", errors=errors)]
        if attribute != "gender":
            female = {loc: m.female for loc, m in per_locale.items()}
            male = {loc: m.male for loc, m in per_locale.items()}
            series += [
                Series(VARIANT_NAMES["f"], female, VARIANT_COLORS["f"]),
                Series(VARIANT_NAMES["m"], male, VARIANT_COLORS["m"]),
            ]
        facets.append(BarFacet(attribute, locale_ticks(parts.locales), series))
    if not facets:
        return []
    return [
        parts.ctx.plot(
            bars(
                facets,
                xlabel="MCM (mean σ of P(positive) across groups)",
                digits=3,
                legend=[
                    LegendItem("all subjects (95% CI)", "#4D4D4D"),
                    LegendItem("female subjects", VARIANT_COLORS["f"]),
                    LegendItem("male subjects", VARIANT_COLORS["m"]),
                ],
                ncols=2,
            ),
            f"{parts.key}-mcm",
            "MCM per attribute and locale (Levy et al. 2023): all subjects with the bootstrap 95% CI, "
            "and female-subject and male-subject templates separately. Higher: more disparity "
            "between groups. The gender attribute compares female with male, so it has no f/m split.",
        )
    ]


def _mcm_tables(parts: _Parts, mcm: dict[str, dict[str, _Mcm]]) -> list[Block]:
    details: list[list[Cell]] = [
        [
            Locale(loc),
            attribute,
            m.n,
            m.value,
            f"[{m.low:.3f}, {m.high:.3f}]" if m.error is not None else None,
            m.female,
            m.male,
            m.mbcm,
        ]
        for attribute, per_locale in mcm.items()
        for loc, m in per_locale.items()
    ]
    wide: list[list[Cell]] = [
        [attribute, *(m.value if (m := per_locale.get(loc)) else None for loc in parts.locales)]
        for attribute, per_locale in mcm.items()
    ]
    return [
        Table(
            "MCM per attribute and locale",
            ["attribute", *parts.locales],
            wide,
            note="MCM: mean over template instances of the standard deviation of P(positive) across the "
            "attribute's groups (Levy et al. 2023). Higher: more disparity.",
            digits=4,
        ),
        Table(
            "MCM details",
            ["locale", "attribute", "n", "MCM", "95% CI", "MCM (f)", "MCM (m)", "MBCM"],
            details,
            note="MCM (f) / (m): female- / male-subject templates only. MBCM: mean |difference| to the "
            "locale's reference group (religion).",
            digits=4,
        ),
    ]


def _tests(parts: _Parts) -> list[Block]:
    """Significance: Friedman (groups), Wilcoxon (f vs m), and McNemar (locales)."""
    return [*_group_tests(parts), *_mcnemar(parts)]


def _group_tests(parts: _Parts) -> list[Block]:
    """Friedman (do the groups of an attribute differ?) and Wilcoxon (female vs male subjects)."""
    friedman_rows: list[list[Cell]] = []
    wilcoxon_rows: list[list[Cell]] = []
    for loc in parts.locales:
        for attribute, entry in parts.metrics.per_locale[loc].attributes.items():
            parts.problem(f"{loc} {attribute} Friedman", entry.friedman)
            if isinstance(entry.friedman, Friedman):
                groups = entry.friedman
                friedman_rows.append(
                    [
                        Locale(loc),
                        attribute,
                        groups.groups,
                        groups.blocks,
                        groups.dropped_blocks,
                        number(groups.statistic),
                        PValue(number(groups.p_value)),
                    ]
                )
            parts.problem(f"{loc} {attribute} Wilcoxon f/m", entry.wilcoxon_gender)
            if isinstance(entry.wilcoxon_gender, Wilcoxon):
                pair = entry.wilcoxon_gender
                wilcoxon_rows.append(
                    [
                        Locale(loc),
                        attribute,
                        pair.n_pairs,
                        number(pair.mean_difference),
                        number(pair.statistic),
                        PValue(number(pair.p_value)),
                    ]
                )
    return [
        Table(
            "Friedman test: do the groups of an attribute differ?",
            ["locale", "attribute", "groups", "blocks", "dropped", "Q", "p"],
            friedman_rows,
            note="Template instances are blocks, groups treatments; only complete blocks count. "
            "* p < 0.05, ** p < 0.01, *** p < 0.001.",
        ),
        Table(
            "Wilcoxon signed-rank test: female vs male subjects",
            ["locale", "attribute", "pairs", "mean f − m", "W", "p"],
            wilcoxon_rows,
            digits=4,
        ),
    ]


def _mcnemar(parts: _Parts) -> list[Block]:
    mcnemar_rows: list[list[Cell]] = []
    for pair_name, test in parts.metrics.mcnemar.items():
        parts.problem(f"McNemar {pair_name}", test)
        if isinstance(test, McNemar):
            first, _, second = pair_name.partition("-")
            mcnemar_rows.append(
                [
                    f"{first} vs {second}",
                    test.n,
                    test.b,
                    test.c,
                    number(test.statistic),
                    test.method,
                    PValue(number(test.p_value)),
                ]
            )
    if not mcnemar_rows:
        return []
    return [
        Table(
            "McNemar test between locales (correct predictions on parallel samples)",
            ["locales", "n", "b (first only)", "c (second only)", "statistic", "method", "p"],
            mcnemar_rows,
        )
    ]


def _accuracy(parts: _Parts) -> list[Block]:
    """Accuracy, and Levy et al.'s 2-way accuracy on positive / negative samples when the run has it."""
    locales = parts.locales
    accuracy: dict[str, float | None] = {}
    two_way: dict[str, float | None] = {}
    rows: list[list[Cell]] = []
    has_two_way = any(parts.metrics.per_locale[loc].accuracy_2way is not None for loc in locales)
    for loc in locales:
        entry = parts.metrics.per_locale[loc].accuracy
        second = parts.metrics.per_locale[loc].accuracy_2way
        parts.problem(f"{loc} accuracy", entry)
        parts.problem(f"{loc} 2-way accuracy", second)
        counted = entry if isinstance(entry, Accuracy) else None  # a failed one: a row of dashes
        accuracy[loc] = number(counted.accuracy) if counted else None
        two_way[loc] = number(second.accuracy) if isinstance(second, Accuracy) else None
        rows.append(
            [
                Locale(loc),
                accuracy[loc],
                *([two_way[loc]] if has_two_way else []),
                *(
                    (counted.correct, counted.n, counted.unanswered, counted.excluded)
                    if counted
                    else (None,) * 4
                ),
            ]
        )
    if not accuracy:
        return []
    series = [Series("accuracy", accuracy, locale_colors(locales))]
    if has_two_way:
        series.append(Series("2-way accuracy", two_way, locale_colors(locales), hatch="///"))
    return [
        parts.ctx.plot(
            bars(
                [BarFacet("", locale_ticks(locales), series)],
                xlabel="accuracy",
                xlim=(0.0, 1.0),
                legend=[LegendItem("accuracy", "#FFFFFF"), LegendItem("2-way accuracy", "#FFFFFF", "///")]
                if has_two_way
                else [],
            ),
            f"{parts.key}-accuracy",
            "Sentiment accuracy per locale (gold labels the model can predict)"
            + (
                "; hatched: 2-way accuracy (positive / negative samples, the likelier of the two labels; Levy et al. 2023)."
                if has_two_way
                else "."
            ),
        ),
        Table(
            "Accuracy",
            [
                "locale",
                "accuracy",
                *(["2-way accuracy"] if has_two_way else []),
                "correct",
                "n",
                "unanswered",
                "excluded",
            ],
            rows,
            note="correct / n / unanswered / excluded: of the accuracy over the labels the model can predict.",
        ),
    ]


def _mcm_by_variant(frame: pl.DataFrame) -> dict[tuple[str, str, str], float | None]:
    """MCM of the female-subject and of the male-subject templates, per locale and attribute."""
    out: dict[tuple[str, str, str], float | None] = {}
    if not frame.height:
        return out
    for (loc, attribute, variant), part in frame.group_by(["locale", "attribute", "variant"]):
        if variant not in ("f", "m") or attribute == "gender":
            continue
        try:
            out[(str(loc), str(attribute), str(variant))] = sentiment_metrics.mcm(part)
        except MetricInputError:
            out[(str(loc), str(attribute), str(variant))] = None
    return out

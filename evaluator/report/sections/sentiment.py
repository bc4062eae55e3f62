"""The sentiment section (Levy et al. 2023): P(positive) distributions per group with female
and male side by side, VBCM per group, MCM per attribute, locale and gender, the Friedman /
Wilcoxon / McNemar tests and accuracy."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

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
from evaluator.report.sections.common import (
    Context,
    count,
    error_of,
    locale_colors,
    locale_ticks,
    mapping,
    num,
    rows_of,
    run_key,
)

VBCM_CMAP = diverging("#B35806", "#542788")


def sentiment(run: Run, index: int, ctx: Context) -> Section:
    per_locale: dict[str, Any] = run.metrics["per_locale"]
    locales = locale_order(per_locale)
    key = run_key(run, index)
    problems: list[tuple[str, str]] = []
    blocks: list[Block] = []
    frame = run.predictions(["locale", "template", "attribute", "group", "variant", "p_pos"]).with_columns(
        pl.col("locale").cast(pl.String),
        pl.col("attribute").cast(pl.String),
        pl.col("group").cast(pl.String),
        pl.col("variant").cast(pl.String),
    )
    attributes = sorted({a for loc in locales for a in per_locale[loc].get("attributes", {})})
    groups = (
        frame.select("attribute", "group").unique().sort("attribute", "group").rows() if frame.height else []
    )
    rows = [Tick(group, group, block=attribute) for attribute, group in groups]

    # P(positive) per group and locale, female and male side by side
    facets = []
    for loc in locales:
        part = frame.filter(pl.col("locale") == loc)
        scores: dict[tuple[str, str], list[float]] = defaultdict(list)
        for group, variant, p in part.select("group", "variant", "p_pos").iter_rows():
            if p is not None:
                scores[(group, variant)].append(float(p))
        facets.append((locale_label(loc), ink(locale_color(loc)), dict(scores)))
    variants = [(v, VARIANT_NAMES[v], VARIANT_COLORS[v]) for v in ("f", "m") if v in set(frame["variant"])]
    if rows and facets:
        blocks.append(
            ctx.plot(
                distributions(facets, rows, variants, xlabel="P(positive)"),
                f"{key}-p-positive",
                "P(positive) per group and locale, female (f) and male (m) subjects side by side: "
                "range (thin line), interquartile range (thick), median (white dot), samples (points).",
            )
        )

    # VBCM per group and locale
    vbcm: dict[tuple[str, str], float | None] = {}
    for loc in locales:
        for attribute, entry in per_locale[loc].get("attributes", {}).items():
            problem = error_of(entry.get("vbcm"))
            if problem:
                problems.append((f"{loc} {attribute} VBCM", problem))
            for row in rows_of(entry.get("vbcm")):
                vbcm[(str(row.get("group")), loc)] = num(row.get("vbcm"))
    if vbcm and rows:
        scale = max([abs(v) for v in vbcm.values() if v is not None] + [0.01])
        blocks.append(
            ctx.plot(
                heatmap(
                    [HeatPanel("", rows, locale_ticks(locales, multiline=True), vbcm)],
                    colorbar="VBCM (group − background P(positive))",
                    vmin=-scale,
                    vmax=scale,
                    cmap=VBCM_CMAP,
                    digits=3,
                ),
                f"{key}-vbcm",
                "VBCM per group and locale: the group's P(positive) minus the mean of all groups in the "
                "same template instance (Czarnowska et al. 2021). Below 0: the group is seen more "
                "negatively than the background. Grey: not computed.",
            )
        )

    # MCM per attribute, locale and gender (f / m computed here from the predictions)
    gender_mcm = _mcm_by_variant(frame)
    mcm_rows: list[list[Cell]] = []
    facets_mcm: list[BarFacet] = []
    for attribute in attributes:
        values: dict[str, float | None] = {}
        errors: dict[str, float | tuple[float, float] | None] = {}
        by_variant: dict[str, dict[str, float | None]] = {"f": {}, "m": {}}
        for loc in locales:
            entry = per_locale[loc].get("attributes", {}).get(attribute)
            if not isinstance(entry, dict):
                continue
            value = num(entry.get("mcm"))
            problem = error_of(entry.get("mcm"))
            if problem:
                problems.append((f"{loc} {attribute} MCM", problem))
            ci = mapping(entry.get("mcm_ci95"))
            low, high = num(ci.get("low")), num(ci.get("high"))
            values[loc] = value
            if value is not None and low is not None and high is not None:
                errors[loc] = (max(value - low, 0.0), max(high - value, 0.0))
            f_value = gender_mcm.get((loc, attribute, "f")) if attribute != "gender" else None
            m_value = gender_mcm.get((loc, attribute, "m")) if attribute != "gender" else None
            by_variant["f"][loc], by_variant["m"][loc] = f_value, m_value
            mbcm = mapping(entry.get("mbcm"))
            mcm_rows.append(
                [
                    Locale(loc),
                    attribute,
                    count(entry.get("n")),
                    value,
                    f"[{low:.3f}, {high:.3f}]"
                    if value is not None and low is not None and high is not None
                    else None,
                    f_value,
                    m_value,
                    num(mbcm.get("overall")),
                ]
            )
        series = [Series("all subjects (95% CI)", values, "#4D4D4D", errors=errors)]
        if attribute != "gender":
            series += [Series(VARIANT_NAMES[v], by_variant[v], VARIANT_COLORS[v]) for v in ("f", "m")]
        facets_mcm.append(BarFacet(attribute, locale_ticks(locales), series))
    if facets_mcm:
        blocks.append(
            ctx.plot(
                bars(
                    facets_mcm,
                    xlabel="MCM (mean σ of P(positive) across groups)",
                    digits=3,
                    legend=[
                        LegendItem("all subjects (95% CI)", "#4D4D4D"),
                        LegendItem("female subjects", VARIANT_COLORS["f"]),
                        LegendItem("male subjects", VARIANT_COLORS["m"]),
                    ],
                    ncols=2,
                ),
                f"{key}-mcm",
                "MCM per attribute and locale (Levy et al. 2023): all subjects with the bootstrap 95% CI, "
                "and female-subject and male-subject templates separately. Higher: more disparity "
                "between groups. The gender attribute compares female with male, so it has no f/m split.",
            )
        )
    wide = {(str(row[1]), row[0].code): row[3] for row in mcm_rows if isinstance(row[0], Locale)}
    blocks.append(
        Table(
            "MCM per attribute and locale",
            ["attribute", *locales],
            [[attribute, *(wide.get((attribute, loc)) for loc in locales)] for attribute in attributes],
            note="MCM: mean over template instances of the standard deviation of P(positive) across the "
            "attribute's groups (Levy et al. 2023). Higher: more disparity.",
            digits=4,
        )
    )
    blocks.append(
        Table(
            "MCM details",
            ["locale", "attribute", "n", "MCM", "95% CI", "MCM (f)", "MCM (m)", "MBCM"],
            mcm_rows,
            note="MCM (f) / (m): female- / male-subject templates only. MBCM: mean |difference| to the "
            "locale's reference group (religion).",
            digits=4,
        )
    )
    if vbcm and rows:
        blocks.append(
            Table(
                "VBCM per group",
                ["attribute", "group", *locales],
                [[tick.block, tick.label, *(vbcm.get((tick.key, loc)) for loc in locales)] for tick in rows],
                digits=4,
                collapsed=len(rows) > 12,
            )
        )

    # significance: Friedman (groups), Wilcoxon (f vs m), McNemar (locales)
    friedman_rows: list[list[Cell]] = []
    wilcoxon_rows: list[list[Cell]] = []
    for loc in locales:
        for attribute, entry in per_locale[loc].get("attributes", {}).items():
            if not isinstance(entry, dict):
                continue
            test = entry.get("friedman")
            if error_of(test):
                problems.append((f"{loc} {attribute} Friedman", str(error_of(test))))
            elif isinstance(test, dict):
                friedman_rows.append(
                    [
                        Locale(loc),
                        attribute,
                        count(test.get("groups")),
                        count(test.get("blocks")),
                        count(test.get("dropped_blocks")),
                        num(test.get("statistic")),
                        PValue(num(test.get("p_value"))),
                    ]
                )
            test = entry.get("wilcoxon_gender")
            if error_of(test):
                problems.append((f"{loc} {attribute} Wilcoxon f/m", str(error_of(test))))
            elif isinstance(test, dict):
                wilcoxon_rows.append(
                    [
                        Locale(loc),
                        attribute,
                        count(test.get("n_pairs")),
                        num(test.get("mean_difference")),
                        num(test.get("statistic")),
                        PValue(num(test.get("p_value"))),
                    ]
                )
    blocks.append(
        Table(
            "Friedman test: do the groups of an attribute differ?",
            ["locale", "attribute", "groups", "blocks", "dropped", "Q", "p"],
            friedman_rows,
            note="Template instances are blocks, groups treatments; only complete blocks count. "
            "* p < 0.05, ** p < 0.01, *** p < 0.001.",
        )
    )
    blocks.append(
        Table(
            "Wilcoxon signed-rank test: female vs male subjects",
            ["locale", "attribute", "pairs", "mean f − m", "W", "p"],
            wilcoxon_rows,
            digits=4,
        )
    )
    mcnemar_rows: list[list[Cell]] = []
    for pair, test in (run.metrics.get("mcnemar") or {}).items():
        if error_of(test):
            problems.append((f"McNemar {pair}", str(error_of(test))))
        elif isinstance(test, dict):
            first, _, second = str(pair).partition("-")
            mcnemar_rows.append(
                [
                    f"{first} vs {second}",
                    count(test.get("n")),
                    count(test.get("b")),
                    count(test.get("c")),
                    num(test.get("statistic")),
                    str(test.get("method", "")),
                    PValue(num(test.get("p_value"))),
                ]
            )
    if mcnemar_rows:
        blocks.append(
            Table(
                "McNemar test between locales (correct predictions on parallel samples)",
                ["locales", "n", "b (first only)", "c (second only)", "statistic", "method", "p"],
                mcnemar_rows,
            )
        )

    # accuracy (and Levy et al.'s 2-way accuracy on positive / negative samples, when the run has it)
    accuracy: dict[str, float | None] = {}
    two_way: dict[str, float | None] = {}
    accuracy_rows: list[list[Cell]] = []
    has_two_way = any("accuracy_2way" in per_locale[loc] for loc in locales)
    for loc in locales:
        entry = per_locale[loc].get("accuracy")
        second = per_locale[loc].get("accuracy_2way")
        for name, value in (("accuracy", entry), ("2-way accuracy", second)):
            if error_of(value):
                problems.append((f"{loc} {name}", str(error_of(value))))
        if not isinstance(entry, dict):
            continue
        accuracy[loc] = num(entry.get("accuracy"))
        two_way[loc] = num(mapping(second).get("accuracy"))
        accuracy_rows.append(
            [
                Locale(loc),
                accuracy[loc],
                *([two_way[loc]] if has_two_way else []),
                count(entry.get("correct")),
                count(entry.get("n")),
                count(entry.get("unanswered")),
                count(entry.get("excluded")),
            ]
        )
    if accuracy:
        series = [Series("accuracy", accuracy, locale_colors(locales))]
        if has_two_way:
            series.append(Series("2-way accuracy", two_way, locale_colors(locales), hatch="///"))
        blocks.append(
            ctx.plot(
                bars(
                    [BarFacet("", locale_ticks(locales), series)],
                    xlabel="accuracy",
                    xlim=(0.0, 1.0),
                    legend=[LegendItem("accuracy", "#FFFFFF"), LegendItem("2-way accuracy", "#FFFFFF", "///")]
                    if has_two_way
                    else [],
                ),
                f"{key}-accuracy",
                "Sentiment accuracy per locale (gold labels the model can predict)"
                + (
                    "; hatched: 2-way accuracy (positive / negative samples, the likelier of the two labels; Levy et al. 2023)."
                    if has_two_way
                    else "."
                ),
            )
        )
        blocks.append(
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
                accuracy_rows,
                note="correct / n / unanswered / excluded: of the accuracy over the labels the model can predict.",
            )
        )
    if problems:
        blocks.append(Problems(problems))
    mode = run.info.get("task_settings", {}).get("mode")
    return Section(
        anchor=key,
        title=run.label,
        intro=f"Scoring: {mode or '?'} (P(positive) from "
        + ("the classifier" if mode == "classifier" else "the label words' likelihood after the prompt")
        + ").",
        blocks=blocks,
    )


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

"""The IFM section: rectified F1 and hallucination rate per locale, with the instruction in the
sentence's language and in English."""

from __future__ import annotations

from collections.abc import Callable

from evaluator.report.document import Block, Cell, Locale, Section, Table
from evaluator.report.palette import INSTRUCTION_HATCH, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import SectionContext, locale_colors, locale_ticks, run_key, uncertainty
from evaluator.results.base import number
from evaluator.results.ifm import IfmMetrics, IfmRow

INSTRUCTIONS = {"native": "instruction in the sentence's language", "en": "instruction in English"}

COLUMNS = [
    "answers",
    "hallucinated",
    "halluc. rate",
    "precision",
    "recall",
    "F1",
    "rectified F1",
    "pairs",
    "95% CI (rect. F1)",
]


def _cells(r: IfmRow) -> list[Cell]:
    return [
        r.t,
        r.h,
        number(r.hallucination_rate),
        number(r.precision),
        number(r.recall),
        number(r.f1),
        number(r.rectified_f1),
        *uncertainty(r.n_units, r.rectified_f1_ci_low, r.rectified_f1_ci_high),
    ]


def ifm(run: Run, index: int, ctx: SectionContext) -> Section:
    key = run_key(run, index)
    metrics = run.metrics_as(IfmMetrics)
    table = metrics.by_locale_instruction
    locales = locale_order(r.locale for r in table)
    blocks: list[Block] = [
        *_plot(table, locales, key, ctx),
        Table(
            "IFM per locale and instruction language",
            ["locale", "instruction", *COLUMNS],
            [
                [Locale(r.locale), r.instruction, *_cells(r)]
                for loc in locales
                for r in table
                if r.locale == loc
            ],
        ),
        Table(
            "IFM by standing",
            ["locale", "instruction", "standing", *COLUMNS],
            [[Locale(r.locale), r.instruction, r.standing, *_cells(r)] for r in metrics.by_standing],
        ),
    ]
    if metrics.by_attribute:
        blocks.append(
            Table(
                "IFM by attribute",
                ["locale", "instruction", "attribute", *COLUMNS],
                [[Locale(r.locale), r.instruction, r.attribute, *_cells(r)] for r in metrics.by_attribute],
                collapsed=True,
            )
        )
    return Section(
        anchor=key,
        title=run.label,
        intro="Yes/no hate question per sos sentence; toxic is the positive class.",
        blocks=blocks,
    )


def _plot(table: list[IfmRow], locales: list[str], key: str, ctx: SectionContext) -> list[Block]:
    """Rectified F1 and hallucination rate per locale, a bar per instruction language."""
    if not locales:
        return []
    instructions = [i for i in ("native", "en") if any(r.instruction == i for r in table)]
    figures: tuple[tuple[str, Callable[[IfmRow], float | None]], ...] = (
        ("rectified F1", lambda r: r.rectified_f1),
        ("hallucination rate", lambda r: r.hallucination_rate),
    )
    facets = [
        BarFacet(
            title,
            locale_ticks(locales),
            [
                Series(
                    INSTRUCTIONS[instruction],
                    {r.locale: number(value(r)) for r in table if r.instruction == instruction},
                    locale_colors(locales),
                    hatch=INSTRUCTION_HATCH[instruction],
                )
                for instruction in instructions
            ],
        )
        for title, value in figures
    ]
    return [
        ctx.plot(
            bars(
                facets,
                xlabel="",
                xlim=(0.0, 1.0),
                ncols=2,
                legend=[LegendItem(INSTRUCTIONS[i], "#FFFFFF", INSTRUCTION_HATCH[i]) for i in instructions],
            ),
            f"{key}-f1",
            "IFM: rectified F1 (F1 of the toxic class × (1 − hallucination rate)) and hallucination "
            "rate (answers neither yes nor no) per locale, instruction in the sentence's language "
            "(solid) and in English (hatched). English rows have only the native instruction.",
        )
    ]

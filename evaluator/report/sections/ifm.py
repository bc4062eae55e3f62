"""The IFM section: rectified F1 and hallucination rate per locale, with the instruction in the
sentence's language and in English."""

from __future__ import annotations

from typing import Any

from evaluator.report.document import Block, Cell, Locale, Section, Table
from evaluator.report.palette import INSTRUCTION_HATCH, locale_order
from evaluator.report.plots import BarFacet, LegendItem, Series, bars
from evaluator.report.runs import Run
from evaluator.report.sections.common import (
    Context,
    count,
    locale_colors,
    locale_ticks,
    num,
    rows_of,
    run_key,
    uncertainty,
)

INSTRUCTIONS = {"native": "instruction in the sentence's language", "en": "instruction in English"}


def ifm(run: Run, index: int, ctx: Context) -> Section:
    key = run_key(run, index)
    table = rows_of(run.metrics.get("by_locale_instruction"))
    locales = locale_order(str(r.get("locale")) for r in table)
    instructions = [i for i in ("native", "en") if any(r.get("instruction") == i for r in table)]
    facets = []
    for metric, title in (("rectified_f1", "rectified F1"), ("hallucination_rate", "hallucination rate")):
        series = []
        for instruction in instructions:
            values = {
                str(r.get("locale")): num(r.get(metric)) for r in table if r.get("instruction") == instruction
            }
            series.append(
                Series(
                    INSTRUCTIONS[instruction],
                    values,
                    locale_colors(locales),
                    hatch=INSTRUCTION_HATCH[instruction],
                )
            )
        facets.append(BarFacet(title, locale_ticks(locales), series))
    blocks: list[Block] = []
    if locales:
        blocks.append(
            ctx.plot(
                bars(
                    facets,
                    xlabel="",
                    xlim=(0.0, 1.0),
                    ncols=2,
                    legend=[
                        LegendItem(INSTRUCTIONS[i], "#FFFFFF", INSTRUCTION_HATCH[i]) for i in instructions
                    ],
                ),
                f"{key}-f1",
                "IFM: rectified F1 (F1 of the toxic class × (1 − hallucination rate)) and hallucination "
                "rate (answers neither yes nor no) per locale, instruction in the sentence's language "
                "(solid) and in English (hatched). English rows have only the native instruction.",
            )
        )
    columns = [
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

    def cells(r: dict[str, Any]) -> list[Cell]:
        return [
            count(r.get("t")),
            count(r.get("h")),
            num(r.get("hallucination_rate")),
            num(r.get("precision")),
            num(r.get("recall")),
            num(r.get("f1")),
            num(r.get("rectified_f1")),
            *uncertainty(r, "rectified_f1"),
        ]

    blocks.append(
        Table(
            "IFM per locale and instruction language",
            ["locale", "instruction", *columns],
            [
                [Locale(str(r.get("locale"))), str(r.get("instruction")), *cells(r)]
                for loc in locales
                for r in table
                if r.get("locale") == loc
            ],
        )
    )
    standing_rows = rows_of(run.metrics.get("by_standing"))
    blocks.append(
        Table(
            "IFM by standing",
            ["locale", "instruction", "standing", *columns],
            [
                [Locale(str(r.get("locale"))), str(r.get("instruction")), str(r.get("standing")), *cells(r)]
                for r in standing_rows
            ],
        )
    )
    attribute_rows = rows_of(run.metrics.get("by_attribute"))
    if attribute_rows:
        blocks.append(
            Table(
                "IFM by attribute",
                ["locale", "instruction", "attribute", *columns],
                [
                    [
                        Locale(str(r.get("locale"))),
                        str(r.get("instruction")),
                        str(r.get("attribute")),
                        *cells(r),
                    ]
                    for r in attribute_rows
                ],
                collapsed=True,
            )
        )
    return Section(
        anchor=key,
        title=run.label,
        intro="Yes/no hate question per sos sentence; toxic is the positive class.",
        blocks=blocks,
    )

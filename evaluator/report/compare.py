"""Several runs of one task side by side (model A vs B; one model on two releases; monolingual
vs multilingual fine-tuning, Levy et al.'s phase 3): each run's headline values next to each
other, and the change from the first run to each later one, with its direction (▲ / ▼) and
whether it is towards less bias (green) or more (red)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from evaluator.report.document import (
    Block,
    Cell,
    Locale,
    Note,
    Section,
    Table,
    fmt_delta,
    make_delta,
)
from evaluator.report.palette import locale_label, locale_order, run_color
from evaluator.report.plots import DELTA_CMAP, BarFacet, HeatPanel, LegendItem, Series, Tick, bars, heatmap
from evaluator.report.runs import Run
from evaluator.report.sections.common import SectionContext, locale_ticks
from evaluator.results.base import Better
from evaluator.results.sentiment import MCM_TABLE
from evaluator.tasks import TASKS


@dataclass
class _Table:
    keys: tuple[str, ...]
    better: dict[tuple[str, ...], Better]
    values: dict[tuple[str, ...], dict[int, float | None]]
    plot: bool


def _collect(runs: list[Run]) -> dict[str, _Table]:
    tables: dict[str, _Table] = {}
    for index, run in enumerate(runs):
        for m in run.metrics.measures():
            table = tables.setdefault(m.table, _Table(m.keys, {}, defaultdict(dict), m.plot))
            table.better[m.key] = m.better
            table.values[m.key][index] = m.value
    return tables


def _sorted_keys(keys: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    order = {loc: i for i, loc in enumerate(locale_order(k[0] for k in keys))}
    return sorted(keys, key=lambda k: (order[k[0]], k[1:]))


def compare_section(task: str, runs: list[Run], ctx: SectionContext) -> Section:
    """The comparison of the runs of one task, in the order given (the first is the baseline)."""
    anchor = f"{task}-compare"
    blocks: list[Block] = []
    releases = {r.release for r in runs}
    models = {r.model for r in runs}
    suites = {r.suite for r in runs}
    what = (
        "the same model on different sets (polyprobe's own and "
        + ", ".join(sorted(s for s in suites if s))
        + ")"
        if len(models) == 1 and len(suites) > 1
        else "the same model on different releases"
        if len(models) == 1 and len(releases) > 1
        else "different models on one release"
        if len(releases) == 1
        else "different models and releases"
    )
    locale_sets = {tuple(r.locales) for r in runs}
    if len(locale_sets) > 1:
        blocks.append(
            Note("The runs cover different locales: a dash marks a value a run does not have.", "warning")
        )
    if len({r.info.options.limit for r in runs}) > 1:
        blocks.append(
            Note("The runs used different --limit values: they scored different samples.", "warning")
        )
    tables = _collect(runs)
    labels = [r.label for r in runs]
    if len(runs) > 1 and MCM_TABLE in tables:
        blocks.append(_mcm_delta_plot(runs, tables[MCM_TABLE], ctx, anchor))
    for title, table in tables.items():
        keys = _sorted_keys(list(table.values))
        rows: list[list[Cell]] = []
        for key in keys:
            values = table.values[key]
            first = values.get(0)
            cells: list[Cell] = [Locale(key[0]), *key[1:]]
            cells += [values.get(i) for i in range(len(runs))]
            cells += [make_delta(first, values.get(i), table.better[key]) for i in range(1, len(runs))]
            rows.append(cells)
        directions = sorted(set(table.better.values()))
        blocks.append(
            Table(
                title,
                [*table.keys, *labels, *(f"Δ {label}" for label in labels[1:])],
                rows,
                note=_direction_note(directions, labels[0]),
                digits=TASKS[task].digits,
                collapsed=len(rows) > 40,
            )
        )
        if table.plot:
            blocks.append(_comparison_plot(title, table, keys, runs, ctx, anchor))
    intro = (
        f"{len(runs)} runs of {task}: {what}. The first run ({runs[0].label}) is the baseline; "
        "Δ is later run − baseline."
    )
    return Section(anchor=anchor, title="Comparison", intro=intro, blocks=blocks)


def _direction_note(directions: list[Better], baseline: str) -> str:
    meaning = {
        "lower": "lower is less bias / better",
        "higher": "higher is better",
        "zero": "closer to 0 is less bias",
    }
    return (
        f"Δ against {baseline}: ▲ increase, ▼ decrease; green: towards less bias or better performance, "
        f"red: the other way ({'; '.join(meaning[d] for d in directions)})."
    )


def _comparison_plot(
    title: str, table: _Table, keys: list[tuple[str, ...]], runs: list[Run], ctx: SectionContext, anchor: str
) -> Block:
    """Facets by the non-locale key (attribute, measure, …), locales down the y axis, a bar per run."""
    facets: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for key in keys:
        if key[0] not in facets[key[1:]]:
            facets[key[1:]].append(key[0])
    bar_facets = []
    for rest, locales in facets.items():
        series = [
            Series(
                run.label,
                {loc: table.values.get((loc, *rest), {}).get(index) for loc in locales},
                run_color(index),
            )
            for index, run in enumerate(runs)
        ]
        bar_facets.append(BarFacet(" · ".join(rest), locale_ticks(locale_order(locales)), series))
    slug = title.lower().replace(" ", "-")
    return ctx.plot(
        bars(
            bar_facets,
            xlabel=title,
            legend=[LegendItem(run.label, run_color(i)) for i, run in enumerate(runs)],
            ncols=3 if len(bar_facets) > 4 else 2,
            digits=3,
        ),
        f"{anchor}-{slug}",
        f"{title}: the runs side by side (colours: runs, in the order given).",
    )


def _mcm_delta_plot(runs: list[Run], table: _Table, ctx: SectionContext, anchor: str) -> Block:
    """Levy et al.'s phase 3: how MCM changes per locale and attribute from the first run."""
    keys = _sorted_keys(list(table.values))
    locales = locale_order(k[0] for k in keys)
    attributes = sorted({k[1] for k in keys})
    panels = []
    spread = 0.001
    for index in range(1, len(runs)):
        values: dict[tuple[str, str], float | None] = {}
        texts: dict[tuple[str, str], str] = {}
        for key in keys:
            delta = make_delta(table.values[key].get(0), table.values[key].get(index), "lower")
            values[(key[1], key[0])] = delta.value
            if delta.value is not None:
                texts[(key[1], key[0])] = fmt_delta(delta, 4)
                spread = max(spread, abs(delta.value))
        panels.append(
            HeatPanel(
                f"{runs[index].label} − {runs[0].label}",
                [Tick(a, a) for a in attributes],
                locale_ticks(locales, multiline=True),
                values,
                texts,
            )
        )
    return ctx.plot(
        heatmap(
            panels,
            colorbar="Δ MCM (red: more disparity, green: less)",
            vmin=-spread,
            vmax=spread,
            cmap=DELTA_CMAP,
            title="Change in MCM from " + runs[0].label,
        ),
        f"{anchor}-mcm-delta",
        "Change in MCM per locale and attribute from the first run to each later one (Levy et al. 2023, "
        "phase 3: e.g. monolingual vs multilingual fine-tuning). ▲ MCM rose (more disparity between "
        "groups, red), ▼ it fell (green). Locales: " + ", ".join(locale_label(loc) for loc in locales) + ".",
    )

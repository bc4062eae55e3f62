"""The report's figure kinds, written for real data shapes: 9 locales, 30+ groups, 17 HurtLex
categories. Categories always run down the y axis (horizontal bars, heatmap rows) so long and
right-to-left labels never overlap; figures grow with the number of rows; locales are facets
or columns in their palette colour.

Every builder returns a :data:`evaluator.report.figures.Draw`: a function of the text function
(logical text for SVG, visual for PNG) that every label passes through."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.colors import LinearSegmentedColormap, to_rgb
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from evaluator.report.palette import BETTER, MISSING, WORSE, ink
from evaluator.report.text import TextFn, wrap

Draw = Callable[[TextFn], Figure]
Value = float | None


@dataclass(frozen=True)
class Tick:
    """A row or column of a heatmap, or a category of a bar chart."""

    key: str
    label: str
    color: str = "#222222"
    block: str = ""
    """Consecutive rows of one block are drawn together, under the block's name."""


@dataclass
class Series:
    """One bar per tick: a locale, a standing, a run …"""

    name: str
    values: dict[str, Value]
    color: str | dict[str, str]
    hatch: str = ""
    errors: dict[str, float | tuple[float, float] | None] = field(default_factory=dict)
    """Symmetric error, or (below, above) distances from the value (a confidence interval)."""
    notes: dict[str, str] = field(default_factory=dict)
    """Text written after the bar (e.g. unparsable counts)."""

    def color_of(self, key: str) -> str:
        return self.color if isinstance(self.color, str) else self.color.get(key, "#777777")


@dataclass
class BarFacet:
    title: str
    ticks: list[Tick]
    series: list[Series]
    title_color: str = "#222222"


@dataclass
class LegendItem:
    label: str
    color: str
    hatch: str = ""
    kind: str = "patch"


@dataclass
class HeatPanel:
    title: str
    rows: list[Tick]
    columns: list[Tick]
    values: dict[tuple[str, str], Value]
    texts: dict[tuple[str, str], str] = field(default_factory=dict)


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, min(height, 120.0)), layout="constrained")


def _legend(figure: Figure, items: Sequence[LegendItem], text: TextFn) -> None:
    if not items:
        return
    handles: list[Patch | Line2D] = []
    for item in items:
        if item.kind == "line":
            handles.append(Line2D([], [], color=item.color, lw=2, label=text(item.label)))
        elif item.kind == "text":
            handles.append(Line2D([], [], color=item.color, lw=0, marker="s", label=text(item.label)))
        else:
            handles.append(
                Patch(facecolor=item.color, edgecolor="#333333", hatch=item.hatch, label=text(item.label))
            )
    figure.legend(
        handles=handles, loc="outside upper center", ncols=min(len(handles), 5), frameon=False, fontsize=8
    )


def _blocks(ax: Axes, ticks: Sequence[Tick], text: TextFn, label_blocks: bool) -> None:
    """Separator lines and names of consecutive blocks (attributes, standings) along the y axis;
    the names go just outside the right edge, where no bar or cell can hide them."""
    if not any(t.block for t in ticks):
        return
    start = 0
    for index in range(1, len(ticks) + 1):
        if index == len(ticks) or ticks[index].block != ticks[start].block:
            if start > 0:
                ax.axhline(start - 0.5, color="#999999", lw=0.6, ls="-")
            if label_blocks and ticks[start].block:
                ax.annotate(
                    text(ticks[start].block),
                    xy=(1.0, start - 0.5),
                    xycoords=("axes fraction", "data"),
                    xytext=(4, 0),
                    textcoords="offset points",
                    ha="left",
                    va="top",
                    fontsize=7,
                    style="italic",
                    color="#555555",
                )
            start = index


def _ytick_labels(ax: Axes, ticks: Sequence[Tick], text: TextFn, show: bool, width: int = 30) -> None:
    """Row labels on the first facet only (facets share rows); hidden, not emptied, elsewhere:
    shared axes share their formatter."""
    ax.set_yticks(range(len(ticks)))
    if show:
        ax.set_yticklabels([text(wrap(t.label, width)) for t in ticks], fontsize=8)
        for label, tick in zip(ax.get_yticklabels(), ticks, strict=True):
            label.set_color(tick.color)
    else:
        ax.tick_params(axis="y", labelleft=False)
    ax.set_ylim(len(ticks) - 0.5, -0.5)


def _bar(
    ax: Axes, series: Series, key: str, y: float, height: float, text: TextFn, show_value: bool, digits: int
) -> None:
    """One bar of a series with its error bar, then its value (``show_value``) and note after the
    bar's end; "n/a" and the note at 0 where the value is missing."""
    value = series.values.get(key)
    note = series.notes.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        label = "n/a" + (f" ({note})" if note else "")
        ax.annotate(
            text(label),
            xy=(0, y),
            xytext=(2, 0),
            textcoords="offset points",
            va="center",
            fontsize=6,
            color=ink(series.color_of(key)),
        )
        return
    error = series.errors.get(key)
    xerr = None if error is None else [[error[0]], [error[1]]] if isinstance(error, tuple) else error
    ax.barh(
        y,
        value,
        height=height * 0.92,
        color=series.color_of(key),
        hatch=series.hatch,
        edgecolor="#333333" if series.hatch else "none",
        linewidth=0.4,
        xerr=xerr,
        error_kw={"elinewidth": 0.7, "capsize": 1.5, "ecolor": "#333333"},
    )
    parts = [f"{value:.{digits}f}"] if show_value else []
    if note:
        parts.append(note)
    if parts:
        # after the bar's end (or its error bar), so a 0 still shows as a number
        end = value + (error[1] if isinstance(error, tuple) else error or 0.0) * (1 if value >= 0 else -1)
        ax.annotate(
            text("  ".join(parts)),
            xy=(end, y),
            xytext=(2 if value >= 0 else -2, 0),
            textcoords="offset points",
            ha="left" if value >= 0 else "right",
            va="center",
            fontsize=6,
            color="#333333",
        )


def bars(
    facets: Sequence[BarFacet],
    *,
    xlabel: str,
    legend: Sequence[LegendItem] = (),
    xlim: tuple[float, float] | None = None,
    reference: float | None = None,
    ncols: int = 3,
    title: str = "",
    digits: int = 2,
) -> Draw:
    """Horizontal grouped bars, one facet per entry (locales, attributes); rows share their labels
    when every facet has the same rows. Values are written after the bars unless there are many."""
    facets = [f for f in facets if f.ticks]
    show_values = sum(len(f.ticks) * len(f.series) for f in facets) <= 120
    ncols = max(1, min(ncols, len(facets)))
    nrows = max(1, math.ceil(len(facets) / ncols))
    same_rows = len({tuple(t.key for t in f.ticks) for f in facets}) == 1

    def draw(text: TextFn) -> Figure:
        most = max((len(f.ticks) * max(1, len(f.series)) for f in facets), default=1)
        rows_each = max((len(f.ticks) for f in facets), default=1)
        facet_height = 0.16 * most + 0.1 * rows_each + 0.9
        label_width = 1.8 if ncols > 1 else 2.2
        figure = _figure(min(14.0, label_width + 3.6 * ncols), facet_height * nrows + 0.8)
        axes = figure.subplots(nrows, ncols, squeeze=False, sharex=True)
        for index, ax in enumerate(axes.flat):
            if index >= len(facets):
                ax.set_visible(False)
                continue
            facet = facets[index]
            count = max(1, len(facet.series))
            height = 0.8 / count
            for s_index, series in enumerate(facet.series):
                offset = -0.4 + height * (s_index + 0.5)
                for t_index, tick in enumerate(facet.ticks):
                    _bar(ax, series, tick.key, t_index + offset, height, text, show_values, digits)
            column = index % ncols
            _ytick_labels(ax, facet.ticks, text, show=column == 0 or not same_rows)
            _blocks(ax, facet.ticks, text, column == ncols - 1 or index == len(facets) - 1 or not same_rows)
            if reference is not None:
                ax.axvline(reference, color="#555555", lw=0.8, ls=":")
            if xlim is not None:
                ax.set_xlim(*xlim)
            ax.set_title(text(facet.title), color=facet.title_color, fontsize=9)
            ax.grid(axis="x", color="#DDDDDD", lw=0.5)
            ax.set_axisbelow(True)
            ax.tick_params(axis="x", labelbottom=True)  # every facet: tall figures are read in parts
            if index + ncols >= len(facets):
                ax.set_xlabel(text(xlabel))
        if title:
            figure.suptitle(text(title), fontsize=10, fontweight="bold")
        _legend(figure, legend, text)
        return figure

    return draw


def distributions(
    facets: Sequence[tuple[str, str, dict[tuple[str, str], list[float]]]],
    rows: Sequence[Tick],
    variants: Sequence[tuple[str, str, str]],
    *,
    xlabel: str,
    reference: float | None = 0.5,
    ncols: int = 3,
) -> Draw:
    """Per facet (locale: title, colour, (group, variant) → scores), each group's scores per
    variant side by side: a thin line for the range, a thick one for the interquartile range, a
    white dot for the median and the samples as small points."""
    ncols = max(1, min(ncols, len(facets)))
    nrows = max(1, math.ceil(len(facets) / ncols))
    count = max(1, len(variants))
    step = 0.8 / count

    def draw(text: TextFn) -> Figure:
        facet_height = 0.13 * len(rows) * count + 0.1 * len(rows) + 0.9
        figure = _figure(min(14.0, 1.8 + 3.6 * ncols), facet_height * nrows + 0.8)
        axes = figure.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
        for index, ax in enumerate(axes.flat):
            if index >= len(facets):
                ax.set_visible(False)
                continue
            title, color, scores = facets[index]
            for v_index, (variant, _name, v_color) in enumerate(variants):
                offset = -0.4 + step * (v_index + 0.5)
                ranges: list[list[tuple[float, float]]] = []
                boxes: list[list[tuple[float, float]]] = []
                medians: list[tuple[float, float]] = []
                points: list[tuple[float, float]] = []
                for r_index, row in enumerate(rows):
                    values = scores.get((row.key, variant))
                    if not values:
                        continue
                    y = r_index + offset
                    data = np.asarray(values, dtype=float)
                    low, q1, median, q3, high = np.percentile(data, [0, 25, 50, 75, 100])
                    ranges.append([(low, y), (high, y)])
                    boxes.append([(q1, y), (q3, y)])
                    medians.append((median, y))
                    points.extend((value, y) for value in data)
                if not ranges:
                    continue
                # one collection per kind of mark: a figure of 9 locales × 31 groups stays fast
                ax.add_collection(LineCollection(ranges, colors=v_color, linewidths=0.8))
                ax.add_collection(LineCollection(boxes, colors=v_color, linewidths=3.5))
                xy = np.asarray(points)
                ax.scatter(xy[:, 0], xy[:, 1], s=4, color=v_color, alpha=0.5, lw=0)
                mid = np.asarray(medians)
                ax.scatter(
                    mid[:, 0], mid[:, 1], s=14, color="white", edgecolors=v_color, linewidths=1.0, zorder=3
                )
            column = index % ncols
            _ytick_labels(ax, rows, text, show=column == 0)
            _blocks(ax, rows, text, column == ncols - 1 or index == len(facets) - 1)
            if reference is not None:
                ax.axvline(reference, color="#555555", lw=0.8, ls=":")
            ax.set_xlim(-0.02, 1.02)
            ax.set_title(text(title), color=color, fontsize=9)
            ax.grid(axis="x", color="#DDDDDD", lw=0.5)
            ax.set_axisbelow(True)
            ax.tick_params(axis="x", labelbottom=True)
            if index + ncols >= len(facets):
                ax.set_xlabel(text(xlabel))
        _legend(figure, [LegendItem(name, color) for _v, name, color in variants], text)
        return figure

    return draw


def diverging(low: str, high: str) -> LinearSegmentedColormap:
    return LinearSegmentedColormap.from_list("polyprobe", [low, "#F7F7F7", high])


DELTA_CMAP = diverging(BETTER, WORSE)


def _matrix(panel: HeatPanel) -> np.ndarray:
    """The panel's values as rows × columns, NaN where a cell has none."""
    matrix = np.full((len(panel.rows), len(panel.columns)), np.nan)
    for r, row in enumerate(panel.rows):
        for c, column in enumerate(panel.columns):
            value = panel.values.get((row.key, column.key))
            if value is not None:
                matrix[r, c] = value
    return matrix


def _cell_labels(
    ax: Axes, image: AxesImage, matrix: np.ndarray, panel: HeatPanel, text: TextFn, digits: int
) -> None:
    """Each cell's text (its value, or the panel's own text for it; "–" where empty) in a colour
    that reads on the cell's colour."""
    for r in range(matrix.shape[0]):
        for c in range(matrix.shape[1]):
            key = (panel.rows[r].key, panel.columns[c].key)
            value = matrix[r, c]
            label = panel.texts.get(key)
            if label is None:
                label = "–" if math.isnan(value) else f"{value:.{digits}f}"
            if not label:
                continue
            rgba = image.cmap(image.norm(value)) if not math.isnan(value) else to_rgb(MISSING)
            luminance = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
            ax.text(
                c,
                r,
                text(label),
                ha="center",
                va="center",
                fontsize=6.5,
                color="#9A9A9A" if math.isnan(value) else "white" if luminance < 0.5 else "#111111",
            )


def heatmap(
    panels: Sequence[HeatPanel],
    *,
    colorbar: str,
    vmin: float,
    vmax: float,
    cmap: str | LinearSegmentedColormap = "viridis",
    digits: int = 2,
    legend: Sequence[LegendItem] = (),
    title: str = "",
) -> Draw:
    """Rows × columns of values, one panel per entry, sharing one colour scale; empty cells grey.
    Cell values are written in the cells (up to 900 cells per panel)."""
    panels = [p for p in panels if p.rows and p.columns]

    def draw(text: TextFn) -> Figure:
        rows = max((len(p.rows) for p in panels), default=1)
        columns = sum(max(len(p.columns), 1) for p in panels)
        width = min(16.0, 2.4 + 0.75 * columns + 1.0 * len(panels))
        figure = _figure(max(width, 5.0), 0.26 * rows + 2.0)
        axes = figure.subplots(
            1, max(1, len(panels)), squeeze=False, width_ratios=[len(p.columns) for p in panels] or None
        )
        palette = (colormaps[cmap] if isinstance(cmap, str) else cmap).with_extremes(bad=MISSING)
        image = None
        for index, (ax, panel) in enumerate(zip(axes.flat, panels, strict=False)):
            matrix = _matrix(panel)
            shown = np.ma.masked_invalid(matrix)
            image = ax.imshow(
                shown, aspect="auto", cmap=palette, vmin=vmin, vmax=vmax, interpolation="nearest"
            )
            if matrix.size <= 900:
                _cell_labels(ax, image, matrix, panel, text, digits)
            _ytick_labels(ax, panel.rows, text, show=index == 0, width=32)
            _blocks(ax, panel.rows, text, index == len(panels) - 1)
            ax.xaxis.tick_top()
            ax.set_xticks(range(len(panel.columns)))
            ax.set_xticklabels([text(col.label) for col in panel.columns], fontsize=7.5)
            # column labels sit on top: those are the ticks' second labels
            for tick, column in zip(ax.xaxis.get_major_ticks(), panel.columns, strict=False):
                tick.label2.set_color(column.color)
            ax.tick_params(axis="x", length=0)
            ax.spines[:].set_visible(False)
            if panel.title:
                ax.set_xlabel(text(panel.title), fontsize=9, fontweight="bold")
        if image is not None:
            shrink = 0.9 if rows <= 12 else max(0.15, 8.0 / rows)  # a tall heatmap gets a short bar
            bar = figure.colorbar(image, ax=list(axes.flat), shrink=shrink, pad=0.01, aspect=20)
            bar.set_label(text(colorbar), fontsize=8)
        if title:
            figure.suptitle(text(title), fontsize=10, fontweight="bold")
        _legend(figure, legend, text)
        return figure

    return draw

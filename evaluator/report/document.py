"""The report as data: sections of tables, plots and notes. The HTML page and the Markdown
summary are two renderings of the same document, so they cannot disagree on a number."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from evaluator.results.base import Better


@dataclass(frozen=True)
class Locale:
    """A locale cell: rendered with its colour swatch and native name in HTML, as the code in Markdown."""

    code: str


@dataclass(frozen=True)
class PValue:
    value: float | None


@dataclass(frozen=True)
class Delta:
    """The change of a metric from the first run to a later one, with its direction."""

    value: float | None
    better: Better

    @property
    def verdict(self) -> Literal["better", "worse", "same", "none"]:
        if self.value is None or math.isnan(self.value):
            return "none"
        if self.value == 0:
            return "same"
        if self.better == "lower":
            return "better" if self.value < 0 else "worse"
        if self.better == "higher":
            return "better" if self.value > 0 else "worse"
        return "none"  # towards zero needs both values: ZeroDelta

    @property
    def arrow(self) -> str:
        if self.value is None or math.isnan(self.value) or self.value == 0:
            return "="
        return "▲" if self.value > 0 else "▼"


@dataclass(frozen=True)
class ZeroDelta(Delta):
    """A delta of a metric whose ideal is 0 (IAT D, BBQ s_DIS): better when |new| < |old|."""

    before: float = 0.0
    after: float = 0.0

    @property
    def verdict(self) -> Literal["better", "worse", "same", "none"]:
        if self.value is None or math.isnan(self.value):
            return "none"
        if abs(self.after) == abs(self.before):
            return "same"
        return "better" if abs(self.after) < abs(self.before) else "worse"


Cell = str | int | float | bool | None | Locale | PValue | Delta


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    note: str = ""
    digits: int = 3
    collapsed: bool = False
    """Long detail tables (every group) start folded in the HTML page."""


@dataclass
class Plot:
    """A figure: inline SVG for the page, PNG and SVG files under plots/."""

    name: str
    caption: str
    svg: str
    files: tuple[str, ...]


@dataclass
class Note:
    text: str
    kind: Literal["info", "warning"] = "info"


@dataclass
class Problems:
    """Metrics a run could not compute (too few groups after --limit, ...), with the reason."""

    items: list[tuple[str, str]]


@dataclass
class Signatures:
    items: list[tuple[str, str]]


Block = Table | Plot | Note | Problems | Signatures


@dataclass
class Section:
    anchor: str
    title: str
    intro: str = ""
    blocks: list[Block] = field(default_factory=list)
    children: list[Section] = field(default_factory=list)


@dataclass
class Document:
    title: str
    runs: Table
    sections: list[Section]
    legend: list[tuple[str, str, str]]
    """(what, name, colour) for the palette legend."""


def fmt_number(value: float | int | None, digits: int = 3) -> str:
    """One place for number formatting: the Markdown and HTML tables show the same digits."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "—"
    return f"{value:.{digits}f}"


def fmt_p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "—"
    stars = "***" if value < 0.001 else "**" if value < 0.01 else "*" if value < 0.05 else ""
    shown = "<0.001" if value < 0.001 else f"{value:.3f}"
    return shown + stars


def fmt_delta(delta: Delta, digits: int = 3) -> str:
    if delta.value is None or math.isnan(delta.value):
        return "—"
    sign = "+" if delta.value > 0 else "−" if delta.value < 0 else "±"
    return f"{delta.arrow} {sign}{abs(delta.value):.{digits}f}"


def fmt_cell(cell: Cell, digits: int = 3) -> str:
    """A cell as plain text (Markdown, and the HTML cell's text)."""
    if isinstance(cell, Locale):
        return cell.code
    if isinstance(cell, PValue):
        return fmt_p(cell.value)
    if isinstance(cell, Delta):
        return fmt_delta(cell, digits)
    if cell is None or isinstance(cell, int | float):
        return fmt_number(cell, digits)
    return str(cell)


def make_delta(before: float | None, after: float | None, better: Better) -> Delta:
    if before is None or after is None:
        return Delta(None, better)
    if better == "zero":
        return ZeroDelta(after - before, better, before=before, after=after)
    return Delta(after - before, better)

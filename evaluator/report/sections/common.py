"""What every task section uses: where plots go and how they are named, the locale ticks and
colours, and the cells of a figure's uncertainty. The values come from the run's typed metrics
(evaluator.results); a metric a run could not compute is a Failed entry, shown with its reason."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evaluator.report.document import Cell, Locale, Plot, PValue, Table
from evaluator.report.figures import render_plot
from evaluator.report.palette import STANDING_ORDER, ink, locale_color, locale_label
from evaluator.report.plots import Draw, Tick
from evaluator.report.runs import Run, slug
from evaluator.results.base import Failed, number

R = TypeVar("R")
L = TypeVar("L")


@dataclass
class SectionContext:
    """Where plots go, and how they are named: <task>-r<n>-<label>-<plot>."""

    out: Path

    def plot(self, draw: Draw, name: str, caption: str) -> Plot:
        return render_plot(draw, name, caption, self.out)


def run_key(run: Run, index: int) -> str:
    return f"{run.task}-r{index + 1}-{slug(run.label)}"


def failure(value: Any) -> str | None:
    """Why a metric could not be computed (None: it was)."""
    return value.error if isinstance(value, Failed) else None


def locale_ticks(codes: Iterable[str], multiline: bool = False) -> list[Tick]:
    return [Tick(code, locale_label(code, multiline=multiline), ink(locale_color(code))) for code in codes]


def locale_colors(codes: Iterable[str]) -> dict[str, str]:
    return {code: locale_color(code) for code in codes}


def standings(values: Iterable[str]) -> list[str]:
    present = set(values)
    return [s for s in STANDING_ORDER if s in present] + sorted(present - set(STANDING_ORDER))


def by_locale(
    per_locale: Mapping[str, L], locales: Iterable[str], table: Callable[[L], Sequence[R]]
) -> list[tuple[str, R]]:
    """The rows of one table of every locale's metrics (by_group, by_standing, ...), locale first."""
    return [(loc, row) for loc in locales for row in table(per_locale[loc])]


def breakdown_table(
    title: str,
    columns: list[str],
    rows: Iterable[tuple[str, R]],
    cells: Callable[[R], list[Cell]],
    **options: Any,
) -> Table:
    """One row per (locale, row) of a breakdown (by_group, by_standing, ...), locale first."""
    return Table(title, columns, [[Locale(loc), *cells(r)] for loc, r in rows], **options)


CI_COLUMNS = ["n units", "95% CI"]
TEST_COLUMNS = ["p", "p (Holm)"]


def interval(low: float | None, high: float | None) -> str | None:
    """A figure's bootstrap interval as "[low, high]" (None where the run has none)."""
    low, high = number(low), number(high)
    return None if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def uncertainty(
    n_units: int | None,
    low: float | None,
    high: float | None,
    tests: tuple[float | None, float | None] | None = None,
) -> list[Cell]:
    """The units a figure rests on and its interval (CI_COLUMNS), with the row's test and its
    Holm-adjusted p-value (TEST_COLUMNS) when ``tests`` gives them."""
    cells: list[Cell] = [n_units, interval(low, high)]
    if tests is not None:
        cells += [PValue(number(tests[0])), PValue(number(tests[1]))]
    return cells

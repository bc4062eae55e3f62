"""What every task section uses: where plots go and how they are named, and tolerant readers
of metrics.json values (a metric a run could not compute is an {"error": …} entry, not a number)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.report.document import Cell, Locale, Plot, PValue, Table
from evaluator.report.palette import STANDING_ORDER, ink, locale_color, locale_label
from evaluator.report.plots import Draw, Tick
from evaluator.report.render import render_plot
from evaluator.report.runs import Run, slug


@dataclass
class Context:
    """Where plots go, and how they are named: <task>-r<n>-<label>-<plot>."""

    out: Path

    def plot(self, draw: Draw, name: str, caption: str) -> Plot:
        return render_plot(draw, name, caption, self.out)


def run_key(run: Run, index: int) -> str:
    return f"{run.task}-r{index + 1}-{slug(run.label)}"


def num(value: Any) -> float | None:
    """A metric value as a float; None for null, NaN, a bool, or an {"error": …} entry."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(float(value)) else float(value)


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def error_of(value: Any) -> str | None:
    return str(value["error"]) if isinstance(value, dict) and "error" in value else None


def mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def rows_of(value: Any) -> list[dict[str, Any]]:
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def locale_ticks(codes: Iterable[str], multiline: bool = False) -> list[Tick]:
    return [Tick(code, locale_label(code, multiline=multiline), ink(locale_color(code))) for code in codes]


def locale_colors(codes: Iterable[str]) -> dict[str, str]:
    return {code: locale_color(code) for code in codes}


def standings(values: Iterable[str]) -> list[str]:
    present = set(values)
    return [s for s in STANDING_ORDER if s in present] + sorted(present - set(STANDING_ORDER))


def breakdown_table(
    title: str,
    columns: list[str],
    per_locale: dict[str, Any],
    locales: Iterable[str],
    key: str,
    cells: Callable[[dict[str, Any]], list[Cell]],
    **options: Any,
) -> Table:
    """One row per entry of a locale's ``key`` table (by_group, by_standing, ...), locale first."""
    rows: list[list[Cell]] = [
        [Locale(loc), *cells(r)] for loc in locales for r in rows_of(mapping(per_locale.get(loc)).get(key))
    ]
    return Table(title, columns, rows, **options)


CI_COLUMNS = ["n units", "95% CI"]
TEST_COLUMNS = ["p", "p (Holm)"]


def interval(row: dict[str, Any], figure: str) -> str | None:
    """A figure's bootstrap interval as "[low, high]" (None where the run has none)."""
    low, high = num(row.get(f"{figure}_ci_low")), num(row.get(f"{figure}_ci_high"))
    return None if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def uncertainty(row: dict[str, Any], figure: str, tests: bool = False) -> list[Cell]:
    """The units a figure rests on and its interval (CI_COLUMNS), with the row's test and its
    Holm-adjusted p-value (TEST_COLUMNS) when ``tests``."""
    cells: list[Cell] = [count(row.get("n_units")), interval(row, figure)]
    if tests:
        cells += [PValue(num(row.get("p_value"))), PValue(num(row.get("p_holm")))]
    return cells

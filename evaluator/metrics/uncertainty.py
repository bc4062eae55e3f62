"""Uncertainty beside every headline figure: how many units it rests on, a seeded percentile
bootstrap interval that resamples whole units (templates, sentence pairs, BBQ families,
IAT responses), and per-group significance tests with Holm-adjusted p-values.

A figure is a statistic of counts summed over units (SOS = toxic-preferred pairs / untied
pairs, HONEST = hurtful completions / completions, BBQ's s_DIS from biased and non-unknown
answers, …). The counts are summed per unit, and :func:`evaluator.metrics.stats.unit_bootstrap`
resamples the units of each group of a table with a seed drawn from the run's seed and the
group's key, so a group's interval does not depend on which other groups the table has.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from evaluator.metrics.stats import binomial_test, holm, unit_bootstrap

RESAMPLES = 1000
LEVEL = 0.95

UNCERTAINTY_KEYS = frozenset({"n_units", "ci_replicates", "p_value", "p_holm"})
"""The keys of a metrics row that state one run's uncertainty rather than a figure: the units the
figure rests on, the bootstrap's defined replicates, a test's p-value and its Holm adjustment."""
UNCERTAINTY_SUFFIXES = ("_ci_low", "_ci_high", "_ci95")
"""… and the bounds of a figure's interval (``sos_ci_low``, sentiment's ``mcm_ci95``)."""


def is_uncertainty(key: str) -> bool:
    """Whether a metrics key is one of the uncertainty keys above. Averaging them over runs is
    wrong by construction (a mean of p-values is no p-value, a mean of bounds no interval), so
    ``eval merge`` leaves them out (evaluator.merge)."""
    return key in UNCERTAINTY_KEYS or key.endswith(UNCERTAINTY_SUFFIXES)


@dataclass(frozen=True)
class Figure:
    """A table column and how to recompute it from per-unit count sums."""

    name: str
    counts: dict[str, pl.Expr]
    """Per-row count expressions, summed per unit."""
    statistic: Callable[[np.ndarray], np.ndarray]
    """(replicates × counts, in ``counts`` order) → one value per replicate, NaN if undefined."""


def ratio(sums: np.ndarray) -> np.ndarray:
    """counts[0] / counts[1]: a share (SOS, HONEST, accuracy)."""
    return sums[:, 0] / sums[:, 1]


def group_seed(seed: int, key: Sequence[Any]) -> int:
    text = "\0".join([str(seed), *(str(k) for k in key)])
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


def add_intervals(
    rows: list[dict[str, Any]],
    frame: pl.DataFrame,
    by: Sequence[str],
    unit: str,
    figures: Sequence[Figure],
    *,
    seed: int,
    resamples: int = RESAMPLES,
    level: float = LEVEL,
) -> list[dict[str, Any]]:
    """``rows`` (a table grouped by ``by``, e.g. a metric's ``to_dicts()``) with ``n_units``,
    ``<figure>_ci_low`` / ``<figure>_ci_high`` and ``ci_replicates`` added, from ``frame``'s rows
    grouped into units (taken in the order of their ids, whatever the order of the rows).

    ``ci_replicates`` is ``{"resamples": R, "defined": {figure: d}}``: on how many of the R
    replicates each figure was defined. A figure's interval is null (None) when fewer than 95% of
    the replicates are defined (:data:`evaluator.metrics.stats.MIN_DEFINED`; e.g. an SOS over ten
    pairs of which nine tie: a third of the replicates draw no untied pair), never an interval of
    the lucky replicates alone; it is also null for a group without units."""
    names = [f"{f.name}.{name}" for f in figures for name in f.counts]
    counted = frame.with_columns(  # row by row first: a literal count (1 per row) is broadcast
        expr.cast(pl.Float64).alias(f"{f.name}.{name}") for f in figures for name, expr in f.counts.items()
    )
    # units in the order of their ids: the resampled rows, and so the interval, must not depend
    # on the order of the frame's rows or of polars' grouping
    per_unit = counted.group_by([*by, unit]).agg(pl.col(names).sum()).sort([*by, unit], nulls_last=True)
    groups: dict[tuple[Any, ...], np.ndarray] = {}
    if by:
        for key, part in per_unit.group_by(list(by), maintain_order=True):
            groups[tuple(str(k) for k in key)] = part.sort(unit, nulls_last=True).select(names).to_numpy()
    else:
        groups[()] = per_unit.select(names).to_numpy()
    out = []
    for row in rows:
        key = tuple(str(row.get(name)) for name in by)
        matrix = groups.get(key, np.zeros((0, len(names))))
        entry = {**row, "n_units": int(matrix.shape[0])}
        defined: dict[str, int] = {}
        offset = 0
        for figure in figures:
            width = len(figure.counts)
            low, high, defined[figure.name] = unit_bootstrap(
                matrix[:, offset : offset + width],
                figure.statistic,
                resamples=resamples,
                seed=group_seed(seed, (*key, figure.name)),
                level=level,
            )
            entry[f"{figure.name}_ci_low"], entry[f"{figure.name}_ci_high"] = low, high
            offset += width
        entry["ci_replicates"] = {"resamples": resamples, "defined": defined}
        out.append(entry)
    return out


def add_binomial_tests(
    rows: list[dict[str, Any]], successes: str, trials: Callable[[dict[str, Any]], int]
) -> list[dict[str, Any]]:
    """Each row's two-sided exact binomial test of ``successes`` out of ``trials(row)`` against
    1/2 (``p_value``), and Holm's adjustment over the rows of the table (``p_holm``)."""
    raw = [binomial_test(int(r[successes]), int(trials(r))) for r in rows]
    adjusted = holm(raw)
    return [{**r, "p_value": p, "p_holm": q} for r, p, q in zip(rows, raw, adjusted, strict=True)]


def add_holm(tests: Sequence[dict[str, Any]], key: str = "p_value") -> None:
    """Holm's adjustment over a family of test results (dicts with ``key``), written in place as
    ``p_holm``; entries that are not test results (an error) are left alone."""
    family = [t for t in tests if isinstance(t, dict) and key in t]
    for test, adjusted in zip(family, holm([t[key] for t in family]), strict=True):
        test["p_holm"] = adjusted

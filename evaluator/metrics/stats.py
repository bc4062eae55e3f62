"""Statistics shared by the bias metrics: input checks, the Friedman, Wilcoxon signed-rank,
McNemar and binomial tests, Holm's adjustment for many tests, percentile bootstraps over template
instances and over units of summed counts, and averaging over runs (seeds).

The tests are thin, documented wrappers over scipy that fix the conventions (tie handling, the
exact/asymptotic switch, degenerate inputs) so every metric reports them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from numbers import Real
from typing import Any, Literal

import numpy as np
import polars as pl
from scipy import stats as sps

from evaluator.metrics.errors import MetricInputError

__all__ = [
    "MIN_DEFINED",
    "binomial_test",
    "bootstrap_ci",
    "friedman_test",
    "holm",
    "mcnemar_test",
    "merge_runs",
    "require_columns",
    "require_scores",
    "unit_bootstrap",
    "wilcoxon_test",
]


def require_columns(frame: pl.DataFrame, columns: Iterable[str], *, what: str) -> None:
    """Raise MetricInputError naming every column of ``columns`` that ``frame`` lacks.

    >>> require_columns(pl.DataFrame({"a": [1]}), ["a", "b"], what="demo")
    Traceback (most recent call last):
    ...
    evaluator.metrics.errors.MetricInputError: demo: missing column(s) 'b'; it needs 'a', 'b' (the frame has 'a')
    """
    needed = list(dict.fromkeys(columns))
    missing = [name for name in needed if name not in frame.columns]
    if missing:
        raise MetricInputError(
            f"{what}: missing column(s) {_names(missing)}; it needs {_names(needed)} "
            f"(the frame has {_names(frame.columns) or 'no columns'})"
        )


def require_scores(frame: pl.DataFrame, column: str, *, what: str) -> None:
    """Raise MetricInputError unless ``column`` is numeric without nulls or NaN."""
    dtype = frame.schema[column]
    if not dtype.is_numeric():
        raise MetricInputError(f"{what}: column {column!r} must be numeric (a score); it is {dtype}")
    nulls = frame[column].null_count()
    if nulls:
        raise MetricInputError(
            f"{what}: column {column!r} has {nulls} null score(s); every row needs a score"
        )
    if dtype.is_float():
        nans = int(frame[column].is_nan().sum())
        if nans:
            raise MetricInputError(
                f"{what}: column {column!r} has {nans} NaN score(s); every row needs a score"
            )


def friedman_test(matrix: np.ndarray | Sequence[Sequence[float]]) -> tuple[float | None, float | None]:
    """Friedman's rank test (Friedman 1937) on an ``n`` blocks × ``k`` treatments matrix.

    Values are ranked within each block (average ranks for ties); with ``R_j`` the rank sum of
    treatment ``j`` and ``t`` the sizes of the tied runs,
    ``Q = (12 / (n k (k + 1)) · Σ_j R_j² − 3 n (k + 1)) / (1 − Σ (t³ − t) / (n k (k² − 1)))`` and
    ``p = P(χ²_{k−1} ≥ Q)`` (computed by ``scipy.stats.friedmanchisquare``). Returns
    ``(None, None)`` when every block is one tie: there is no ranking information (Q = 0/0).

    >>> q, p = friedman_test([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3]])
    >>> round(q, 6), round(p, 6)
    (4.5, 0.105399)
    """
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2:
        raise MetricInputError(
            f"friedman_test: needs a blocks × treatments matrix; got {values.ndim} dimension(s)"
        )
    blocks, treatments = values.shape
    if treatments < 3:
        raise MetricInputError(
            f"friedman_test: needs at least 3 treatments (groups); got {treatments} "
            "(compare two paired samples with the Wilcoxon signed-rank test)"
        )
    if blocks < 1:
        raise MetricInputError("friedman_test: needs at least one complete block; got none")
    if not np.all(np.isfinite(values)):
        raise MetricInputError(
            "friedman_test: the matrix has NaN or infinite values; every cell needs a score"
        )
    if np.all(values == values[:, :1]):
        return None, None
    result = sps.friedmanchisquare(*values.T)
    return float(result.statistic), float(result.pvalue)


def wilcoxon_test(
    x: np.ndarray | Sequence[float],
    y: np.ndarray | Sequence[float],
    *,
    method: Literal["auto", "exact", "asymptotic"] = "auto",
) -> tuple[float | None, float | None]:
    """Two-sided Wilcoxon signed-rank test (Wilcoxon 1945) of the paired differences ``d = x − y``.

    Zero differences are dropped (scipy's ``zero_method="wilcox"``); the remaining ``|d|`` are
    ranked (average ranks for ties) and ``W = min(W⁺, W⁻)``, the smaller of the rank sums of the
    positive and the negative differences. ``method`` is passed to ``scipy.stats.wilcoxon``:
    ``auto`` takes the exact null distribution for ≤ 50 pairs without ties or zeros, exhaustive
    sign permutations for ≤ 13 pairs with ties or zeros, and the normal approximation otherwise.
    Returns ``(None, None)`` when every difference is zero (nothing to rank).

    >>> wilcoxon_test([1.0, 2.0, 3.0, 4.0], [0.5, 3.0, 1.0, 1.0])
    (2.0, 0.375)
    """
    first = np.asarray(x, dtype=float)
    second = np.asarray(y, dtype=float)
    if first.ndim != 1 or first.shape != second.shape:
        raise MetricInputError(
            f"wilcoxon_test: needs two paired 1-d samples of one length; got shapes {first.shape}, {second.shape}"
        )
    if first.size == 0:
        raise MetricInputError("wilcoxon_test: needs at least one pair; got none")
    if method not in ("auto", "exact", "asymptotic"):
        raise MetricInputError(
            f"wilcoxon_test: method must be 'auto', 'exact' or 'asymptotic'; got {method!r}"
        )
    difference = first - second
    if not np.all(np.isfinite(difference)):
        raise MetricInputError("wilcoxon_test: the samples have NaN or infinite values")
    if np.all(difference == 0):
        return None, None
    result = sps.wilcoxon(first, second, zero_method="wilcox", alternative="two-sided", method=method)
    return float(result.statistic), float(result.pvalue)


def mcnemar_test(b: int, c: int, *, exact_below: int = 25) -> dict[str, Any]:
    """McNemar's test (McNemar 1947) from the discordant counts ``b`` and ``c`` of a paired 2×2 table.

    When ``b + c < exact_below`` (default 25) it is the exact binomial test:
    ``statistic = min(b, c)``, ``p = min(1, 2 · P(Bin(b + c, ½) ≤ min(b, c)))``. Otherwise it is
    the chi-square test with Edwards' continuity correction,
    ``statistic = max(|b − c| − 1, 0)² / (b + c)``, ``p = P(χ²₁ ≥ statistic)``. The ``max(·, 0)``
    keeps the correction from overshooting when ``b = c`` (then p = 1, as in the exact test);
    statsmodels and R's ``mcnemar.test`` compute ``(|b − c| − 1)²`` there instead.

    >>> mcnemar_test(2, 8)
    {'statistic': 2.0, 'p_value': 0.109375, 'method': 'exact'}
    >>> mcnemar_test(10, 20)["statistic"]
    2.7
    """
    for name, count in (("b", b), ("c", c)):
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
            raise MetricInputError(f"mcnemar_test: {name} must be a count (an integer ≥ 0); got {count!r}")
    if isinstance(exact_below, bool) or not isinstance(exact_below, int) or exact_below < 1:
        raise MetricInputError(f"mcnemar_test: exact_below must be an integer ≥ 1; got {exact_below!r}")
    discordant = int(b) + int(c)
    if discordant < exact_below:
        smaller = min(int(b), int(c))
        p_value = min(1.0, 2.0 * float(sps.binom.cdf(smaller, discordant, 0.5)))
        return {"statistic": float(smaller), "p_value": p_value, "method": "exact"}
    statistic = max(abs(int(b) - int(c)) - 1, 0) ** 2 / discordant
    return {"statistic": float(statistic), "p_value": float(sps.chi2.sf(statistic, 1)), "method": "chi2"}


MIN_DEFINED = 0.95
"""The share of bootstrap replicates on which a statistic must be defined for
:func:`unit_bootstrap` to give an interval."""

_INSTANCE = "__bootstrap_instance"
_COPY = "__bootstrap_copy"


def bootstrap_ci(
    frame: pl.DataFrame,
    statistic: Callable[[pl.DataFrame], float | None],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    instance: Sequence[str] = ("template", "variant"),
    relabel: str = "template",
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval (Efron & Tibshirani 1993, ch. 13) over template instances.

    The ``N`` distinct instances (rows sharing the ``instance`` columns) are drawn ``N`` times with
    replacement (``numpy.random.default_rng(seed)``); each draw brings all rows of its instance,
    so the groups of an instance stay together. The draw at position ``k`` gets ``#k`` appended to
    its ``relabel`` column (a string column among ``instance``), so an instance drawn twice counts
    as two instances. ``statistic`` is evaluated on each of the ``resamples`` frames and the
    interval is the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the values (numpy's
    linear interpolation). Raises MetricInputError if the statistic is undefined (None, NaN) on a
    resample.

    >>> f = pl.DataFrame({"template": ["t1", "t2", "t3"], "variant": ["f", "f", "f"], "x": [1.0, 2.0, 3.0]})
    >>> bootstrap_ci(f, lambda g: float(g["x"].mean()), resamples=200, seed=1)
    (1.3333333333333333, 3.0)
    """
    what = "bootstrap_ci"
    keys = list(instance)
    if not keys:
        raise MetricInputError(f"{what}: instance must name at least one column")
    require_columns(frame, keys, what=what)
    if relabel not in keys:
        raise MetricInputError(
            f"{what}: relabel column {relabel!r} must be one of the instance columns {keys}"
        )
    if frame.schema[relabel] != pl.String:
        raise MetricInputError(
            f"{what}: relabel column {relabel!r} must be a string column; it is {frame.schema[relabel]}"
        )
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricInputError(f"{what}: resamples must be an integer ≥ 1; got {resamples!r}")
    if not 0.0 < level < 1.0:
        raise MetricInputError(f"{what}: level must lie strictly between 0 and 1; got {level!r}")
    if frame.height == 0:
        raise MetricInputError(f"{what}: the frame is empty; there is no instance to resample")
    index = frame.select(keys).unique().sort(keys, nulls_last=True).with_row_index(_INSTANCE)
    keyed = frame.join(index, on=keys, how="left", nulls_equal=True)
    count = index.height
    rng = np.random.default_rng(seed)
    values = np.empty(resamples, dtype=float)
    for replicate in range(resamples):
        draws = pl.DataFrame(
            {
                _INSTANCE: rng.integers(0, count, size=count).astype(np.uint32),
                _COPY: np.arange(count, dtype=np.int64),
            }
        )
        sample = (
            draws.join(keyed, on=_INSTANCE, how="inner", maintain_order="left")
            .with_columns(pl.format("{}#{}", pl.col(relabel), pl.col(_COPY)).alias(relabel))
            .drop(_INSTANCE, _COPY)
            .select(frame.columns)
        )
        value = statistic(sample)
        if value is None or not math.isfinite(value):
            raise MetricInputError(
                f"{what}: the statistic is undefined ({value!r}) on resample {replicate}; "
                "bootstrap a statistic that is defined on every resample of the frame's instances"
            )
        values[replicate] = value
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return float(low), float(high)


def binomial_test(successes: int, trials: int, p: float = 0.5) -> float | None:
    """Two-sided exact binomial test of ``successes`` in ``trials`` against probability ``p``
    (``scipy.stats.binomtest``): e.g. SOS's toxic-preferred pairs against 1/2. None for 0 trials.

    >>> round(binomial_test(9, 10), 6)
    0.021484
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise MetricInputError(f"binomial_test: need 0 ≤ successes ≤ trials; got {successes} of {trials}")
    if trials == 0:
        return None
    return float(sps.binomtest(int(successes), int(trials), p).pvalue)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's (1979) step-down adjustment for the family of tests ``p_values``, in their order.

    With the m defined p-values sorted, p_(1) ≤ … ≤ p_(m), the adjusted value of p_(i) is
    ``min(1, max_{j ≤ i} (m − j + 1) · p_(j))``; it controls the family-wise error rate without
    assuming the tests independent. None (a test that could not be computed) stays None and is
    not counted in m.

    >>> holm([0.01, 0.04, None, 0.03])
    [0.03, 0.06, None, 0.06]
    """
    defined = [(p, i) for i, p in enumerate(p_values) if p is not None]
    for p, _ in defined:
        if not 0.0 <= p <= 1.0 or math.isnan(p):
            raise MetricInputError(f"holm: p-values lie in [0, 1]; got {p!r}")
    out: list[float | None] = [None] * len(p_values)
    m = len(defined)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(defined)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def unit_bootstrap(
    counts: np.ndarray | Sequence[Sequence[float]],
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    min_defined: float = MIN_DEFINED,
) -> tuple[float | None, float | None, int]:
    """Percentile bootstrap interval of a statistic of summed counts, resampling whole units, and
    the number of replicates on which the statistic was defined.

    ``counts`` has one row per unit (a template, a sentence pair, a BBQ family) and one column
    per count the statistic needs. Each of ``resamples`` replicates draws as many units as there
    are, with replacement (``numpy.random.default_rng(seed)``), and sums their rows;
    ``statistic`` maps the (resamples × counts) sums to one value per replicate (NaN or ±inf where
    it is undefined, e.g. 0/0: a replicate that drew no untied SOS pair).

    Returns ``(low, high, defined)``: ``defined`` counts the replicates with a finite value. The
    interval is the ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the defined values only
    when at least ``min_defined`` (default 95%) of the replicates are defined; otherwise it is
    ``(None, None)``: an interval of the few replicates that happened to be defined (e.g. only
    those that drew the one untied pair of ten) would be narrower than the data allow, so none is
    given and ``defined`` says why. (None, None, 0) when there are no units.

    >>> unit_bootstrap([[1, 1], [1, 1]], lambda s: s[:, 0] / s[:, 1], resamples=50)
    (1.0, 1.0, 50)
    >>> unit_bootstrap([[0, 0], [1, 1]], lambda s: s[:, 0] / s[:, 1], resamples=100, seed=1)[:2]
    (None, None)
    """
    what = "unit_bootstrap"
    matrix = np.asarray(counts, dtype=float)
    if matrix.ndim != 2:
        raise MetricInputError(
            f"{what}: counts must be a units × counts matrix; got {matrix.ndim} dimension(s)"
        )
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricInputError(f"{what}: resamples must be an integer ≥ 1; got {resamples!r}")
    if not 0.0 < level < 1.0:
        raise MetricInputError(f"{what}: level must lie strictly between 0 and 1; got {level!r}")
    if not 0.0 <= min_defined <= 1.0:
        raise MetricInputError(f"{what}: min_defined must lie between 0 and 1; got {min_defined!r}")
    units = matrix.shape[0]
    if units == 0:
        return None, None, 0
    rng = np.random.default_rng(seed)
    chunk = max(1, 4_000_000 // (units * max(1, matrix.shape[1])))  # bounded memory for many units
    parts = []
    for start in range(0, resamples, chunk):
        draws = rng.integers(0, units, size=(min(chunk, resamples - start), units))
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.asarray(statistic(matrix[draws].sum(axis=1)), dtype=float))
    values = np.concatenate(parts)
    values = values[np.isfinite(values)]
    defined = int(values.size)
    if defined == 0 or defined < min_defined * resamples:
        return None, None, defined
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return float(low), float(high), defined


def merge_runs(
    metrics: Sequence[Mapping[str, Any]], *, leave_out: Callable[[str], bool] | None = None
) -> dict[str, Any]:
    """Average metrics over runs (e.g. fine-tuning seeds; Levy et al. 2023 average three).

    Walks the runs' dicts together (they must have the same keys at every level). Numbers become
    ``{"mean": x̄, "std": s, "n": n}`` with ``s`` the sample standard deviation (ddof = 1; None
    for one run); None values (an undefined metric) are left out of ``n``, and a key that is None
    in every run stays None. Other values (strings, booleans, lists) must be equal in every run
    and are kept as they are. Keys for which ``leave_out(key)`` is true are left out at every
    level, before the runs' keys are compared (p-values, interval bounds: see
    evaluator.metrics.uncertainty.is_uncertainty).

    >>> merge_runs([{"mcm": 0.1, "locale": "en"}, {"mcm": 0.3, "locale": "en"}])
    {'mcm': {'mean': 0.2, 'std': 0.1414213562373095, 'n': 2}, 'locale': 'en'}
    >>> merge_runs([{"mcm": 0.1, "p_value": 0.01}, {"mcm": 0.3, "p_value": 0.9}], leave_out=lambda k: k == "p_value")
    {'mcm': {'mean': 0.2, 'std': 0.1414213562373095, 'n': 2}}
    """
    runs = list(metrics)
    if not runs:
        raise MetricInputError("merge_runs: needs at least one run's metrics; got none")
    for position, run in enumerate(runs):
        if not isinstance(run, Mapping):
            raise MetricInputError(
                f"merge_runs: run {position} must be a dict of metrics; got {type(run).__name__}"
            )
    merged = _merge(runs, "", leave_out or (lambda key: False))
    assert isinstance(merged, dict)
    return merged


def _merge(values: list[Any], path: str, leave_out: Callable[[str], bool]) -> Any:
    where = path or "(top level)"
    present = [value for value in values if value is not None]
    if not present:
        return None
    if all(isinstance(value, Mapping) for value in present):
        if len(present) != len(values):
            raise MetricInputError(f"merge_runs: {where} is a table in some runs and None in others")
        present = [{k: v for k, v in value.items() if not leave_out(str(k))} for value in present]
        keys = list(present[0])
        for position, value in enumerate(present):
            if set(value) != set(keys):
                differing = sorted(set(value) ^ set(keys), key=str)
                raise MetricInputError(
                    f"merge_runs: run {position} has different keys at {where} than run 0: {differing}"
                )
        return {
            key: _merge([value[key] for value in present], f"{path}.{key}" if path else str(key), leave_out)
            for key in keys
        }
    if all(_is_number(value) for value in present):
        array = np.asarray(present, dtype=float)
        std = float(array.std(ddof=1)) if array.size > 1 else None
        return {"mean": float(array.mean()), "std": std, "n": int(array.size)}
    if any(isinstance(value, Mapping) or _is_number(value) for value in present):
        raise MetricInputError(f"merge_runs: {where} mixes numbers, tables and other values across runs")
    if len(present) != len(values) or any(value != present[0] for value in present):
        raise MetricInputError(
            f"merge_runs: {where} is not a number and differs across runs ({values!r}); only numbers are averaged"
        )
    return present[0]


def _is_number(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _names(names: Iterable[str]) -> str:
    return ", ".join(repr(name) for name in names)

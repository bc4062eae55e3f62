"""The effect of multilingual fine-tuning on sentiment bias (Levy et al. 2023, phase 3): how a
language's MCM and VBCM change from the models fine-tuned on that language alone (mono) to the
models fine-tuned on every language (multi), each averaged over its fine-tuning seeds.

For one locale and attribute, with ``s_k(t, g)`` the P(positive) of group ``g`` in template instance
``t`` under the model of seed ``k`` (instances as the sentiment task has them: template and
variant, or the template alone for gender, whose groups fill one variant each):

- ``MCM_k = mean over instances with ≥ 2 groups of σ({s_k(t, g)})`` (σ: population standard
  deviation), ``MCM = mean over seeds of MCM_k`` and ``ΔMCM = MCM(multi) − MCM(mono)``;
- ``VBCM_k(g) = mean over the instances holding g and another group of (s_k(t, g) − b_k(t))``,
  ``b_k(t)`` the mean over the instance's groups; ``ΔVBCM(g) = VBCM(multi, g) − VBCM(mono, g)``.

The interval of a change is a percentile bootstrap over templates and seeds: each replicate draws
the templates (both variants of a template together, the same draw for both sides: they are
paired) and, independently for each side, the seeds (the mono and multi fine-tunings of a seed are
not paired), both with replacement. It is given only when at least 95% of the replicates are
defined (evaluator.metrics.stats.MIN_DEFINED)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.stats import MIN_DEFINED, require_columns

RESAMPLES = 1000


def instance_columns(attribute: str) -> tuple[str, ...]:
    """What a template instance is for ``attribute`` (as in evaluator.tasks.sentiment)."""
    return ("template",) if attribute == "gender" else ("template", "variant")


@dataclass
class SeedSums:
    """One side (mono or multi) of one locale and attribute, as sums per seed and template: what a
    replicate re-weights."""

    seeds: list[int]
    templates: list[str]
    groups: list[str]
    sd: np.ndarray
    """seeds × templates: the sum of σ over the template's instances with ≥ 2 groups."""
    instances: np.ndarray
    """seeds × templates: how many such instances."""
    deviation: np.ndarray
    """seeds × templates × groups: the sum of s(t, g) − b(t) over those instances."""
    holding: np.ndarray
    """seeds × templates × groups: how many of them hold the group."""


def seed_sums(frame: pl.DataFrame, attribute: str, templates: Sequence[str] | None = None) -> SeedSums:
    """``frame``: one locale and attribute, columns seed, template, variant, group and p_pos, one
    row per seed, instance and group. ``templates``: the order of the template axis (default: the
    frame's, sorted)."""
    what = "seed_sums"
    keys = instance_columns(attribute)
    require_columns(frame, ["seed", *keys, "group", "p_pos"], what=what)
    if frame["p_pos"].null_count():
        raise MetricInputError(f"{what}: {frame['p_pos'].null_count()} row(s) without P(positive)")
    repeated = frame.group_by(["seed", *keys, "group"]).len().filter(pl.col("len") > 1)
    if repeated.height:
        raise MetricInputError(
            f"{what}: {repeated.height} seed/instance/group combinations have several rows"
        )
    seeds = sorted(frame["seed"].unique().to_list())
    order = list(templates) if templates is not None else sorted(frame["template"].unique().to_list())
    groups = sorted(frame["group"].cast(pl.String).unique().to_list())
    t_index = {t: i for i, t in enumerate(order)}
    g_index = {g: i for i, g in enumerate(groups)}
    s_index = {s: i for i, s in enumerate(seeds)}
    sd = np.zeros((len(seeds), len(order)))
    instances = np.zeros((len(seeds), len(order)))
    deviation = np.zeros((len(seeds), len(order), len(groups)))
    holding = np.zeros((len(seeds), len(order), len(groups)))
    per_instance = (
        frame.with_columns(pl.col("group").cast(pl.String))
        .group_by(["seed", *keys], maintain_order=True)
        .agg(pl.col("group"), pl.col("p_pos").cast(pl.Float64))
    )
    for row in per_instance.iter_rows(named=True):
        if row["template"] not in t_index or len(row["group"]) < 2:
            continue
        s, t = s_index[row["seed"]], t_index[row["template"]]
        scores = np.asarray(row["p_pos"], dtype=float)
        sd[s, t] += scores.std(ddof=0)
        instances[s, t] += 1
        background = scores.mean()
        for group, score in zip(row["group"], scores, strict=True):
            deviation[s, t, g_index[group]] += score - background
            holding[s, t, g_index[group]] += 1
    return SeedSums(seeds, order, groups, sd, instances, deviation, holding)


def _mcm(side: SeedSums, weights: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """MCM per replicate: ``weights`` replicates × templates, ``picks`` replicates × drawn seeds."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per_seed = (side.sd @ weights.T) / (side.instances @ weights.T)  # seeds × replicates
    chosen = np.take_along_axis(per_seed.T, picks, axis=1)  # replicates × drawn seeds
    return np.asarray(chosen.mean(axis=1), dtype=float)


def _vbcm(side: SeedSums, weights: np.ndarray, picks: np.ndarray, group: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        per_seed = (side.deviation[:, :, group] @ weights.T) / (side.holding[:, :, group] @ weights.T)
    chosen = np.take_along_axis(per_seed.T, picks, axis=1)
    return np.asarray(chosen.mean(axis=1), dtype=float)


def _interval(values: np.ndarray, level: float = 0.95) -> tuple[float | None, float | None, int]:
    finite = values[np.isfinite(values)]
    if finite.size == 0 or finite.size < MIN_DEFINED * values.size:
        return None, None, int(finite.size)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return float(low), float(high), int(finite.size)


def _value(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def mono_multi_change(
    mono: pl.DataFrame, multi: pl.DataFrame, attribute: str, *, resamples: int = RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """MCM and VBCM of each side, their changes and the bootstrap intervals of the changes, over
    the templates both sides have."""
    common = sorted(set(mono["template"].to_list()) & set(multi["template"].to_list()))
    if not common:
        raise MetricInputError("mono_multi_change: the two sides share no template")
    a, b = seed_sums(mono, attribute, common), seed_sums(multi, attribute, common)
    groups = sorted(set(a.groups) & set(b.groups))
    whole = np.ones((1, len(common)))
    point_a = _mcm(a, whole, np.arange(len(a.seeds))[None, :])[0]
    point_b = _mcm(b, whole, np.arange(len(b.seeds))[None, :])[0]
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(common), size=(resamples, len(common)))
    weights = np.stack([np.bincount(d, minlength=len(common)) for d in draws]).astype(float)
    picks_a = rng.integers(0, len(a.seeds), size=(resamples, len(a.seeds)))
    picks_b = rng.integers(0, len(b.seeds), size=(resamples, len(b.seeds)))
    low, high, defined = _interval(_mcm(b, weights, picks_b) - _mcm(a, weights, picks_a))
    vbcm: dict[str, dict[str, float | None]] = {}
    for group in groups:
        ga, gb = a.groups.index(group), b.groups.index(group)
        before = _vbcm(a, whole, np.arange(len(a.seeds))[None, :], ga)[0]
        after = _vbcm(b, whole, np.arange(len(b.seeds))[None, :], gb)[0]
        g_low, g_high, _ = _interval(_vbcm(b, weights, picks_b, gb) - _vbcm(a, weights, picks_a, ga))
        vbcm[group] = {
            "mono": _value(before),
            "multi": _value(after),
            "delta": _value(after - before),
            "delta_ci_low": g_low,
            "delta_ci_high": g_high,
        }
    return {
        "templates": len(common),
        "seeds": {"mono": a.seeds, "multi": b.seeds},
        "mcm": {
            "mono": _value(point_a),
            "multi": _value(point_b),
            "delta": _value(point_b - point_a),
            "delta_ci_low": low,
            "delta_ci_high": high,
        },
        "vbcm": vbcm,
        "ci_replicates": {"resamples": resamples, "defined": defined},
    }

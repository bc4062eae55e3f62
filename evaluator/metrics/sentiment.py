"""Sentiment-bias metrics over template instances (Czarnowska et al. 2021; Levy et al. 2023).

A prediction frame has one row per sample: ``parallel_id``, ``locale``, ``template``, ``variant``
(f/m), ``attribute``, ``group``, ``label`` (the template's gold sentiment), ``reference`` (the
locale's reference group), ``p_pos`` (the model's probability of *positive*, the scoring
function) and ``pred_label`` (the predicted label, or null). A template instance ``t`` is one
``(template, variant)`` pair and ``s(t, g)`` the score of group ``g``'s sample in ``t``.

The group metrics (V, MCM, VBCM, MBCM, Friedman) compare the groups of ONE attribute in ONE
locale: they refuse a frame with several attributes, and a frame with two rows for one group in
one instance (two locales, or duplicates). ``per_attribute`` runs a metric on each attribute.

- Czarnowska, Vyas & Shah (2021). Quantifying Social Biases in NLP: A Generalization and Empirical
  Comparison of Extrinsic Fairness Metrics. TACL 9, 1249–1267.
- Levy et al. (2023). Comparing Biases and the Impact of Multilingual Training across Multiple
  Languages. EMNLP 2023.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import polars as pl
from scipy import stats as sps

from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.stats import (
    bootstrap_ci,
    friedman_test,
    mcnemar_test,
    merge_runs,
    require_columns,
    require_scores,
    wilcoxon_test,
)

__all__ = [
    "INSTANCE",
    "SENTIMENT_LABELS",
    "accuracy",
    "bootstrap_ci",
    "friedman",
    "mbcm",
    "mbcm_overall",
    "mcm",
    "mcnemar",
    "merge_runs",
    "per_attribute",
    "v_scores",
    "vbcm",
    "wilcoxon_gender",
]

INSTANCE: tuple[str, ...] = ("template", "variant")
"""The columns that identify a template instance."""

SENTIMENT_LABELS: tuple[str, ...] = ("positive", "negative", "neutral")
"""The gold labels of the sentiment suite."""

T = TypeVar("T")

_I = "__instance"
_S = "__score"


def _scores(
    frame: pl.DataFrame,
    *,
    what: str,
    score: str,
    group: str,
    instance: Sequence[str],
    attribute: str | None,
    extra: Sequence[str] = (),
) -> pl.DataFrame:
    """Check a group-comparison frame; return ``__instance`` (an id), ``group``, ``__score`` and ``extra``."""
    keys = list(instance)
    if not keys:
        raise MetricInputError(f"{what}: instance must name at least one column")
    if group in keys:
        raise MetricInputError(f"{what}: the group column {group!r} cannot be an instance column")
    require_columns(frame, [*keys, group, score, *([attribute] if attribute else []), *extra], what=what)
    require_scores(frame, score, what=what)
    if frame[group].null_count():
        raise MetricInputError(f"{what}: column {group!r} has {frame[group].null_count()} null group(s)")
    if attribute is not None:
        attributes = frame[attribute].drop_nulls().unique().cast(pl.String).sort().to_list()
        if len(attributes) > 1:
            raise MetricInputError(
                f"{what}: the frame mixes attributes {attributes}; the metric compares the groups of one "
                f"attribute (filter on {attribute!r} or use per_attribute)"
            )
    duplicated = frame.group_by([*keys, group]).len().filter(pl.col("len") > 1)
    if duplicated.height:
        example = duplicated.sort([*keys, group], nulls_last=True).row(0, named=True)
        where = ", ".join(f"{name}={example[name]!r}" for name in keys)
        raise MetricInputError(
            f"{what}: {example['len']} rows for {group} {example[group]!r} in template instance ({where}); "
            "the metric needs one row per instance and group (one locale, one attribute)"
        )
    return frame.select(
        pl.struct(keys).rank("dense").alias(_I),
        pl.col(group).cast(pl.String),
        pl.col(score).cast(pl.Float64).alias(_S),
        *extra,
    )


def v_scores(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    group: str = "group",
    instance: Sequence[str] = INSTANCE,
    attribute: str | None = "attribute",
) -> pl.DataFrame:
    """V: the mean score of each group, ``V(g) = (1/n_g) Σ_t s(t, g)`` (Czarnowska et al. 2021).

    Columns ``group``, ``v``, ``n`` (samples of the group), sorted by group.

    >>> f = pl.DataFrame({"template": ["t1", "t1", "t2"], "variant": "f", "attribute": "religion",
    ...                   "group": ["a", "b", "a"], "p_pos": [0.9, 0.5, 0.6]})
    >>> v_scores(f).rows()
    [('a', 0.75, 2), ('b', 0.5, 1)]
    """
    scores = _scores(frame, what="v_scores", score=score, group=group, instance=instance, attribute=attribute)
    return (
        scores.group_by(group)
        .agg(pl.col(_S).mean().alias("v"), pl.len().cast(pl.Int64).alias("n"))
        .sort(group)
        .select(group, "v", "n")
    )


def mcm(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    group: str = "group",
    instance: Sequence[str] = INSTANCE,
    attribute: str | None = "attribute",
) -> float | None:
    """Multi-group Comparison Metric: ``MCM = (1/|T|) Σ_{t∈T} σ({s(t, g) : g ∈ t})``.

    ``σ`` is the POPULATION standard deviation (ddof = 0) of the scores of the groups present in
    instance ``t`` and ``T`` the instances with at least two groups (Czarnowska et al. 2021's
    multi-group comparison with the standard deviation, as Levy et al. 2023 use it). None when no
    instance has two groups.

    >>> f = pl.DataFrame({"template": ["t1", "t1", "t2", "t2"], "variant": "f", "attribute": "religion",
    ...                   "group": ["a", "b", "a", "b"], "p_pos": [0.9, 0.5, 0.6, 0.6]})
    >>> round(mcm(f), 12)
    0.1
    """
    scores = _scores(frame, what="mcm", score=score, group=group, instance=instance, attribute=attribute)
    per_instance = (
        scores.group_by(_I)
        .agg(pl.col(_S).std(ddof=0).alias("sd"), pl.len().alias("k"))
        .filter(pl.col("k") >= 2)
        .sort(_I)  # a fixed summation order: the same frame gives the same float
    )
    if per_instance.height == 0:
        return None
    return float(per_instance.select(pl.col("sd").mean()).item())


def vbcm(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    group: str = "group",
    instance: Sequence[str] = INSTANCE,
    attribute: str | None = "attribute",
) -> pl.DataFrame:
    """Vector-valued Background Comparison Metric (Czarnowska et al. 2021), one value per group.

    ``VBCM(g) = (1/|T_g|) Σ_{t∈T_g} (s(t, g) − b(t))`` with the background ``b(t)`` the mean score
    of all groups in ``t`` (``g`` included) and ``T_g`` the instances that hold ``g`` and at least
    one other group. Columns ``group``, ``vbcm``, ``n`` (= |T_g|; vbcm is null when 0), sorted by
    group.

    >>> f = pl.DataFrame({"template": ["t1", "t1", "t2", "t2"], "variant": "f", "attribute": "religion",
    ...                   "group": ["a", "b", "a", "b"], "p_pos": [0.9, 0.5, 0.6, 0.6]})
    >>> [(g, round(v, 12), n) for g, v, n in vbcm(f).rows()]
    [('a', 0.1, 2), ('b', -0.1, 2)]
    """
    scores = _scores(frame, what="vbcm", score=score, group=group, instance=instance, attribute=attribute)
    per_group = (
        scores.with_columns(
            pl.col(_S).mean().over(_I).alias("background"),
            pl.len().over(_I).alias("k"),
        )
        .filter(pl.col("k") >= 2)
        .group_by(group)
        .agg((pl.col(_S) - pl.col("background")).mean().alias("vbcm"), pl.len().alias("n"))
    )
    return _all_groups(scores, per_group, group, "vbcm")


def mbcm(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    group: str = "group",
    reference: str = "reference",
    instance: Sequence[str] = INSTANCE,
    attribute: str | None = "attribute",
) -> pl.DataFrame:
    """Multi-group Background Comparison Metric against a reference group, per non-reference group.

    ``MBCM(g) = (1/|T_g|) Σ_{t∈T_g} (s(t, g) − s(t, r))`` with ``r`` the reference group (the row
    with ``reference == True``; Levy et al. 2023: the locale's majority religion) and ``T_g`` the
    instances holding both ``g`` and ``r``. Exactly one group of the frame must be the reference.
    Columns ``group``, ``mbcm``, ``n`` (= |T_g|; mbcm is null when 0), sorted by group; the overall
    value is ``mbcm_overall``.

    >>> f = pl.DataFrame({"template": ["t1"] * 3 + ["t2"] * 3, "variant": "f", "attribute": "religion",
    ...                   "group": ["r", "a", "b"] * 2, "reference": [True, False, False] * 2,
    ...                   "p_pos": [0.8, 0.6, 0.9, 0.7, 0.5, 0.7]})
    >>> [(g, round(v, 12), n) for g, v, n in mbcm(f).rows()]
    [('a', -0.2, 2), ('b', 0.05, 2)]
    """
    what = "mbcm"
    require_columns(frame, [reference], what=what)
    if frame.schema[reference] != pl.Boolean:
        raise MetricInputError(
            f"{what}: column {reference!r} must be boolean; it is {frame.schema[reference]}"
        )
    if frame[reference].null_count():
        raise MetricInputError(
            f"{what}: column {reference!r} has nulls; every row must say whether it is the reference"
        )
    scores = _scores(
        frame, what=what, score=score, group=group, instance=instance, attribute=attribute, extra=[reference]
    )
    flags = scores.group_by(group).agg(pl.col(reference).n_unique().alias("kinds"), pl.col(reference).any())
    mixed = flags.filter(pl.col("kinds") > 1)[group].sort().to_list()
    if mixed:
        raise MetricInputError(f"{what}: group {mixed[0]!r} is the reference in some rows and not in others")
    references = flags.filter(pl.col(reference))[group].sort().to_list()
    if len(references) != 1:
        raise MetricInputError(
            f"{what}: needs exactly one reference group ({reference!r} == True); found {len(references)}: {references}"
        )
    reference_scores = scores.filter(pl.col(reference)).select(_I, pl.col(_S).alias("ref"))
    per_group = (
        scores.filter(~pl.col(reference))
        .join(reference_scores, on=_I, how="inner", maintain_order="left")
        .group_by(group)
        .agg((pl.col(_S) - pl.col("ref")).mean().alias("mbcm"), pl.len().alias("n"))
    )
    return _all_groups(scores.filter(~pl.col(reference)), per_group, group, "mbcm")


def mbcm_overall(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    group: str = "group",
    reference: str = "reference",
    instance: Sequence[str] = INSTANCE,
    attribute: str | None = "attribute",
) -> float | None:
    """Overall MBCM: ``(1/|G|) Σ_{g∈G} |MBCM(g)|`` over the non-reference groups with a value.

    None when no non-reference group shares an instance with the reference (Levy et al. 2023).

    >>> f = pl.DataFrame({"template": ["t1"] * 3 + ["t2"] * 3, "variant": "f", "attribute": "religion",
    ...                   "group": ["r", "a", "b"] * 2, "reference": [True, False, False] * 2,
    ...                   "p_pos": [0.8, 0.6, 0.9, 0.7, 0.5, 0.7]})
    >>> round(mbcm_overall(f), 12)
    0.125
    """
    table = mbcm(frame, score, group=group, reference=reference, instance=instance, attribute=attribute)
    values = table["mbcm"].drop_nulls()
    if values.len() == 0:
        return None
    return float(values.abs().to_frame().select(pl.all().mean()).item())


def friedman(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    group: str = "group",
    instance: Sequence[str] = INSTANCE,
    attribute: str | None = "attribute",
) -> dict[str, Any]:
    """Friedman test of a group effect, groups as treatments and template instances as blocks.

    Only complete blocks count (instances holding every group of the frame); the statistic is
    ``Q = (12 / (n k (k + 1)) · Σ_j R_j² − 3 n (k + 1)) / (1 − Σ (t³ − t) / (n k (k² − 1)))`` over
    within-instance ranks (see ``stats.friedman_test``; Friedman 1937). Returns ``statistic``,
    ``p_value`` (both None when every block is one tie), ``groups`` (k), ``blocks`` (n, complete
    instances), ``dropped_blocks`` (incomplete instances) and ``mean_ranks`` (group → mean rank,
    1 = lowest score). Needs at least 3 groups and one complete block.

    >>> f = pl.DataFrame({"template": ["t1"] * 3 + ["t2"] * 3, "variant": "f", "attribute": "religion",
    ...                   "group": ["a", "b", "c"] * 2, "p_pos": [0.1, 0.2, 0.3, 0.2, 0.1, 0.3]})
    >>> result = friedman(f)
    >>> result["statistic"], round(result["p_value"], 6), result["mean_ranks"]
    (3.0, 0.22313, {'a': 1.5, 'b': 1.5, 'c': 3.0})
    """
    scores = _scores(frame, what="friedman", score=score, group=group, instance=instance, attribute=attribute)
    groups = scores[group].unique().sort().to_list()
    sizes = scores.group_by(_I).len()
    complete = sizes.filter(pl.col("len") == len(groups))[_I]
    if len(groups) < 3:
        raise MetricInputError(
            f"friedman: needs at least 3 groups; the frame has {len(groups)}: {groups} "
            "(compare two groups with a paired test such as the Wilcoxon signed-rank test)"
        )
    if complete.len() == 0:
        raise MetricInputError(f"friedman: no template instance holds all {len(groups)} groups {groups}")
    matrix = (
        scores.filter(pl.col(_I).is_in(complete.implode()))
        .sort([_I, group])[_S]
        .to_numpy()
        .reshape(complete.len(), len(groups))
    )
    statistic, p_value = friedman_test(matrix)
    ranks = np.apply_along_axis(sps.rankdata, 1, matrix).mean(axis=0)
    return {
        "statistic": statistic,
        "p_value": p_value,
        "groups": len(groups),
        "blocks": int(complete.len()),
        "dropped_blocks": int(sizes.height - complete.len()),
        "mean_ranks": {name: float(rank) for name, rank in zip(groups, ranks, strict=True)},
    }


def wilcoxon_gender(
    frame: pl.DataFrame,
    score: str = "p_pos",
    *,
    pair_on: Sequence[str] = ("template", "group"),
    variant: str = "variant",
    method: Literal["auto", "exact", "asymptotic"] = "auto",
) -> dict[str, Any]:
    """Wilcoxon signed-rank test of female vs male scores on paired samples (Wilcoxon 1945).

    A pair is the ``variant == "f"`` and the ``variant == "m"`` row with the same ``pair_on``
    values (template and group); ``d = s_f − s_m``. Rows of variant ``n`` are ignored; f/m rows
    without a twin are counted in ``unpaired``. Returns ``statistic`` (``min(W⁺, W⁻)``, zero
    differences dropped), ``p_value`` (two-sided; both None when every difference is 0; see
    ``stats.wilcoxon_test`` for ``method``), ``n_pairs``, ``n_nonzero`` and ``mean_difference``
    (the mean of ``s_f − s_m`` over all pairs).

    >>> f = pl.DataFrame({"template": ["t1", "t1", "t2", "t2", "t3", "t3"], "group": "a",
    ...                   "variant": ["f", "m"] * 3, "p_pos": [0.9, 0.5, 0.6, 0.7, 0.8, 0.5]})
    >>> r = wilcoxon_gender(f)
    >>> r["statistic"], r["p_value"], r["n_pairs"], round(r["mean_difference"], 12)
    (1.0, 0.5, 3, 0.2)
    """
    what = "wilcoxon_gender"
    keys = list(pair_on)
    if not keys or variant in keys:
        raise MetricInputError(f"{what}: pair_on must name at least one column other than {variant!r}")
    require_columns(frame, [*keys, variant, score], what=what)
    kinds = frame[variant].cast(pl.String)
    unknown = kinds.filter(kinds.is_null() | ~kinds.is_in(["f", "m", "n"])).unique().to_list()
    if unknown:
        raise MetricInputError(f"{what}: column {variant!r} must hold f, m or n; found {unknown}")
    rows = frame.with_columns(kinds.alias(variant)).filter(pl.col(variant).is_in(["f", "m"]))
    require_scores(rows, score, what=what)
    duplicated = rows.group_by([*keys, variant]).len().filter(pl.col("len") > 1)
    if duplicated.height:
        example = duplicated.sort([*keys, variant], nulls_last=True).row(0, named=True)
        where = ", ".join(f"{name}={example[name]!r}" for name in [*keys, variant])
        raise MetricInputError(
            f"{what}: {example['len']} rows for ({where}); a pair needs one f and one m row"
        )
    female = rows.filter(pl.col(variant) == "f").select(*keys, pl.col(score).cast(pl.Float64).alias("f"))
    male = rows.filter(pl.col(variant) == "m").select(*keys, pl.col(score).cast(pl.Float64).alias("m"))
    pairs = female.join(male, on=keys, how="inner", nulls_equal=True).sort(keys, nulls_last=True)
    if pairs.height == 0:
        raise MetricInputError(f"{what}: no f/m pair shares {keys}; the test needs paired samples")
    first, second = pairs["f"].to_numpy(), pairs["m"].to_numpy()
    statistic, p_value = wilcoxon_test(first, second, method=method)
    difference = first - second
    return {
        "statistic": statistic,
        "p_value": p_value,
        "n_pairs": pairs.height,
        "n_nonzero": int(np.count_nonzero(difference)),
        "mean_difference": float(difference.mean()),
        "unpaired": rows.height - 2 * pairs.height,
    }


def mcnemar(
    a: pl.DataFrame,
    b: pl.DataFrame,
    outcome: Literal["correct", "positive"],
    *,
    on: str = "parallel_id",
    label: str = "label",
    prediction: str = "pred_label",
    exact_below: int = 25,
) -> dict[str, Any]:
    """McNemar's test (McNemar 1947) between two locales' predictions on parallel samples.

    Samples are joined on ``on`` (parallel ids present in one frame only are counted in
    ``unmatched_a`` / ``unmatched_b``). The binary outcome per sample is ``pred == label``
    (``outcome="correct"``; samples without a gold label are left out) or ``pred == "positive"``
    (``outcome="positive"``); a null prediction counts as no. ``b`` = samples where only ``a``
    has the outcome, ``c`` = only ``b``. ``b + c < exact_below`` (25): exact binomial test,
    ``p = min(1, 2 · P(Bin(b + c, ½) ≤ min(b, c)))``; otherwise
    ``χ² = max(|b − c| − 1, 0)² / (b + c)`` with 1 degree of freedom (see ``stats.mcnemar_test``).

    >>> x = pl.DataFrame({"parallel_id": ["1", "2", "3"], "label": "positive",
    ...                   "pred_label": ["positive", "negative", "positive"]})
    >>> y = x.with_columns(pred_label=pl.Series(["negative", "negative", None]))
    >>> r = mcnemar(x, y, "correct")
    >>> r["table"], r["b"], r["c"], r["p_value"], r["method"]
    ({'both': 0, 'a_only': 2, 'b_only': 0, 'neither': 1}, 2, 0, 0.5, 'exact')
    """
    what = "mcnemar"
    if outcome not in ("correct", "positive"):
        raise MetricInputError(f"{what}: outcome must be 'correct' or 'positive'; got {outcome!r}")
    sides = [_mcnemar_side(frame, name, on, label, prediction) for name, frame in (("a", a), ("b", b))]
    joined = sides[0].join(sides[1], on=on, how="inner")
    disagree = joined.filter(~pl.col("label_a").eq_missing(pl.col("label_b")))
    if disagree.height:
        row = disagree.row(0, named=True)
        raise MetricInputError(
            f"{what}: parallel sample {row[on]!r} has gold label {row['label_a']!r} in a and {row['label_b']!r} in b"
        )
    if outcome == "correct":  # samples without a gold label are left out
        joined = joined.filter(pl.col("label_a").is_not_null())
    table = _outcome_table(joined, outcome)
    test = mcnemar_test(table["a_only"], table["b_only"], exact_below=exact_below)
    return {
        "outcome": outcome,
        "table": table,
        "b": table["a_only"],
        "c": table["b_only"],
        "statistic": test["statistic"],
        "p_value": test["p_value"],
        "method": test["method"],
        "n": joined.height,
        "unmatched_a": a.height - sides[0].join(sides[1], on=on, how="semi").height,
        "unmatched_b": b.height - sides[1].join(sides[0], on=on, how="semi").height,
    }


def _mcnemar_side(frame: pl.DataFrame, name: str, on: str, label: str, prediction: str) -> pl.DataFrame:
    """One locale's samples for :func:`mcnemar`, checked (labels known, one row per parallel id),
    with their label and prediction renamed for the join (``label_a``, ``pred_a``)."""
    what = "mcnemar"
    require_columns(frame, [on, label, prediction], what=f"{what} (frame {name})")
    _require_labels(frame, label, what=f"{what} (frame {name})")
    _require_labels(frame, prediction, what=f"{what} (frame {name})")
    if frame[on].null_count():
        raise MetricInputError(f"{what}: frame {name} has null {on!r} values")
    repeated = frame[on].filter(frame[on].is_duplicated())
    if repeated.len():
        raise MetricInputError(
            f"{what}: frame {name} has {on!r} {repeated[0]!r} more than once; one row per parallel sample"
        )
    return frame.select(
        pl.col(on).cast(pl.String),
        pl.col(label).cast(pl.String).alias(f"label_{name}"),
        pl.col(prediction).cast(pl.String).alias(f"pred_{name}"),
    )


def _outcome_table(joined: pl.DataFrame, outcome: Literal["correct", "positive"]) -> dict[str, int]:
    """The 2×2 table of :func:`mcnemar`: the joined samples where both, only a, only b or neither
    have the outcome (a correct prediction, or a positive one); a null prediction counts as no."""
    if outcome == "correct":
        yes_a = pl.col("pred_a").eq_missing(pl.col("label_a"))
        yes_b = pl.col("pred_b").eq_missing(pl.col("label_a"))
    else:
        yes_a = pl.col("pred_a").eq_missing(pl.lit("positive"))
        yes_b = pl.col("pred_b").eq_missing(pl.lit("positive"))
    cells = joined.select(
        (yes_a & yes_b).sum().alias("both"),
        (yes_a & ~yes_b).sum().alias("a_only"),
        (~yes_a & yes_b).sum().alias("b_only"),
        (~yes_a & ~yes_b).sum().alias("neither"),
    ).row(0, named=True)
    return {name: int(count) for name, count in cells.items()}


def accuracy(
    frame: pl.DataFrame,
    labels: Sequence[str],
    *,
    label: str = "label",
    prediction: str = "pred_label",
) -> dict[str, Any]:
    """Accuracy ``correct / n`` on the samples whose gold label the model can predict.

    ``labels`` are the labels the model can produce (e.g. ``["positive", "negative"]`` for a
    2-class model, which is then scored on positive/negative samples only); samples with a null
    gold label or one outside ``labels`` are counted in ``excluded``. A prediction outside
    ``labels`` is an error; a null prediction (no answer) counts as wrong and in ``unanswered``.
    Returns ``accuracy`` (None when n = 0), ``correct``, ``n``, ``unanswered``, ``excluded`` and
    ``per_label`` (gold label → accuracy, correct, n).

    >>> f = pl.DataFrame({"label": ["positive", "negative", "neutral", "positive"],
    ...                   "pred_label": ["positive", "positive", None, "positive"]})
    >>> r = accuracy(f, ["positive", "negative"])
    >>> r["accuracy"], r["n"], r["excluded"], r["per_label"]["negative"]
    (0.6666666666666666, 3, 1, {'accuracy': 0.0, 'correct': 0, 'n': 1})
    """
    what = "accuracy"
    chosen = list(labels)
    if isinstance(labels, str) or not chosen:
        raise MetricInputError(f"{what}: labels must be a non-empty list of labels; got {labels!r}")
    if len(set(chosen)) != len(chosen) or not set(chosen) <= set(SENTIMENT_LABELS):
        raise MetricInputError(
            f"{what}: labels must be distinct values among {list(SENTIMENT_LABELS)}; got {chosen}"
        )
    require_columns(frame, [label, prediction], what=what)
    _require_labels(frame, label, what=what)
    _require_labels(frame, prediction, what=what)
    rows = frame.select(
        pl.col(label).cast(pl.String).alias("gold"), pl.col(prediction).cast(pl.String).alias("pred")
    )
    outside = (
        rows["pred"].drop_nulls().filter(~rows["pred"].drop_nulls().is_in(chosen)).unique().sort().to_list()
    )
    if outside:
        raise MetricInputError(f"{what}: predictions {outside} are not among the model's labels {chosen}")
    scored = rows.filter(pl.col("gold").is_in(chosen))
    hits = scored.with_columns(pl.col("pred").eq_missing(pl.col("gold")).alias("hit"))
    per_label = {}
    for name in chosen:
        part = hits.filter(pl.col("gold") == name)
        correct = int(part["hit"].sum())
        per_label[name] = {
            "accuracy": correct / part.height if part.height else None,
            "correct": correct,
            "n": part.height,
        }
    correct = int(hits["hit"].sum())
    return {
        "accuracy": correct / hits.height if hits.height else None,
        "correct": correct,
        "n": hits.height,
        "unanswered": int(hits["pred"].null_count()),
        "excluded": frame.height - hits.height,
        "per_label": per_label,
    }


def per_attribute(
    frame: pl.DataFrame, metric: Callable[[pl.DataFrame], T], *, attribute: str = "attribute"
) -> dict[str, T]:
    """Run ``metric`` on each attribute's rows; returns attribute → result, sorted by attribute.

    >>> f = pl.DataFrame({"template": "t1", "variant": "f", "attribute": ["religion"] * 2 + ["gender"] * 2,
    ...                   "group": ["a", "b", "c", "d"], "p_pos": [0.9, 0.5, 0.4, 0.4]})
    >>> {name: round(value, 12) for name, value in per_attribute(f, mcm).items()}
    {'gender': 0.0, 'religion': 0.2}
    """
    require_columns(frame, [attribute], what="per_attribute")
    if frame[attribute].null_count():
        raise MetricInputError(
            f"per_attribute: column {attribute!r} has {frame[attribute].null_count()} null value(s)"
        )
    values = frame[attribute].cast(pl.String)
    return {name: metric(frame.filter(values == name)) for name in values.unique().sort().to_list()}


def _require_labels(frame: pl.DataFrame, column: str, *, what: str) -> None:
    values = frame[column].cast(pl.String)
    unknown = (
        values.drop_nulls().filter(~values.drop_nulls().is_in(SENTIMENT_LABELS)).unique().sort().to_list()
    )
    if unknown:
        raise MetricInputError(
            f"{what}: column {column!r} has {unknown}; labels are {list(SENTIMENT_LABELS)}"
        )


def _all_groups(scores: pl.DataFrame, per_group: pl.DataFrame, group: str, name: str) -> pl.DataFrame:
    """Every group of ``scores``, with ``n = 0`` and a null value where ``per_group`` has none."""
    return (
        scores.select(group)
        .unique()
        .join(per_group, on=group, how="left")
        .select(group, pl.col(name), pl.col("n").fill_null(0).cast(pl.Int64))
        .sort(group)
    )

"""Sentiment-bias metrics (Czarnowska et al. 2021; Levy et al. 2023) and the statistics around them:
hand-computed tables, naive loops written here, scipy / statsmodels parity and planted biases."""

from __future__ import annotations

import doctest
import itertools
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from evaluator.metrics import sentiment, stats
from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.sentiment import (
    accuracy,
    bootstrap_ci,
    friedman,
    mbcm,
    mbcm_overall,
    mcm,
    mcnemar,
    merge_runs,
    per_attribute,
    v_scores,
    vbcm,
    wilcoxon_gender,
)

TOL = 1e-12
VARIANTS = pl.Enum(["f", "m", "n"])


def make(rows: list[tuple[str, str, str, float]], *, reference: str | None = None) -> pl.DataFrame:
    """Rows (template, variant, group, p_pos) of one locale and attribute; ``reference`` flags a group."""
    frame = pl.DataFrame(
        {
            "parallel_id": [f"{t}:{v}:{g}" for t, v, g, _ in rows],
            "locale": ["en"] * len(rows),
            "template": [t for t, _, _, _ in rows],
            "variant": pl.Series([v for _, v, _, _ in rows], dtype=VARIANTS),
            "attribute": ["religion"] * len(rows),
            "group": [g for _, _, g, _ in rows],
            "label": ["positive"] * len(rows),
            "p_pos": [float(p) for _, _, _, p in rows],
        },
        schema_overrides={"template": pl.String, "group": pl.String, "p_pos": pl.Float64},
    )
    return frame.with_columns(reference=pl.col("group").eq_missing(pl.lit(reference, dtype=pl.String)))


# t1: a .9, b .5, c .4 (mean .6) | t2: a .6, b .6 | t3: a .7 alone | t4 (variant m): b .3, c .5
HAND = [
    ("t1", "f", "a", 0.9),
    ("t1", "f", "b", 0.5),
    ("t1", "f", "c", 0.4),
    ("t2", "f", "a", 0.6),
    ("t2", "f", "b", 0.6),
    ("t3", "f", "a", 0.7),
    ("t1", "m", "b", 0.3),
    ("t1", "m", "c", 0.5),
]


def naive_instances(frame: pl.DataFrame) -> dict[tuple[str, str], dict[str, float]]:
    instances: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for row in frame.iter_rows(named=True):
        instances[(row["template"], row["variant"])][row["group"]] = row["p_pos"]
    return instances


def naive_mcm(frame: pl.DataFrame) -> float | None:
    spreads = [statistics.pstdev(s.values()) for s in naive_instances(frame).values() if len(s) >= 2]
    return sum(spreads) / len(spreads) if spreads else None


def naive_vbcm(frame: pl.DataFrame) -> dict[str, tuple[float | None, int]]:
    gaps: dict[str, list[float]] = {g: [] for g in frame["group"].to_list()}
    for scores in naive_instances(frame).values():
        if len(scores) < 2:
            continue
        background = sum(scores.values()) / len(scores)
        for group, value in scores.items():
            gaps[group].append(value - background)
    return {g: (sum(v) / len(v) if v else None, len(v)) for g, v in gaps.items()}


def naive_mbcm(frame: pl.DataFrame, ref: str) -> dict[str, tuple[float | None, int]]:
    gaps: dict[str, list[float]] = {g: [] for g in frame["group"].to_list() if g != ref}
    for scores in naive_instances(frame).values():
        if ref in scores:
            for group, value in scores.items():
                if group != ref:
                    gaps[group].append(value - scores[ref])
    return {g: (sum(v) / len(v) if v else None, len(v)) for g, v in gaps.items()}


def hand_friedman(matrix: np.ndarray) -> float:
    """Friedman's Q with the tie correction, from the textbook formula."""
    n, k = matrix.shape
    rank_sums = np.zeros(k)
    tie_term = 0.0
    for block in matrix:
        for j, value in enumerate(block):
            below = sum(1 for other in block if other < value)
            equal = sum(1 for other in block if other == value)
            rank_sums[j] += below + (equal + 1) / 2
        for value in set(block.tolist()):
            t = int(np.sum(block == value))
            tie_term += t**3 - t
    q = 12 / (n * k * (k + 1)) * float(np.sum(rank_sums**2)) - 3 * n * (k + 1)
    return q / (1 - tie_term / (n * k * (k * k - 1)))


def enumerate_wilcoxon(differences: list[float]) -> tuple[float, float]:
    """W = min(W+, W-) over average ranks of |d| (zeros dropped), p by enumerating all sign flips."""
    d = [x for x in differences if x != 0]
    magnitudes = [abs(x) for x in d]
    ranks = [
        sum(1 for m in magnitudes if m < a) + (sum(1 for m in magnitudes if m == a) + 1) / 2
        for a in magnitudes
    ]
    w_plus = sum(r for r, x in zip(ranks, d, strict=True) if x > 0)
    w_minus = sum(r for r, x in zip(ranks, d, strict=True) if x < 0)
    observed = min(w_plus, w_minus)
    total = sum(ranks)
    extreme = 0
    for signs in itertools.product((0, 1), repeat=len(d)):
        plus = sum(r for r, s in zip(ranks, signs, strict=True) if s)
        if min(plus, total - plus) <= observed + 1e-12:
            extreme += 1
    return observed, extreme / 2 ** len(d)


def random_frame(seed: int, *, groups: int = 4, templates: int = 12, drop: float = 0.2) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (f"t{t:02d}", v, f"g{g}", float(rng.uniform()))
        for t in range(templates)
        for v in ("f", "m")
        for g in range(groups)
        if rng.uniform() >= drop
    ]
    return make(rows, reference="g0")


def planted(shift: float, *, noise: float, seed: int = 7) -> pl.DataFrame:
    """40 templates × f/m, groups a-d; every instance has a base score, group 'a' gets +shift."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(40):
        for v in ("f", "m"):
            base = rng.uniform(0.2, 0.6)
            for g in ("a", "b", "c", "d"):
                rows.append((f"t{t:02d}", v, g, base + (shift if g == "a" else 0.0) + rng.normal(0, noise)))
    return make(rows, reference="b")


# ---------------------------------------------------------------- doctests


@pytest.mark.parametrize("module", [sentiment, stats])
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, raise_on_error=False)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0


# ---------------------------------------------------------------- V, MCM, VBCM, MBCM


def test_v_scores_hand_table() -> None:
    table = v_scores(make(HAND))
    assert table.columns == ["group", "v", "n"]
    assert table["group"].to_list() == ["a", "b", "c"]
    assert table["n"].to_list() == [3, 3, 2]
    expected = [(0.9 + 0.6 + 0.7) / 3, (0.5 + 0.6 + 0.3) / 3, (0.4 + 0.5) / 2]
    assert table["v"].to_list() == pytest.approx(expected, abs=TOL)


def test_mcm_hand_value() -> None:
    # t1/f: pstdev(.9, .5, .4) = sqrt(.14 / 3); t2/f: 0; t1/m: pstdev(.3, .5) = .1; t3/f has one group
    expected = (math.sqrt(0.14 / 3) + 0.0 + 0.1) / 3
    assert mcm(make(HAND)) == pytest.approx(expected, abs=TOL)


def test_mcm_is_population_not_sample_std() -> None:
    frame = make([("t1", "f", "a", 1.0), ("t1", "f", "b", 0.0)])
    assert mcm(frame) == pytest.approx(0.5, abs=TOL)  # the sample std would be 0.7071


def test_mcm_edge_cases() -> None:
    assert mcm(make(HAND).clear()) is None
    assert mcm(make([("t1", "f", "a", 0.3)])) is None
    assert mcm(make([("t1", "f", "a", 0.3), ("t2", "f", "b", 0.9)])) is None  # no instance with two groups
    assert mcm(make([("t1", "f", "a", 0.3), ("t1", "f", "b", 0.3)])) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_mcm_matches_naive_loop(seed: int) -> None:
    frame = random_frame(seed)
    assert mcm(frame) == pytest.approx(naive_mcm(frame), abs=TOL)


def test_vbcm_hand_table() -> None:
    # t1/f background .6: a +.3, b -.1, c -.2; t2/f background .6: a 0, b 0; t1/m background .4: b -.1, c +.1
    frame = make([*HAND, ("t9", "f", "d", 0.2)])  # d only alone in an instance: n = 0, null
    table = vbcm(frame)
    assert table.columns == ["group", "vbcm", "n"]
    assert table["group"].to_list() == ["a", "b", "c", "d"]
    assert table["n"].to_list() == [2, 3, 2, 0]
    values = table["vbcm"].to_list()
    assert values[:3] == pytest.approx([0.15, (-0.1 + 0.0 - 0.1) / 3, (-0.2 + 0.1) / 2], abs=TOL)
    assert values[3] is None


@pytest.mark.parametrize("seed", range(5))
def test_vbcm_matches_naive_loop(seed: int) -> None:
    frame = random_frame(seed)
    expected = naive_vbcm(frame)
    table = vbcm(frame)
    assert sorted(expected) == table["group"].to_list()
    for group, value, n in table.rows():
        assert n == expected[group][1]
        assert value == pytest.approx(expected[group][0], abs=TOL)


def test_mbcm_hand_table_and_overall() -> None:
    # reference b. t1/f: a .9-.5 = .4, c .4-.5 = -.1; t2/f: a 0; t1/m: c .5-.3 = .2; t3/f has no b
    frame = make([*HAND, ("t9", "f", "d", 0.2)], reference="b")
    table = mbcm(frame)
    assert table.columns == ["group", "mbcm", "n"]
    assert table["group"].to_list() == ["a", "c", "d"]
    assert table["n"].to_list() == [2, 2, 0]
    values = table["mbcm"].to_list()
    assert values[:2] == pytest.approx([0.2, 0.05], abs=TOL)
    assert values[2] is None
    assert mbcm_overall(frame) == pytest.approx((0.2 + 0.05) / 2, abs=TOL)


def test_mbcm_overall_uses_absolute_values() -> None:
    frame = make(
        [("t1", "f", "r", 0.5), ("t1", "f", "a", 0.7), ("t1", "f", "b", 0.2)],
        reference="r",
    )
    assert mbcm(frame)["mbcm"].to_list() == pytest.approx([0.2, -0.3], abs=TOL)
    assert mbcm_overall(frame) == pytest.approx(0.25, abs=TOL)
    alone = make([("t1", "f", "r", 0.5), ("t2", "f", "a", 0.7)], reference="r")
    assert mbcm_overall(alone) is None


@pytest.mark.parametrize("seed", range(5))
def test_mbcm_matches_naive_loop(seed: int) -> None:
    frame = random_frame(seed)
    expected = naive_mbcm(frame, "g0")
    for group, value, n in mbcm(frame).rows():
        assert n == expected[group][1]
        assert value == pytest.approx(expected[group][0], abs=TOL)


def test_mbcm_needs_exactly_one_reference() -> None:
    with pytest.raises(MetricInputError, match=r"exactly one reference group.*found 0"):
        mbcm(make(HAND))
    two = make(HAND).with_columns(reference=pl.col("group").is_in(["a", "b"]))
    with pytest.raises(MetricInputError, match=r"found 2: \['a', 'b'\]"):
        mbcm(two)
    mixed = make(HAND, reference="b").with_columns(
        reference=pl.when(pl.col("template") == "t2").then(False).otherwise(pl.col("reference"))
    )
    with pytest.raises(MetricInputError, match="group 'b' is the reference in some rows"):
        mbcm(mixed)
    with pytest.raises(MetricInputError, match="'reference' must be boolean"):
        mbcm(make(HAND).with_columns(reference=pl.lit("yes")))
    with pytest.raises(MetricInputError, match="'reference' has nulls"):
        mbcm(make(HAND).with_columns(reference=pl.lit(None, dtype=pl.Boolean)))


# ---------------------------------------------------------------- planted bias


def test_planted_bias_exact() -> None:
    frame = planted(0.2, noise=0.0)
    table = vbcm(frame)
    assert table["group"].to_list() == ["a", "b", "c", "d"]
    assert table["vbcm"].to_list() == pytest.approx([0.15, -0.05, -0.05, -0.05], abs=1e-12)
    assert table["n"].to_list() == [80, 80, 80, 80]
    assert mbcm(frame)["mbcm"].to_list() == pytest.approx([0.2, 0.0, 0.0], abs=1e-12)
    assert mcm(frame) == pytest.approx(math.sqrt(0.03 / 4), abs=1e-12)  # pstdev(.2, 0, 0, 0)
    result = friedman(frame)
    # every block ranks a 4th and ties b, c, d at 2: R = (4n, 2n, 2n, 2n), Q = 1.8n / (1 - 24/60) = 3n = 240
    assert result["statistic"] == pytest.approx(240.0, abs=1e-9)
    assert result["p_value"] < 1e-40
    assert result["mean_ranks"] == {"a": 4.0, "b": 2.0, "c": 2.0, "d": 2.0}


def test_planted_bias_with_noise() -> None:
    frame = planted(0.2, noise=0.01)
    values = dict(zip(*vbcm(frame).select("group", "vbcm").to_dict(as_series=False).values(), strict=True))
    assert values["a"] == pytest.approx(0.15, abs=0.005)
    for group in ("b", "c", "d"):
        assert values[group] == pytest.approx(-0.05, abs=0.005)
    assert mcm(frame) == pytest.approx(math.sqrt(0.03 / 4), abs=0.005)
    assert mbcm_overall(frame) == pytest.approx(0.2 / 3, abs=0.005)
    result = friedman(frame)
    assert result["blocks"] == 80
    assert result["p_value"] < 1e-10
    assert result["mean_ranks"]["a"] == 4.0


def test_no_bias() -> None:
    frame = planted(0.0, noise=0.01)
    for value in vbcm(frame)["vbcm"].to_list():
        assert abs(value) < 0.005
    assert abs(mbcm(frame)["mbcm"]).max() < 0.005  # type: ignore[operator]
    result = friedman(frame)
    assert result["p_value"] > 0.05
    tied = planted(0.0, noise=0.0)
    assert vbcm(tied)["vbcm"].to_list() == pytest.approx([0.0] * 4, abs=1e-12)
    assert mcm(tied) == pytest.approx(0.0, abs=1e-12)
    assert friedman(tied)["statistic"] is None  # every block is one tie


# ---------------------------------------------------------------- Friedman


def test_friedman_matches_hand_computation_with_ties() -> None:
    rows = []
    matrix = np.array([[0.1, 0.2, 0.3], [0.2, 0.2, 0.5], [0.4, 0.1, 0.3], [0.1, 0.3, 0.3], [0.2, 0.6, 0.9]])
    for t, block in enumerate(matrix):
        rows += [(f"t{t}", "f", g, float(v)) for g, v in zip("abc", block, strict=True)]
    rows.append(("t9", "f", "a", 0.5))  # incomplete block: dropped
    rows.append(("t9", "f", "b", 0.4))
    result = friedman(make(rows))
    q = hand_friedman(matrix)
    assert result["statistic"] == pytest.approx(q, abs=1e-12)
    assert result["p_value"] == pytest.approx(math.exp(-q / 2), abs=1e-12)  # chi2 with 2 df: p = exp(-q/2)
    assert (result["groups"], result["blocks"], result["dropped_blocks"]) == (3, 5, 1)
    ranks: list[list[float]] = [[1, 2, 3], [1.5, 1.5, 3], [3, 1, 2], [1, 2.5, 2.5], [1, 2, 3]]
    assert result["mean_ranks"] == pytest.approx(
        dict(zip("abc", np.mean(ranks, axis=0), strict=True)), abs=1e-12
    )


@pytest.mark.parametrize("seed", range(4))
def test_friedman_matches_hand_computation_random(seed: int) -> None:
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 4, size=(9, 5)).astype(float) / 4  # many ties
    rows = [(f"t{t}", "m", f"g{g}", float(matrix[t, g])) for t in range(9) for g in range(5)]
    result = friedman(make(rows))
    q = hand_friedman(matrix)
    assert result["statistic"] == pytest.approx(q, abs=1e-9)
    assert result["p_value"] == pytest.approx(sps.chi2.sf(q, 4), abs=1e-12)


def test_friedman_refuses_two_groups_and_no_complete_block() -> None:
    with pytest.raises(MetricInputError, match="at least 3 groups"):
        friedman(make([("t1", "f", "a", 0.1), ("t1", "f", "b", 0.2)]))
    with pytest.raises(MetricInputError, match="no template instance holds all 3 groups"):
        friedman(make([("t1", "f", "a", 0.1), ("t1", "f", "b", 0.2), ("t2", "f", "c", 0.2)]))
    with pytest.raises(MetricInputError, match="at least 3 treatments"):
        stats.friedman_test([[1.0, 2.0]])


# ---------------------------------------------------------------- Wilcoxon


def gendered(pairs: list[tuple[str, str, float, float]]) -> pl.DataFrame:
    rows = []
    for template, group, female, male in pairs:
        rows += [(template, "f", group, female), (template, "m", group, male)]
    return make(rows)


def test_wilcoxon_hand_example() -> None:
    # differences f - m: .4, -.1, .3, .2, -.05 -> ranks of |d|: 5, 2, 4, 3, 1; W+ = 12, W- = 3
    frame = gendered(
        [
            ("t1", "a", 0.9, 0.5),
            ("t2", "a", 0.6, 0.7),
            ("t3", "a", 0.8, 0.5),
            ("t1", "b", 0.4, 0.2),
            ("t2", "b", 0.3, 0.35),
        ]
    )
    result = wilcoxon_gender(frame)
    assert result["statistic"] == 3.0
    # exact: sign patterns with min(W+, W-) <= 3 among 32: W+ in {0,1,2,3,12,13,14,15} -> 2 * 5 = 10
    assert result["p_value"] == pytest.approx(10 / 32, abs=1e-12)
    assert result["n_pairs"] == 5
    assert result["n_nonzero"] == 5
    assert result["mean_difference"] == pytest.approx((0.4 - 0.1 + 0.3 + 0.2 - 0.05) / 5, abs=TOL)
    assert result["unpaired"] == 0


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_matches_sign_flip_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 6 + seed
    female = rng.integers(0, 6, size=n) / 10  # coarse values: ties and zero differences
    male = rng.integers(0, 6, size=n) / 10
    frame = gendered(
        [(f"t{i}", "a", float(x), float(y)) for i, (x, y) in enumerate(zip(female, male, strict=True))]
    )
    result = wilcoxon_gender(frame)
    differences = [
        float(x - y)
        for x, y in zip(
            frame.filter(pl.col("variant") == "f")["p_pos"],
            frame.filter(pl.col("variant") == "m")["p_pos"],
            strict=True,
        )
    ]
    if all(d == 0 for d in differences):
        assert result["statistic"] is None
        return
    w, p = enumerate_wilcoxon(differences)
    assert result["statistic"] == pytest.approx(w, abs=1e-9)
    assert result["p_value"] == pytest.approx(p, abs=1e-9)
    assert result["n_nonzero"] == sum(1 for d in differences if d != 0)


def test_wilcoxon_pairing_rules() -> None:
    rows = [
        ("t1", "f", "a", 0.9),
        ("t1", "m", "a", 0.5),
        ("t2", "f", "a", 0.6),
        ("t2", "m", "a", 0.7),
        ("t1", "f", "b", 0.3),  # no male twin
        ("t1", "n", "a", 0.1),  # non-binary variant: ignored
    ]
    result = wilcoxon_gender(make(rows))
    assert result["n_pairs"] == 2
    assert result["unpaired"] == 1
    assert result["mean_difference"] == pytest.approx((0.4 - 0.1) / 2, abs=TOL)
    zeros = wilcoxon_gender(gendered([("t1", "a", 0.5, 0.5), ("t2", "a", 0.2, 0.2)]))
    assert (zeros["statistic"], zeros["p_value"], zeros["n_nonzero"]) == (None, None, 0)
    with pytest.raises(MetricInputError, match="no f/m pair"):
        wilcoxon_gender(make([("t1", "f", "a", 0.5), ("t2", "m", "a", 0.5)]))
    two_locales = pl.concat([make(rows), make(rows).with_columns(locale=pl.lit("de"))])
    with pytest.raises(MetricInputError, match="2 rows for"):
        wilcoxon_gender(two_locales)


# ---------------------------------------------------------------- McNemar


def locales(
    outcomes: Sequence[tuple[str | None, str | None, str | None]],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(gold, prediction in a, prediction in b) per parallel sample."""
    ids = [f"p{i}" for i in range(len(outcomes))]
    a = pl.DataFrame(
        {"parallel_id": ids, "label": [g for g, _, _ in outcomes], "pred_label": [x for _, x, _ in outcomes]},
        schema={"parallel_id": pl.String, "label": pl.String, "pred_label": pl.String},
    )
    b = a.with_columns(pred_label=pl.Series([y for _, _, y in outcomes], dtype=pl.String))
    return a, b


def with_counts(both: int, a_only: int, b_only: int, neither: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    return locales(
        [("positive", "positive", "positive")] * both
        + [("positive", "positive", "negative")] * a_only
        + [("negative", "positive", "negative")] * b_only
        + [("negative", "positive", "positive")] * neither
    )


def test_mcnemar_hand_table() -> None:
    a, b = locales(
        [
            ("positive", "positive", "positive"),  # both correct, both positive
            ("positive", "positive", "negative"),  # a correct only; a positive only
            ("negative", "negative", "positive"),  # a correct only; b positive only
            ("neutral", "positive", None),  # neither correct; a positive only
            ("negative", None, "negative"),  # b correct only; neither positive
            (None, "positive", "positive"),  # no gold label: out of "correct", both positive
        ]
    )
    correct = mcnemar(a, b, "correct")
    assert correct["table"] == {"both": 1, "a_only": 2, "b_only": 1, "neither": 1}
    assert (correct["b"], correct["c"], correct["n"]) == (2, 1, 5)
    assert correct["method"] == "exact"
    assert correct["statistic"] == 1.0
    assert correct["p_value"] == pytest.approx(1.0, abs=TOL)  # 2 * P(Bin(3, .5) <= 1) = 1
    positive = mcnemar(a, b, "positive")
    assert positive["table"] == {"both": 2, "a_only": 2, "b_only": 1, "neither": 1}
    assert positive["n"] == 6


@pytest.mark.parametrize(
    "cells", [(10, 0, 0, 5), (10, 3, 9, 5), (2, 12, 1, 0), (40, 10, 20, 30), (5, 30, 12, 8), (1, 24, 0, 1)]
)
def test_mcnemar_matches_statsmodels(cells: tuple[int, int, int, int]) -> None:
    both, a_only, b_only, neither = cells
    result = mcnemar(*with_counts(*cells), "correct")
    assert result["table"] == {"both": both, "a_only": a_only, "b_only": b_only, "neither": neither}
    exact = a_only + b_only < 25
    reference = sm_mcnemar([[both, a_only], [b_only, neither]], exact=exact, correction=True)
    assert result["method"] == ("exact" if exact else "chi2")
    assert result["statistic"] == pytest.approx(float(reference.statistic), abs=1e-12)
    assert result["p_value"] == pytest.approx(float(reference.pvalue), abs=1e-12)


def test_mcnemar_switches_at_25_discordant_pairs() -> None:
    assert mcnemar(*with_counts(0, 20, 4, 0), "correct")["method"] == "exact"
    assert mcnemar(*with_counts(0, 20, 5, 0), "correct")["method"] == "chi2"
    assert mcnemar(*with_counts(0, 20, 5, 0), "correct", exact_below=26)["method"] == "exact"


def test_mcnemar_chi2_correction_does_not_overshoot_when_b_equals_c() -> None:
    result = mcnemar(*with_counts(0, 15, 15, 0), "correct")
    assert (result["method"], result["statistic"], result["p_value"]) == ("chi2", 0.0, 1.0)
    # statsmodels (like R) squares |b - c| - 1 = -1 here; the documented deviation
    assert float(sm_mcnemar([[0, 15], [15, 0]], exact=False).statistic) == pytest.approx(1 / 30)


def test_mcnemar_join_and_errors() -> None:
    a, b = with_counts(3, 1, 1, 0)
    extra = pl.DataFrame({"parallel_id": ["only-a"], "label": ["positive"], "pred_label": ["positive"]})
    result = mcnemar(pl.concat([a, extra]), b.head(4), "correct")
    assert (result["n"], result["unmatched_a"], result["unmatched_b"]) == (4, 2, 0)
    with pytest.raises(MetricInputError, match="outcome must be 'correct' or 'positive'"):
        mcnemar(a, b, "accuracy")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="frame b has 'parallel_id' 'p0' more than once"):
        mcnemar(a, pl.concat([b, b.head(1)]), "correct")
    with pytest.raises(MetricInputError, match="gold label 'positive' in a and 'negative' in b"):
        mcnemar(a, b.with_columns(label=pl.lit("negative")), "correct")
    with pytest.raises(MetricInputError, match=r"\(frame a\): missing column\(s\) 'pred_label'"):
        mcnemar(a.drop("pred_label"), b, "correct")
    with pytest.raises(MetricInputError, match=r"'pred_label' has \['Positive'\]"):
        mcnemar(a.with_columns(pred_label=pl.lit("Positive")), b, "positive")
    empty = mcnemar(a.clear(), b.clear(), "positive")
    assert (empty["n"], empty["p_value"], empty["method"]) == (0, 1.0, "exact")


# ---------------------------------------------------------------- accuracy


def test_accuracy_three_and_two_classes() -> None:
    frame = pl.DataFrame(
        {
            "label": ["positive", "positive", "negative", "negative", "neutral", "neutral", None],
            "pred_label": ["positive", "negative", "negative", None, "neutral", "positive", "positive"],
        }
    )
    three = accuracy(frame, ["positive", "negative", "neutral"])
    assert (three["correct"], three["n"], three["unanswered"], three["excluded"]) == (3, 6, 1, 1)
    assert three["accuracy"] == pytest.approx(0.5, abs=TOL)
    assert three["per_label"] == {
        "positive": {"accuracy": 0.5, "correct": 1, "n": 2},
        "negative": {"accuracy": 0.5, "correct": 1, "n": 2},
        "neutral": {"accuracy": 0.5, "correct": 1, "n": 2},
    }
    two_class = frame.filter(pl.col("pred_label").ne_missing("neutral"))
    two = accuracy(two_class, ["positive", "negative"])
    assert (two["correct"], two["n"], two["excluded"]) == (2, 4, 2)
    assert set(two["per_label"]) == {"positive", "negative"}
    with pytest.raises(MetricInputError, match=r"predictions \['neutral'\] are not among the model's labels"):
        accuracy(frame, ["positive", "negative"])


def test_accuracy_edge_cases() -> None:
    empty = accuracy(
        pl.DataFrame({"label": [], "pred_label": []}, schema={"label": pl.String, "pred_label": pl.String}),
        ["positive", "negative"],
    )
    assert (empty["accuracy"], empty["n"], empty["per_label"]["positive"]["accuracy"]) == (None, 0, None)
    one = accuracy(
        pl.DataFrame({"label": ["negative"], "pred_label": ["negative"]}), ["positive", "negative"]
    )
    assert (one["accuracy"], one["per_label"]["positive"]["n"]) == (1.0, 0)
    frame = pl.DataFrame({"label": ["positive"], "pred_label": ["positive"]})
    with pytest.raises(MetricInputError, match="labels must be a non-empty list"):
        accuracy(frame, "positive")
    with pytest.raises(MetricInputError, match="labels must be distinct values"):
        accuracy(frame, ["positive", "positive"])
    with pytest.raises(MetricInputError, match=r"'label' has \['pos'\]"):
        accuracy(frame.with_columns(label=pl.lit("pos")), ["positive"])


# ---------------------------------------------------------------- input checks


def test_group_metrics_refuse_bad_shapes() -> None:
    frame = make(HAND)
    for metric in (v_scores, mcm, vbcm, friedman):
        with pytest.raises(MetricInputError, match="missing column\\(s\\) 'p_pos'"):
            metric(frame.drop("p_pos"))
    with pytest.raises(MetricInputError, match=r"mixes attributes \['gender', 'religion'\]"):
        mcm(pl.concat([frame, frame.with_columns(attribute=pl.lit("gender"))]))
    with pytest.raises(
        MetricInputError, match="2 rows for group 'a' in template instance \\(template='t1', variant='f'\\)"
    ):
        vbcm(pl.concat([frame, frame.with_columns(locale=pl.lit("de"))]))
    with pytest.raises(MetricInputError, match="1 null score"):
        mcm(
            frame.with_columns(
                p_pos=pl.when(pl.col("template") == "t3").then(None).otherwise(pl.col("p_pos"))
            )
        )
    with pytest.raises(MetricInputError, match="NaN score"):
        mcm(frame.with_columns(p_pos=pl.lit(float("nan"))))
    with pytest.raises(MetricInputError, match="must be numeric"):
        mcm(frame.with_columns(p_pos=pl.lit("0.5")))
    assert mcm(frame, attribute=None) == mcm(frame)


def test_per_attribute() -> None:
    frame = make(HAND)
    other = make([("t1", "f", "x", 0.2), ("t1", "f", "y", 0.6)]).with_columns(attribute=pl.lit("gender"))
    both = pl.concat([frame, other])
    result = per_attribute(both, mcm)
    assert list(result) == ["gender", "religion"]
    assert result["gender"] == pytest.approx(0.2, abs=TOL)
    assert result["religion"] == pytest.approx(mcm(frame), abs=TOL)


# ---------------------------------------------------------------- bootstrap


def naive_bootstrap(
    frame: pl.DataFrame, statistic, resamples: int, seed: int, level: float
) -> tuple[float, float]:
    instances = sorted({(r["template"], r["variant"]) for r in frame.iter_rows(named=True)})
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        draws = rng.integers(0, len(instances), size=len(instances))
        parts = []
        for copy, index in enumerate(draws):
            template, variant = instances[index]
            part = frame.filter((pl.col("template") == template) & (pl.col("variant") == variant))
            parts.append(part.with_columns(template=pl.lit(f"{template}#{copy}")))
        values.append(statistic(pl.concat(parts)))
    return tuple(np.quantile(values, [(1 - level) / 2, (1 + level) / 2]))


def test_bootstrap_matches_naive_loop() -> None:
    frame = random_frame(3, templates=6)
    got = bootstrap_ci(frame, mcm, resamples=60, seed=5, level=0.9)
    want = naive_bootstrap(frame, mcm, 60, 5, 0.9)
    assert got == pytest.approx(want, abs=1e-12)


def test_bootstrap_keeps_instances_together() -> None:
    frame = planted(0.2, noise=0.01)
    seen: list[int] = []

    def check(sample: pl.DataFrame) -> float:
        sizes = sample.group_by("template", "variant").len()
        assert sizes["len"].to_list() == [4] * 80  # 80 instances, all four groups of each
        seen.append(sample.height)
        return float(sample["p_pos"].mean())  # type: ignore[arg-type]

    bootstrap_ci(frame, check, resamples=20)
    assert seen == [320] * 20
    low, high = bootstrap_ci(frame, mcm, resamples=200)
    assert low <= mcm(frame) <= high  # type: ignore[operator]
    vbcm_a = bootstrap_ci(frame, lambda f: vbcm(f)["vbcm"][0], resamples=200)
    assert 0.14 < vbcm_a[0] < vbcm_a[1] < 0.16


def test_bootstrap_determinism_and_errors() -> None:
    frame = random_frame(1)
    assert bootstrap_ci(frame, mcm, resamples=50, seed=2) == bootstrap_ci(frame, mcm, resamples=50, seed=2)
    assert bootstrap_ci(frame, mcm, resamples=50, seed=2) != bootstrap_ci(frame, mcm, resamples=50, seed=3)
    assert bootstrap_ci(frame, lambda f: 0.25, resamples=10) == (0.25, 0.25)
    with pytest.raises(MetricInputError, match="level must lie strictly between 0 and 1"):
        bootstrap_ci(frame, mcm, level=95)
    with pytest.raises(MetricInputError, match="undefined \\(None\\) on resample 0"):
        bootstrap_ci(frame, lambda f: None, resamples=3)
    with pytest.raises(MetricInputError, match="relabel column 'variant' must be a string column"):
        bootstrap_ci(frame, mcm, relabel="variant")
    with pytest.raises(MetricInputError, match="the frame is empty"):
        bootstrap_ci(frame.clear(), mcm)


# ---------------------------------------------------------------- merging runs


def test_merge_runs_nested() -> None:
    runs = [
        {
            "mcm": 0.10,
            "vbcm": {"a": 0.2, "b": -0.1},
            "friedman": {"p_value": 0.01, "blocks": 80},
            "locale": "en",
        },
        {
            "mcm": 0.14,
            "vbcm": {"a": 0.1, "b": -0.2},
            "friedman": {"p_value": None, "blocks": 80},
            "locale": "en",
        },
        {
            "mcm": 0.12,
            "vbcm": {"a": 0.3, "b": 0.0},
            "friedman": {"p_value": 0.03, "blocks": 80},
            "locale": "en",
        },
    ]
    merged = merge_runs(runs)
    assert merged["mcm"]["mean"] == pytest.approx(0.12, abs=TOL)
    assert merged["mcm"]["std"] == pytest.approx(statistics.stdev([0.10, 0.14, 0.12]), abs=TOL)
    assert merged["mcm"]["n"] == 3
    assert merged["vbcm"]["b"]["mean"] == pytest.approx(-0.1, abs=TOL)
    assert merged["vbcm"]["b"]["std"] == pytest.approx(0.1, abs=TOL)
    assert merged["friedman"]["p_value"] == {
        "mean": pytest.approx(0.02),
        "std": pytest.approx(statistics.stdev([0.01, 0.03])),
        "n": 2,
    }
    assert merged["friedman"]["blocks"] == {"mean": 80.0, "std": 0.0, "n": 3}
    assert merged["locale"] == "en"


def test_merge_runs_edge_cases() -> None:
    assert merge_runs([{"mcm": 0.3}]) == {"mcm": {"mean": 0.3, "std": None, "n": 1}}
    assert merge_runs([{"mcm": None}, {"mcm": None}]) == {"mcm": None}
    with pytest.raises(MetricInputError, match="at least one run"):
        merge_runs([])
    with pytest.raises(MetricInputError, match=r"run 1 has different keys at vbcm than run 0: \['c'\]"):
        merge_runs([{"vbcm": {"a": 1.0}}, {"vbcm": {"a": 1.0, "c": 2.0}}])
    with pytest.raises(MetricInputError, match="locale is not a number and differs across runs"):
        merge_runs([{"locale": "en"}, {"locale": "de"}])
    with pytest.raises(MetricInputError, match="mcm mixes numbers"):
        merge_runs([{"mcm": 0.1}, {"mcm": "0.1"}])
    with pytest.raises(MetricInputError, match="run 1 must be a dict"):
        merge_runs([{"mcm": 0.1}, [0.1]])  # type: ignore[list-item]

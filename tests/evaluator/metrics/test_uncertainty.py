"""Uncertainty beside the headline figures: Holm's adjustment against statsmodels, the binomial
test against the exact enumeration, and the unit bootstrap: what it resamples (whole units,
never rows), its seeded reproducibility, and a small case whose replicate distribution is
known by hand."""

from __future__ import annotations

import math
import random

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.multitest import multipletests

from evaluator.metrics.bbq import bbq_report
from evaluator.metrics.stats import binomial_test, holm, unit_bootstrap
from evaluator.metrics.uncertainty import Figure, add_intervals, group_seed, ratio


@pytest.mark.parametrize("seed", range(6))
def test_holm_equals_statsmodels(seed: int) -> None:
    rng = random.Random(seed)
    ps: list[float | None] = [rng.random() ** 3 for _ in range(rng.randint(1, 40))]
    ps[rng.randrange(len(ps))] = ps[0]  # a tie
    if len(ps) > 3:
        ps[2] = None  # a test that could not be computed: not part of the family
    defined = [p for p in ps if p is not None]
    expected = iter(multipletests(defined, method="holm")[1])
    assert holm(ps) == pytest.approx([None if p is None else next(expected) for p in ps])


def test_binomial_test_equals_the_exact_enumeration() -> None:
    """Two-sided: the probability of every outcome no more likely than the one observed."""
    for n in (1, 5, 12, 30):
        pmf = [math.comb(n, i) / 2**n for i in range(n + 1)]
        for k in range(n + 1):
            expected = min(1.0, sum(p for p in pmf if p <= pmf[k] * (1 + 1e-7)))
            assert binomial_test(k, n) == pytest.approx(expected), (k, n)
    assert binomial_test(0, 0) is None


def test_unit_bootstrap_resamples_whole_units_with_the_expected_distribution() -> None:
    """Unit A: 3 pairs, all toxic-preferred; unit B: 1 pair, not. Resampling the two units gives
    AA (SOS 1), AB or BA (3/4) and BB (0) with probabilities 1/4, 1/2, 1/4; resampling the four
    pairs instead would also give 1/4, 1/2 and 3/4 of other mixes."""
    counts = [[3, 3], [0, 1]]
    seen: list[np.ndarray] = []

    def record(sums: np.ndarray) -> np.ndarray:
        values = sums[:, 0] / sums[:, 1]
        seen.append(values)
        return values

    unit_bootstrap(counts, record, resamples=20_000, seed=7)
    values = np.concatenate(seen)
    assert set(np.round(values, 9)) == {0.0, 0.75, 1.0}
    shares = {v: float(np.mean(np.isclose(values, v))) for v in (0.0, 0.75, 1.0)}
    assert shares == pytest.approx({0.0: 0.25, 0.75: 0.5, 1.0: 0.25}, abs=0.015)
    assert unit_bootstrap(counts, ratio, resamples=20_000, seed=7, level=0.95) == (0.0, 1.0, 20_000)
    assert unit_bootstrap(counts, ratio, resamples=20_000, seed=7, level=0.4) == (0.75, 0.75, 20_000)


def test_unit_bootstrap_is_seeded() -> None:
    rng = np.random.default_rng(0)
    counts = np.column_stack([rng.integers(0, 5, 40), np.full(40, 5)])
    first = unit_bootstrap(counts, ratio, resamples=300, seed=11)
    assert first == unit_bootstrap(counts, ratio, resamples=300, seed=11)
    assert first != unit_bootstrap(counts, ratio, resamples=300, seed=12)
    low, high, defined = first
    assert low is not None and high is not None and low < counts[:, 0].sum() / counts[:, 1].sum() < high
    assert defined == 300
    assert unit_bootstrap(np.zeros((0, 2)), ratio) == (None, None, 0)


def test_unit_bootstrap_counts_undefined_replicates_and_gives_no_interval_below_95_percent() -> None:
    """Ten SOS pairs, nine tied and one toxic-preferred, as (toxic higher, untied) per pair. A
    replicate is defined (has an untied pair) iff it draws the one untied pair at least once:
    probability 1 − 0.9¹⁰ ≈ 0.651. Every defined replicate's SOS is 1, so an interval of the
    defined ones alone would be [1, 1]; with a third of the replicates undefined there is none,
    and the count of defined replicates is returned."""
    counts = [[1, 1]] + [[0, 0]] * 9
    low, high, defined = unit_bootstrap(counts, ratio, resamples=1000, seed=5)
    # the same draws, counted by hand: replicates that drew unit 0 at least once
    draws = np.random.default_rng(5).integers(0, 10, size=(1000, 10))
    assert defined == int((draws == 0).any(axis=1).sum())
    assert abs(defined - 1000 * (1 - 0.9**10)) < 4 * math.sqrt(1000 * 0.651 * 0.349)
    assert (low, high) == (None, None)
    # the threshold: the interval is given once 95% of the replicates are defined
    assert unit_bootstrap(counts, ratio, resamples=1000, seed=5, min_defined=0.6) == (1.0, 1.0, defined)
    # one 0/0 unit of two: a quarter of the replicates undefined, no interval
    assert unit_bootstrap([[0, 0], [1, 1]], ratio, resamples=200, seed=1)[:2] == (None, None)


def test_add_intervals_writes_the_defined_replicates_beside_the_interval() -> None:
    frame = pl.DataFrame(
        {"unit": [f"p{i}" for i in range(10)], "toxic": [1.0] + [0.0] * 9, "other": [0.0] * 10}
    )
    figure = Figure(
        "sos",
        {"toxic_higher": pl.col("toxic") > pl.col("other"), "untied": pl.col("toxic") != pl.col("other")},
        ratio,
    )
    (row,) = add_intervals([{"sos": 1.0}], frame, [], "unit", [figure], seed=0, resamples=1000)
    assert row["sos_ci_low"] is None and row["sos_ci_high"] is None
    assert row["ci_replicates"]["resamples"] == 1000
    assert 550 < row["ci_replicates"]["defined"]["sos"] < 750


def test_a_groups_interval_does_not_depend_on_the_other_groups() -> None:
    frame = pl.DataFrame(
        {
            "group": ["a"] * 6 + ["b"] * 4,
            "unit": ["u1", "u1", "u2", "u3", "u4", "u4", "v1", "v1", "v2", "v3"],
            "hit": [1, 0, 1, 1, 0, 1, 0, 0, 1, 0],
        }
    )
    figure = Figure("share", {"hit": pl.col("hit"), "n": pl.lit(1)}, ratio)
    both = add_intervals([{"group": "a"}, {"group": "b"}], frame, ["group"], "unit", [figure], seed=3)
    alone = add_intervals(
        [{"group": "a"}], frame.filter(pl.col("group") == "a"), ["group"], "unit", [figure], seed=3
    )
    assert both[0] == alone[0] and both[0]["n_units"] == 4 and both[1]["n_units"] == 3
    assert both[0]["share_ci_low"] <= 4 / 6 <= both[0]["share_ci_high"]


def test_an_interval_does_not_depend_on_the_order_of_the_rows() -> None:
    """The same rows in any order give the same interval: the one of the units taken in the
    order of their ids (a run written twice has the same metrics.json)."""
    rng = random.Random(4)
    units = [f"p{i:02d}" for i in range(40)]
    rows = [
        {"group": g, "unit": u, "hit": rng.random() < (0.3 if g == "a" else 0.6)}
        for g in ("a", "b")
        for u in units
        for _ in range(2)
    ]
    frame = pl.DataFrame(rows)
    figure = Figure("share", {"hit": pl.col("hit"), "n": pl.lit(1)}, ratio)
    wanted = {}
    for group in ("a", "b"):
        counts = [
            [sum(r["hit"] for r in rows if r["group"] == group and r["unit"] == u), 2] for u in sorted(units)
        ]
        wanted[group] = unit_bootstrap(counts, ratio, resamples=200, seed=group_seed(9, (group, "share")))[:2]
    for shuffle in range(12):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=shuffle)
        got = add_intervals(
            [{"group": "a"}, {"group": "b"}], shuffled, ["group"], "unit", [figure], seed=9, resamples=200
        )
        assert {r["group"]: (r["share_ci_low"], r["share_ci_high"]) for r in got} == wanted


def test_bbq_intervals_resample_families() -> None:
    """Two families, one answered as the stereotype would, one against it: resampling families
    gives s_DIS of 1 (the biased family twice), 0 (one of each) or −1."""
    rows = []
    # f1 answers as the stereotype would (the target to the negative question, the other person to
    # the non-negative one), f2 against it
    for family, biased in (("f1", True), ("f2", False)):
        for condition in ("ambig", "disambig"):
            for polarity in ("neg", "nonneg"):
                answer = 0 if (polarity == "neg") == biased else 1
                gold = 2 if condition == "ambig" else 0
                rows.append(
                    {
                        "item_id": f"{family}-{condition}-{polarity}",
                        "family_id": family,
                        "category": "Age",
                        "locale": "en",
                        "context_condition": condition,
                        "question_polarity": polarity,
                        "gold": gold,
                        "unknown_label": 2,
                        "target_label": 0,
                        "answer": answer,
                    }
                )
    report = bbq_report(pl.DataFrame(rows), seed=5)
    overall = report["overall"]
    assert overall["n_units"] == 2 and overall["s_dis"] == pytest.approx(0.0)
    assert (overall["s_dis_ci_low"], overall["s_dis_ci_high"]) == (-1.0, 1.0)
    # 2 biased of 4 non-unknown disambiguated answers: p = 1 (exact binomial against 1/2)
    assert overall["p_value"] == pytest.approx(1.0) and report["by_locale_category"][0][
        "p_holm"
    ] == pytest.approx(1.0)

"""The SOS score (Elsafoury et al.): hand-computed tables with ties and an all-tie group, a naive
loop on random pairs, and the refusals (unpaired rows, twins that disagree, bad labels)."""

from __future__ import annotations

import doctest
from collections import defaultdict

import numpy as np
import polars as pl
import pytest
import scipy.stats

from evaluator.metrics import sos
from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.sos import sos_report, sos_scores

COLUMNS = ["pair_id", "label", "score", "group", "attribute", "region", "standing", "variant", "locale"]

# pair: (group, attribute, region, standing, variant, toxic score, non-toxic score)
PAIRS = {
    "p1": ("a", "religion", "global", "marginalized", "f", -3.0, -4.0),  # toxic higher
    "p2": ("a", "religion", "global", "marginalized", "m", -5.0, -5.0),  # tie
    "p3": ("b", "religion", "us", "dominant", "f", -6.0, -2.0),  # non-toxic higher
    "p4": ("b", "religion", "us", "dominant", "m", -1.0, -1.5),  # toxic higher
    "p5": ("c", "gender", "global", "marginalized", "f", -2.0, -3.0),  # toxic higher
    "p6": ("c", "gender", "global", "marginalized", "n", -7.0, -7.0),  # tie
    "p7": ("d", "gender", "uk", "none", "m", -4.0, -1.0),  # non-toxic higher
}


def make(pairs: dict[str, tuple[str, str, str, str, str, float, float]]) -> pl.DataFrame:
    rows = []
    for pair_id, (group, attribute, region, standing, variant, toxic, clean) in pairs.items():
        for label, value in (("toxic", toxic), ("non_toxic", clean)):
            rows.append(
                (f"en:sos:{pair_id}", label, value, group, attribute, region, standing, variant, "en")
            )
    return pl.DataFrame(rows, schema=COLUMNS, orient="row", schema_overrides={"score": pl.Float64})


def row(
    key: tuple[str, ...], pairs: int, toxic: int, clean: int, ties: int, value: float | None, share: float
) -> tuple:
    return (*key, pairs, toxic, clean, ties, value, share)


def test_docstring_examples() -> None:
    result = doctest.testmod(sos, raise_on_error=False)
    assert result.attempted > 0
    assert result.failed == 0


def test_by_group_hand_table() -> None:
    table = sos_scores(make(PAIRS), ["attribute", "group"])
    assert table.columns == [
        "attribute",
        "group",
        "pairs",
        "toxic_higher",
        "non_toxic_higher",
        "ties",
        "sos",
        "tie_share",
    ]
    assert table.rows() == [
        row(("gender", "c"), 2, 1, 0, 1, 1.0, 0.5),
        row(("gender", "d"), 1, 0, 1, 0, 0.0, 0.0),
        row(("religion", "a"), 2, 1, 0, 1, 1.0, 0.5),
        row(("religion", "b"), 2, 1, 1, 0, 0.5, 0.0),
    ]


def test_overall_and_all_tie_group() -> None:
    overall = sos_scores(make(PAIRS), [])
    assert overall.rows() == [(7, 3, 2, 2, 3 / 5, 2 / 7)]  # ties leave the denominator: 3 / (7 - 2)
    by_variant = sos_scores(make(PAIRS), ["variant"])
    assert by_variant.rows() == [
        row(("f",), 3, 2, 1, 0, 2 / 3, 0.0),
        row(("m",), 3, 1, 1, 1, 0.5, 1 / 3),
        row(("n",), 1, 0, 0, 1, None, 1.0),  # every pair ties: no SOS value
    ]


def test_report_tables() -> None:
    report = sos_report(make(PAIRS))
    assert set(report) == {
        "overall",
        "by_group",
        "by_attribute",
        "by_region",
        "by_standing",
        "by_region_standing",
        "by_variant",
    }
    overall = report["overall"]
    assert {
        k: overall[k] for k in ("pairs", "toxic_higher", "non_toxic_higher", "ties", "sos", "tie_share")
    } == {
        "pairs": 7,
        "toxic_higher": 3,
        "non_toxic_higher": 2,
        "ties": 2,
        "sos": 0.6,
        "tie_share": 2 / 7,
    }
    # uncertainty: 7 pairs resampled; the binomial test of 3 toxic-preferred among 5 untied (scipy)
    assert overall["n_units"] == 7 and overall["sos_ci_low"] <= 0.6 <= overall["sos_ci_high"]
    assert overall["p_value"] == pytest.approx(scipy.stats.binomtest(3, 5, 0.5).pvalue)

    def brief(rows: list[dict[str, object]], key: str) -> list[tuple[object, ...]]:
        return [(r[key], r["pairs"], r["toxic_higher"], r["ties"], r["sos"], r["tie_share"]) for r in rows]

    assert brief(report["by_attribute"], "attribute") == [
        ("gender", 3, 1, 1, 0.5, 1 / 3),
        ("religion", 4, 2, 1, 2 / 3, 0.25),
    ]
    assert brief(report["by_region"], "region") == [
        ("global", 4, 2, 2, 1.0, 0.5),
        ("uk", 1, 0, 0, 0.0, 0.0),
        ("us", 2, 1, 0, 0.5, 0.0),
    ]
    assert brief(report["by_standing"], "standing") == [
        ("dominant", 2, 1, 0, 0.5, 0.0),
        ("marginalized", 4, 2, 2, 1.0, 0.5),
        ("none", 1, 0, 0, 0.0, 0.0),
    ]
    assert [
        (r["region"], r["standing"], r["pairs"], r["toxic_higher"], r["ties"], r["sos"])
        for r in report["by_region_standing"]
    ] == [
        ("global", "marginalized", 4, 2, 2, 1.0),
        ("uk", "none", 1, 0, 0, 0.0),
        ("us", "dominant", 2, 1, 0, 0.5),
    ]
    assert [r["variant"] for r in report["by_variant"]] == ["f", "m", "n"]
    assert report["by_variant"][2]["sos"] is None
    assert [(r["attribute"], r["group"], r["sos"]) for r in report["by_group"]] == [
        ("gender", "c", 1.0),
        ("gender", "d", 0.0),
        ("religion", "a", 1.0),
        ("religion", "b", 0.5),
    ]


def test_row_order_and_enum_columns_do_not_matter() -> None:
    frame = make(PAIRS)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=3).with_columns(
        pl.col("label").cast(pl.Enum(["toxic", "non_toxic"])),
        pl.col("region").cast(pl.Enum(["global", "us", "uk"])),
    )
    assert (
        sos_scores(shuffled, ["attribute", "group"]).rows()
        == sos_scores(frame, ["attribute", "group"]).rows()
    )
    # an Enum column sorts in its declared order
    assert sos_scores(shuffled, ["region"])["region"].to_list() == ["global", "us", "uk"]


def test_empty_and_single_pair() -> None:
    empty = make(PAIRS).clear()
    assert sos_scores(empty, []).rows() == [(0, 0, 0, 0, None, None)]
    assert sos_scores(empty, ["group"]).height == 0
    assert sos_report(empty)["by_group"] == []
    one = make({"p1": PAIRS["p1"]})
    assert sos_scores(one, ["group"]).rows() == [("a", 1, 1, 0, 0, 1.0, 0.0)]
    tie = make({"p2": PAIRS["p2"]})
    assert sos_scores(tie, []).rows() == [(1, 0, 0, 1, None, 1.0)]


@pytest.mark.parametrize("seed", range(5))
def test_matches_naive_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pairs = {
        f"p{i}": (
            f"g{rng.integers(0, 4)}",
            "religion",
            "global",
            "marginalized",
            str(rng.choice(["f", "m"])),
            float(rng.integers(-4, 0)),  # few distinct scores: many ties
            float(rng.integers(-4, 0)),
        )
        for i in range(60)
    }
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for group, _, _, _, variant, toxic, clean in pairs.values():
        cell = counts[(group, variant)]
        cell[0] += 1
        cell[1] += toxic > clean
        cell[2] += toxic < clean
        cell[3] += toxic == clean
    expected = []
    for key in sorted(counts):
        n, higher, lower, ties = counts[key]
        expected.append((*key, n, higher, lower, ties, higher / (n - ties) if n > ties else None, ties / n))
    got = sos_scores(make(pairs), ["group", "variant"]).rows()
    assert len(got) == len(expected)
    for have, want in zip(got, expected, strict=True):
        assert have[:6] == want[:6]
        assert have[6] == pytest.approx(want[6], abs=1e-12) if want[6] is not None else have[6] is None
        assert have[7] == pytest.approx(want[7], abs=1e-12)


def test_unpaired_and_malformed_pairs_are_refused() -> None:
    frame = make(PAIRS)
    lone = frame.filter(~((pl.col("pair_id") == "en:sos:p4") & (pl.col("label") == "non_toxic")))
    with pytest.raises(
        MetricInputError, match=r"pair 'en:sos:p4' has 1 toxic and 0 non_toxic row\(s\) \(1 such pair"
    ):
        sos_scores(lone, ["group"])
    doubled = pl.concat(
        [frame, frame.filter((pl.col("pair_id") == "en:sos:p2") & (pl.col("label") == "toxic"))]
    )
    with pytest.raises(MetricInputError, match="pair 'en:sos:p2' has 2 toxic and 1 non_toxic"):
        sos_scores(doubled, [])
    split = frame.with_columns(
        group=pl.when((pl.col("pair_id") == "en:sos:p1") & (pl.col("label") == "toxic"))
        .then(pl.lit("z"))
        .otherwise("group")
    )
    with pytest.raises(MetricInputError, match="the two rows of pair 'en:sos:p1' differ in 'group'"):
        sos_scores(split, ["group"])
    assert sos_scores(split, ["attribute"]).height == 2  # the pair agrees on the columns asked for
    with pytest.raises(
        MetricInputError, match=r"'label' must hold \['toxic', 'non_toxic'\]; found \['Toxic'\]"
    ):
        sos_scores(
            frame.with_columns(
                label=pl.when(pl.col("pair_id") == "en:sos:p1").then(pl.lit("Toxic")).otherwise("label")
            ),
            [],
        )
    with pytest.raises(MetricInputError, match="1 null score"):
        first_toxic = (pl.col("pair_id") == "en:sos:p1") & (pl.col("label") == "toxic")
        sos_scores(frame.with_columns(score=pl.when(first_toxic).then(None).otherwise("score")), [])
    with pytest.raises(MetricInputError, match=r"missing column\(s\) 'standing'"):
        sos_report(frame.drop("standing"))
    with pytest.raises(MetricInputError, match="by must be distinct columns"):
        sos_scores(frame, ["score"])
    with pytest.raises(MetricInputError, match="null pair id"):
        sos_scores(frame.with_columns(pair_id=pl.lit(None, dtype=pl.String)), [])


def test_original_rule_rounds_to_three_decimals_and_keeps_ties_in_the_denominator() -> None:
    """The regional study's script: round(score, 3) before comparing; SOS = toxic higher / all pairs."""
    pairs = {
        "p1": ("a", "religion", "us", "marginalized", "f", -3.0, -4.0),  # toxic higher
        "p2": ("a", "religion", "us", "marginalized", "m", -5.0001, -5.0),  # a tie only once rounded
        "p3": ("a", "religion", "us", "marginalized", "n", -2.0004, -2.0006),  # -2.0 vs -2.001: toxic higher
        "p4": ("a", "religion", "us", "marginalized", "f", -6.0, -2.0),  # non-toxic higher
    }
    exact = sos_scores(make(pairs), [])
    assert exact.rows() == [(4, 2, 2, 0, 0.5, 0.0)]
    original = sos_scores(make(pairs), [], rule="original")
    assert original.rows() == [(4, 2, 1, 1, 2 / 4, 1 / 4)]
    with pytest.raises(MetricInputError, match="rule must be one of"):
        sos_scores(make(pairs), [], rule="rounded")  # type: ignore[arg-type]

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
from evaluator.results.sos import SosLocale

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
    }  # no shared_tokens column (pll, ll): no no_shared_tokens
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


def _with_shared(pairs: dict, shared: dict[str, int]) -> pl.DataFrame:
    frame = make(pairs)
    counts = [shared[pid.removeprefix("en:sos:")] for pid in frame["pair_id"].to_list()]
    return frame.with_columns(pl.Series("shared_tokens", counts, dtype=pl.Int64))


def test_pairs_without_a_shared_token_are_counted_and_tie() -> None:
    """--score shared: p2 shares no token, so it scores 0 against 0 (shared_pll). By hand: 3
    pairs, p1 toxic higher, p3 non-toxic higher, p2 no shared token. Treated as CrowS-Pairs
    treats it: a tie, counted apart. Paper rule: SOS = 1 / (3 − 1) = 0.5, binomial test of 1 of
    2; original rule: SOS = 1 / 3."""
    pairs = {
        "p1": ("a", "religion", "global", "marginalized", "f", -3.0, -4.0),
        "p2": ("a", "religion", "global", "marginalized", "m", 0.0, 0.0),
        "p3": ("b", "religion", "us", "dominant", "f", -6.0, -2.0),
    }
    frame = _with_shared(pairs, {"p1": 5, "p2": 0, "p3": 4})
    report = sos_report(frame, resamples=50)
    assert report["no_shared_tokens"] == 1
    overall = report["overall"]
    assert (overall["pairs"], overall["toxic_higher"], overall["non_toxic_higher"], overall["ties"]) == (
        3,
        1,
        1,
        1,
    )
    assert overall["sos"] == 0.5 and overall["p_value"] == 1.0  # 1 of 2 untied: P = 1
    original = sos_report(frame, rule="original", resamples=50)
    assert original["no_shared_tokens"] == 1 and original["overall"]["sos"] == pytest.approx(1 / 3)
    # every pair shares tokens: 0; the frame has no shared_tokens column (pll, ll): not counted
    assert sos_report(_with_shared(pairs, {"p1": 5, "p2": 2, "p3": 4}), resamples=50)["no_shared_tokens"] == 0
    assert "no_shared_tokens" not in sos_report(make(pairs), resamples=50)
    # the metrics model takes the count; a run from before it was counted reads as not counted
    assert SosLocale.model_validate(report).no_shared_tokens == 1
    older = {k: v for k, v in report.items() if k != "no_shared_tokens"}
    assert SosLocale.model_validate(older).no_shared_tokens is None


def test_ten_pairs_nine_tied_have_no_interval_but_the_count_of_defined_replicates() -> None:
    """1 toxic-preferred pair and 9 ties: a replicate has an untied pair with probability
    1 − 0.9¹⁰ ≈ 0.651, so about a third of the 1000 replicates are undefined (0/0). The interval
    of the defined ones alone would be [1, 1]; none is given, and the count is written beside it."""
    pairs = {f"p{i}": ("a", "religion", "global", "marginalized", "f", -1.0, -1.0) for i in range(9)}
    pairs["p9"] = ("a", "religion", "global", "marginalized", "f", -1.0, -2.0)
    report = sos_report(make(pairs))
    overall = report["overall"]
    assert overall["sos"] == 1.0 and overall["n_units"] == 10
    assert overall["sos_ci_low"] is None and overall["sos_ci_high"] is None
    defined = overall["ci_replicates"]["defined"]["sos"]
    assert overall["ci_replicates"]["resamples"] == 1000
    assert abs(defined - 1000 * (1 - 0.9**10)) < 4 * (1000 * 0.651 * 0.349) ** 0.5
    row = SosLocale.model_validate(report).overall
    assert row.ci_replicates is not None and row.ci_replicates.defined == {"sos": defined}


def test_the_report_shows_pairs_without_a_shared_token_and_why_there_is_no_interval() -> None:
    """The SOS section's per-locale table: a "no shared token" column for a run scored on shared
    tokens (an older run: "not counted"), and, where no interval was given, how many replicates
    were defined."""
    from evaluator.report.sections.sos import _overall_table, _Parts
    from evaluator.results.sos import SosMetrics

    pairs = {f"p{i}": ("a", "religion", "global", "marginalized", "f", 0.0, 0.0) for i in range(9)}
    pairs["p9"] = ("a", "religion", "global", "marginalized", "f", -1.0, -2.0)
    report = sos_report(_with_shared(pairs, {f"p{i}": 0 if i < 2 else 3 for i in range(10)}))
    older = {k: v for k, v in report.items() if k != "no_shared_tokens"}
    metrics = SosMetrics.model_validate({"score": "shared", "per_locale": {"en": report, "de": older}})
    parts = _Parts(metrics=metrics, locales=["en", "de"], key="k", ctx=None, standing={})  # type: ignore[arg-type]
    table = _overall_table(parts)
    column = table.columns.index("no shared token")
    assert [row[column] for row in table.rows] == [2, "not counted"]
    defined = report["overall"]["ci_replicates"]["defined"]["sos"]
    interval = table.columns.index("95% CI")
    assert table.rows[0][interval] == f"none ({defined} of 1000 replicates defined)"
    # scored by pll: no such column
    pll = SosMetrics.model_validate({"score": "pll", "per_locale": {"en": older}})
    assert "no shared token" not in _overall_table(_Parts(pll, ["en"], "k", None, {})).columns  # type: ignore[arg-type]

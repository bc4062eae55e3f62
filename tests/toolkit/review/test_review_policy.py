"""The review policy's decisions and the agreement statistics, against hand-computed values
and the `krippendorff` package as an independent implementation; agreement over texts against
sacrebleu's own chrF function, pair by pair."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sacrebleu import sentence_chrf

from toolkit.review.agreement import krippendorff_alpha_nominal, text_agreement
from toolkit.review.policy import ReviewPolicy, Verdict, decide

POLICY = ReviewPolicy(version="1.0.0", description="t", reviewed_after=1, approved_after=2, rejected_after=1)


@pytest.mark.parametrize(
    ("verdicts", "status", "text", "adjudication"),
    [
        ([], None, None, False),
        ([Verdict("a", "accept", "T")], "reviewed", "T", False),
        ([Verdict("a", "accept", "T"), Verdict("b", "accept", "T")], "approved", "T", False),
        (
            [Verdict("a", "accept", "T"), Verdict("b", "edited", "T")],
            "approved",
            "T",
            False,
        ),  # same final text
        ([Verdict("a", "edited", "U")], "reviewed", "U", False),
        ([Verdict("a", "accept", "T"), Verdict("b", "edited", "U")], None, None, True),
        ([Verdict("a", "accept", "T"), Verdict("b", "reject", None)], None, None, True),
        ([Verdict("a", "reject", None)], "rejected", None, False),
        ([Verdict("a", "reject", None), Verdict("b", "reject", None)], "rejected", None, False),
    ],
)
def test_decisions(verdicts: list[Verdict], status: str | None, text: str | None, adjudication: bool) -> None:
    decision = decide(verdicts, POLICY)
    assert (decision.status, decision.text, decision.adjudication) == (status, text, adjudication)


def test_an_adjudicator_settles_a_disagreement() -> None:
    policy = POLICY.model_copy(update={"adjudicators": ("lead@example.org",)})
    verdicts = [
        Verdict("a", "accept", "T"),
        Verdict("b", "edited", "U"),
        Verdict("lead@example.org", "edited", "V"),
    ]
    assert decide(verdicts, policy).status == "approved" and decide(verdicts, policy).text == "V"
    assert decide([*verdicts[:2], Verdict("lead@example.org", "reject", None)], policy).status == "rejected"


def test_stricter_policy_needs_more_reviewers() -> None:
    strict = POLICY.model_copy(update={"reviewed_after": 2, "approved_after": 3, "rejected_after": 2})
    assert decide([Verdict("a", "accept", "T")], strict).status is None
    assert decide([Verdict("a", "accept", "T"), Verdict("b", "accept", "T")], strict).status == "reviewed"
    assert decide([Verdict("a", "reject", None)], strict).status is None


def reference_alpha(units: list[list[str]]) -> float:
    cats = {c: i for i, c in enumerate(sorted({v for u in units for v in u}))}
    width = max(len(u) for u in units)
    data = np.full((width, len(units)), np.nan)
    for j, unit in enumerate(units):
        for i, value in enumerate(unit):
            data[i, j] = cats[value]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


@pytest.mark.parametrize(
    "units",
    [
        [["accept", "accept"], ["accept", "edited"], ["reject", "reject"], ["edited", "edited", "accept"]],
        [["accept", "reject"], ["reject", "accept"], ["accept", "accept"]],
        [["a", "b", "c"], ["a", "a"], ["b", "b", "b"], ["c", "a"]],
    ],
)
def test_alpha_matches_the_krippendorff_package(units: list[list[str]]) -> None:
    assert krippendorff_alpha_nominal(units) == pytest.approx(reference_alpha(units), abs=1e-12)


def test_alpha_by_hand_and_undefined_cases() -> None:
    # two units (accept, edited), (accept, accept): o(a,a)=2, o(a,e)=o(e,a)=1; n_a=3, n_e=1, n=4
    # alpha = 1 - (n-1) * 2 / (2 * n_a * n_e) = 1 - 3*2/6 = 0
    assert krippendorff_alpha_nominal([["accept", "edited"], ["accept", "accept"]]) == pytest.approx(0.0)
    assert (
        krippendorff_alpha_nominal([["accept", "accept"], ["accept", "accept"]]) is None
    )  # one category only
    assert krippendorff_alpha_nominal([["accept"], ["reject"]]) is None  # nothing pairable


def test_agreement_over_texts_against_sacrebleu_pair_by_pair() -> None:
    # three segments: two reviewers with the same text, two with different edits, three reviewers
    # of whom two agree; pairs: (same), (cat, cat down), (x, y), (x, x), (x, y) -> 5 pairs, 2 identical
    units = [
        ["Die Frau ist glücklich.", "Die Frau ist glücklich."],
        ["the cat sat", "the cat sat down"],
        ["x y z", "x y z", "a b c"],
    ]
    pairs = [
        ("Die Frau ist glücklich.", "Die Frau ist glücklich."),
        ("the cat sat", "the cat sat down"),
        ("x y z", "x y z"),
        ("x y z", "a b c"),
        ("x y z", "a b c"),
    ]
    # chrF is not symmetric (beta = 2 weighs recall): each pair is scored both ways and averaged
    both_ways = [(sentence_chrf(a, [b]).score + sentence_chrf(b, [a]).score) / 2 for a, b in pairs]
    found = text_agreement(units)
    assert found.pairs == 5
    assert found.exact == pytest.approx(2 / 5)
    assert found.chrf == pytest.approx(sum(both_ways) / 5)
    assert both_ways[0] == pytest.approx(100.0) and both_ways[3] == pytest.approx(0.0)
    assert sentence_chrf("the cat sat", ["the cat sat down"]).score != pytest.approx(
        sentence_chrf("the cat sat down", ["the cat sat"]).score
    )
    # two different edits are agreement for alpha over verdicts ('edited', 'edited'), not over texts
    assert text_agreement([["the cat sat", "the dog sat"]]).exact == 0.0
    assert text_agreement([["only one"]]) == text_agreement([])
    assert text_agreement([]).chrf is None and text_agreement([]).pairs == 0

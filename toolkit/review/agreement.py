"""Agreement between reviewers.

Krippendorff's alpha for nominal data (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability"): with the coincidence matrix o_ck = Σ_u Σ_{i≠j} [v_ui = c][v_uj = k] / (m_u − 1)
over units with m_u ≥ 2 values, n_c = Σ_k o_ck and n = Σ_c n_c,

    alpha = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c · n_k

It is undefined (None) when there is no pairable value or every value is the same category.

Alpha over verdicts counts two reviewers who both chose 'edited' as agreeing, whatever they
typed. Agreement over texts compares what each reviewer ends with (the draft for 'accept', the
edit for 'edited'; a reject has no text): for every pair of reviewers of a segment, whether the
two texts are identical, and their sentence-level chrF (Popović 2015, sacrebleu's defaults:
character 6-grams, β = 2), taken both ways and averaged because chrF weighs recall over
precision and neither reviewer is the reference."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from sacrebleu.metrics import CHRF


def krippendorff_alpha_nominal(units: Sequence[Sequence[str]]) -> float | None:
    """``units``: for each unit (segment), the values its coders gave (one per coder)."""
    coincidences: dict[tuple[str, str], float] = {}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    coincidences[(a, b)] = coincidences.get((a, b), 0.0) + 1.0 / (m - 1)
    n_c: dict[str, float] = {}
    for (a, _), weight in coincidences.items():
        n_c[a] = n_c.get(a, 0.0) + weight
    n = sum(n_c.values())
    if n <= 1:
        return None
    disagree_observed = sum(w for (a, b), w in coincidences.items() if a != b)
    disagree_expected = sum(n_c[a] * n_c[b] for a in n_c for b in n_c if a != b)
    if disagree_expected == 0:
        return None
    return 1.0 - (n - 1) * disagree_observed / disagree_expected


@dataclass(frozen=True)
class TextAgreement:
    """How far reviewers who ended with a text agree on it: exact matches and chrF over pairs."""

    pairs: int
    """Pairs of reviewers of the same segment who both ended with a text."""
    exact: float | None
    """Share of those pairs whose texts are identical (None: no pair)."""
    chrf: float | None
    """Mean over those pairs of chrF between the two texts, 0-100 (None: no pair)."""


def text_agreement(units: Sequence[Sequence[str]]) -> TextAgreement:
    """``units``: for each segment, the texts its reviewers ended with (one per reviewer)."""
    metric = CHRF()
    same: list[bool] = []
    scores: list[float] = []
    for texts in units:
        for a, b in combinations(texts, 2):
            same.append(a == b)
            scores.append((metric.sentence_score(a, [b]).score + metric.sentence_score(b, [a]).score) / 2)
    if not scores:
        return TextAgreement(0, None, None)
    return TextAgreement(len(scores), sum(same) / len(same), sum(scores) / len(scores))

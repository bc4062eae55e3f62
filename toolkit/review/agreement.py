"""Agreement between reviewers.

Krippendorff's alpha for nominal data (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability"): with the coincidence matrix o_ck = Σ_u Σ_{i≠j} [v_ui = c][v_uj = k] / (m_u − 1)
over units with m_u ≥ 2 values, n_c = Σ_k o_ck and n = Σ_c n_c,

    alpha = 1 − (n − 1) · Σ_{c≠k} o_ck / Σ_{c≠k} n_c · n_k

It is undefined (None) when there is no pairable value or every value is the same category.
Competing edits are compared with sentence-level chrF (sacrebleu), averaged over pairs."""

from __future__ import annotations

from collections.abc import Sequence
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


def competing_edits_chrf(groups: Sequence[Sequence[str]]) -> float | None:
    """Mean sentence chrF over every pair of distinct edits of the same segment."""
    metric = CHRF()
    scores = []
    for edits in groups:
        for a, b in combinations(sorted(set(edits)), 2):
            scores.append(metric.sentence_score(a, [b]).score)
    return sum(scores) / len(scores) if scores else None

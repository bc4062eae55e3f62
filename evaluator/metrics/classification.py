"""Task performance of a binary sentiment classifier on a parallel test set, and which languages
perform alike (Levy et al. 2023 compare the bias of languages only where task performance does
not differ significantly).

- Accuracy is ``correct / n``. Per label ``c``: precision ``tp / (tp + fp)``, recall
  ``tp / (tp + fn)`` and ``F1 = 2 tp / (2 tp + fp + fn)`` (the harmonic mean of the two, written
  so that it is 0, not undefined, for a label the model never predicts; undefined only when the
  label is neither gold nor predicted). Macro F1 is the mean of the labels' F1.
- Locales "perform alike" when McNemar's test between them is not significant after Holm's
  adjustment over every pair; the alike sets are the maximal sets of locales of which every two
  are alike (the maximal cliques of that graph), so a locale that differs from another is never
  in a set with it, even when both are alike a third.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from evaluator.metrics.errors import MetricInputError

BINARY = ("positive", "negative")


def confusion(gold: Sequence[str], predicted: Sequence[str | None]) -> dict[str, dict[str, int]]:
    """``{gold label: {predicted label or "none": count}}`` over the binary labels."""
    if len(gold) != len(predicted):
        raise MetricInputError(f"confusion: {len(gold)} gold labels but {len(predicted)} predictions")
    table = {g: {p: 0 for p in (*BINARY, "none")} for g in BINARY}
    for g, p in zip(gold, predicted, strict=True):
        if g not in BINARY:
            raise MetricInputError(f"confusion: gold label {g!r} is not one of {', '.join(BINARY)}")
        if p is not None and p not in BINARY:
            raise MetricInputError(f"confusion: prediction {p!r} is not one of {', '.join(BINARY)}")
        table[g][p or "none"] += 1
    return table


def f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """``2 tp / (2 tp + fp + fn)``, NaN where the denominator is 0 (works on count arrays)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(2 * tp / (2 * tp + fp + fn), dtype=float)


def binary_scores(gold: Sequence[str], predicted: Sequence[str | None]) -> dict[str, Any]:
    """Accuracy, macro F1 and per-label precision, recall and F1 of binary predictions (a missing
    prediction, None, is wrong for both labels and counted in ``unanswered``).

    >>> r = binary_scores(["positive", "positive", "negative", "negative"],
    ...                   ["positive", "negative", "negative", None])
    >>> r["accuracy"], round(r["macro_f1"], 4), r["unanswered"]
    (0.5, 0.5833, 1)
    """
    table = confusion(gold, predicted)
    n = len(gold)
    correct = sum(table[c][c] for c in BINARY)
    per_label: dict[str, dict[str, float | int | None]] = {}
    for c in BINARY:
        other = BINARY[1 - BINARY.index(c)]
        tp = table[c][c]
        fp = table[other][c]
        fn = table[c][other] + table[c]["none"]
        per_label[c] = {
            "precision": tp / (tp + fp) if tp + fp else None,
            "recall": tp / (tp + fn) if tp + fn else None,
            "f1": _number(f1(np.array(tp), np.array(fp), np.array(fn))),
            "support": tp + fn,
        }
    scores = [v["f1"] for v in per_label.values() if v["f1"] is not None]
    return {
        "n": n,
        "correct": correct,
        "accuracy": correct / n if n else None,
        "macro_f1": float(np.mean(scores)) if scores else None,
        "unanswered": sum(table[c]["none"] for c in BINARY),
        "per_label": per_label,
        "confusion": table,
    }


def macro_f1_of_sums(sums: np.ndarray) -> np.ndarray:
    """Macro F1 from summed counts per replicate, columns ``(pp, pn, np, nn, p_none, n_none)``:
    gold positive predicted positive, gold positive predicted negative, and so on (a bootstrap's
    statistic)."""
    pp, pn, n_p, nn, p_none, n_none = (sums[:, i] for i in range(6))
    positive = f1(pp, n_p, pn + p_none)
    negative = f1(nn, pn, n_p + n_none)
    return np.asarray(np.nanmean(np.stack([positive, negative]), axis=0), dtype=float)


def alike_sets(
    locales: Sequence[str], p_holm: Mapping[tuple[str, str], float | None], alpha: float
) -> list[list[str]]:
    """The maximal sets of locales of which every two do not differ significantly (``p_holm`` of
    the pair ≥ ``alpha``; a pair without a test counts as differing). Largest sets first, then in
    the locales' order; a locale alike no other is a set of its own.

    >>> alike_sets(["en", "de", "he"], {("en", "de"): 0.4, ("en", "he"): 0.01, ("de", "he"): 0.2}, 0.05)
    [['en', 'de'], ['de', 'he']]
    """
    order = {loc: i for i, loc in enumerate(locales)}
    alike: dict[str, set[str]] = {loc: set() for loc in locales}
    for a, b in combinations(locales, 2):
        p = p_holm.get((a, b), p_holm.get((b, a)))
        if p is not None and p >= alpha:
            alike[a].add(b)
            alike[b].add(a)
    cliques: list[list[str]] = []

    def expand(chosen: set[str], candidates: set[str], excluded: set[str]) -> None:  # Bron–Kerbosch
        if not candidates and not excluded:
            cliques.append(sorted(chosen, key=order.__getitem__))
            return
        for loc in sorted(candidates, key=order.__getitem__):
            expand(chosen | {loc}, candidates & alike[loc], excluded & alike[loc])
            candidates = candidates - {loc}
            excluded = excluded | {loc}

    expand(set(), set(locales), set())
    return sorted(cliques, key=lambda c: (-len(c), [order[loc] for loc in c]))


def _number(value: np.ndarray) -> float | None:
    out = float(value)
    return None if np.isnan(out) else out

"""CrowS-Pairs' sentence score on a masked LM: the pseudo-log-likelihood of the tokens a pair's two
sentences share, each masked in turn (Nangia et al. 2020, §3).

Built on the backend's two PLL primitives, so it scores exactly as PLL does: each sentence is
encoded once with its own special-tokens mask (``pll_inputs``), evaluator.alignment picks the
shared positions, and ``masked_logprobs`` scores those positions only."""

from __future__ import annotations

from collections.abc import Sequence

from evaluator.alignment import PairRule, shared_positions
from evaluator.backends.base import Backend, PllInput


def shared_token_pll(
    backend: Backend, pairs: Sequence[tuple[str, str]], rule: PairRule
) -> list[tuple[float, float, int]]:
    """(score of a, score of b, shared tokens scored) per pair (a, b)."""
    encoded = backend.pll_inputs([text for pair in pairs for text in pair])
    inputs: list[PllInput] = []
    counts: list[int] = []
    for index in range(len(pairs)):
        a, b = encoded[2 * index], encoded[2 * index + 1]
        special_a = [0 if p in a.positions else 1 for p in range(len(a.ids))]
        special_b = [0 if p in b.positions else 1 for p in range(len(b.ids))]
        shared = shared_positions(a.ids, b.ids, special_a, special_b, rule)
        counts.append(len(shared))
        inputs.append(PllInput(a.ids, [i for i, _ in shared]))
        inputs.append(PllInput(b.ids, [j for _, j in shared]))
    scores = backend.masked_logprobs(inputs)
    return [(sum(scores[2 * index]), sum(scores[2 * index + 1]), n) for index, n in enumerate(counts)]

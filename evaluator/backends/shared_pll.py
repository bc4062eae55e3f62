"""CrowS-Pairs' sentence score on a transformers masked LM: the pseudo-log-likelihood of the tokens
a pair's two sentences share, each masked in turn (Nangia et al. 2020, §3).

Each sentence is encoded once (with the tokenizer's special tokens and the encoding's own
special-tokens mask); evaluator.alignment picks the shared positions; every masked copy of every
sentence goes through the model in longest-first batches (the backend's Batcher), and the
log-probability of the original token is read at the masked position itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from evaluator.alignment import PairRule, shared_positions
from evaluator.errors import UnsupportedRequest

if TYPE_CHECKING:
    from evaluator.backends.hf import TransformersBackend

Copy = tuple[list[int], int, int]
"""A masked copy: token ids with one position masked, that position, the token it hides."""


def masked_logprobs(backend: TransformersBackend, copies: Sequence[Copy], what: str) -> list[float]:
    """log P(hidden token | masked copy) at the masked position, for every copy, in order."""
    head = backend._mlm_head()
    model = backend.model

    def run(batch: list[Copy]) -> list[float]:
        ids, mask = backend._pad([c[0] for c in batch])
        rows = torch.arange(len(batch), device=ids.device)
        positions = torch.tensor([c[1] for c in batch], device=ids.device)
        targets = torch.tensor([c[2] for c in batch], device=ids.device)
        with torch.inference_mode():
            if head is not None:
                hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
                logits = head(hidden[rows, positions]).float()
            else:
                logits = model(input_ids=ids, attention_mask=mask).logits[rows, positions].float()
        return [float(x) for x in torch.log_softmax(logits, dim=-1)[rows, targets].cpu()]

    per_token = backend.vocab if head is None else 4 * int(model.config.hidden_size)
    return backend.batcher.run(
        list(copies),
        lambda c: len(c[0]),
        lambda n, b: n * b * per_token,
        run,
        backend.progress(what, len(copies)),
    )


def shared_token_pll(
    backend: TransformersBackend, pairs: Sequence[tuple[str, str]], rule: PairRule
) -> list[tuple[float, float, int]]:
    """(score of a, score of b, shared tokens scored) per pair (a, b)."""
    if backend.identity.kind != "masked":
        raise UnsupportedRequest(
            f"shared-token pseudo-log-likelihood needs a masked LM; {backend.identity.name} is {backend.identity.kind}"
        )
    tokenizer = backend.tokenizer
    mask_id = tokenizer.mask_token_id
    if mask_id is None:
        raise UnsupportedRequest(f"{backend.identity.name} has no mask token")
    copies: list[Copy] = []
    owner: list[tuple[int, int]] = []  # (pair, side) of each copy
    counts: list[int] = []
    for index, pair in enumerate(pairs):
        encoded = [tokenizer(text, return_special_tokens_mask=True) for text in pair]
        ids = [list(e["input_ids"]) for e in encoded]
        special = [list(e["special_tokens_mask"]) for e in encoded]
        shared = shared_positions(ids[0], ids[1], special[0], special[1], rule)
        counts.append(len(shared))
        for side in (0, 1):
            for position in (p[side] for p in shared):
                masked = list(ids[side])
                masked[position] = mask_id
                copies.append((masked, position, ids[side][position]))
                owner.append((index, side))
    scores = masked_logprobs(backend, copies, "shared-token pseudo-log-likelihood")
    totals = [[0.0, 0.0] for _ in pairs]
    for (index, side), score in zip(owner, scores, strict=True):
        totals[index][side] += score
    return [(a, b, n) for (a, b), n in zip(totals, counts, strict=True)]

"""Batches for the transformers backend: requests sorted longest-first (out-of-memory happens at
once, time estimates err high), each batch sized by a budget of elements, halved on
out-of-memory, and the answers restored to the order of the requests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch

T = TypeVar("T")
R = TypeVar("R")


def is_oom(exc: BaseException) -> bool:
    """Whether a failed batch ran out of memory (CUDA's own error, or the CPU allocator's)."""
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


@dataclass
class Batcher:
    """Longest-first batches under a budget of elements (tokens × extra factor), halved on OOM."""

    max_batch: int | None
    budget: int

    def run(
        self,
        items: Sequence[T],
        length: Callable[[T], int],
        cost: Callable[[int, int], int],
        fn: Callable[[list[T]], list[R]],
        advance: Callable[[int], None],
    ) -> list[R]:
        """``fn`` over batches of ``items``, one answer per item in the items' order: ``length``
        measures an item, ``cost(longest, 1)`` prices one row of a batch against the budget."""
        order = sorted(range(len(items)), key=lambda i: -length(items[i]))
        out: list[R | None] = [None] * len(items)
        pos = 0
        limit = self.max_batch or 1 << 30
        while pos < len(order):
            longest = length(items[order[pos]])
            size = max(1, min(limit, self.budget // max(1, cost(longest, 1)), len(order) - pos))
            chunk = order[pos : pos + size]
            try:
                answers = fn([items[i] for i in chunk])
            except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
                if not is_oom(exc) or size == 1:
                    raise
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                limit = max(1, size // 2)
                continue
            for i, answer in zip(chunk, answers, strict=True):
                out[i] = answer
            pos += size
            advance(size)
        return out  # type: ignore[return-value]

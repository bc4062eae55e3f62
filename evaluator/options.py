"""Everything that configures a run, typed and frozen: it goes into run.json and, where it
changes the numbers, into the signature. Structured options only (no comma strings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class RunOptions:
    task: str
    model: str
    locales: tuple[str, ...] | None = None
    backend: str = "transformers"
    device: str = "auto"
    dtype: Literal["auto", "bf16", "fp16", "fp32"] = "auto"
    batch_size: int | None = None
    seed: int = 0
    limit: int | None = None
    """At most this many items per locale, chosen by a seeded hash (pairs and families kept whole)."""
    # sentiment
    sentiment_mode: Literal["auto", "classifier", "prompt"] = "auto"
    positive_label: str | None = None
    # sos
    score: Literal["auto", "pll", "ll"] = "auto"
    # generation (honest, bbq, iat, ifm)
    k: int = 5
    strategy: Literal["auto", "greedy", "sample", "beam"] = "auto"
    max_new_tokens: int | None = None
    chat: bool | None = None
    completion: Literal["auto", "word", "sentence"] = "auto"
    hurtlex_level: Literal["conservative", "inclusive", "both"] = "conservative"
    # bbq
    bbq_mode: Literal["auto", "loglikelihood", "generate"] = "auto"
    # iat
    permutations: int = 50
    # ifm
    instruction: Literal["both", "native", "en"] = "both"
    api: dict[str, Any] = field(default_factory=dict)
    """OpenAI-compatible backend settings that are not secrets (base URL, rate limit)."""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["locales"] = list(self.locales) if self.locales else None
        return data

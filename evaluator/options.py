"""Everything that configures a run, typed and frozen: it goes into run.json and, where it
changes the numbers, into the signature. Structured options only (no comma strings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# The choice sets of a run's settings, written once: the CLI and the sweep file take them from here.
Device = Literal["auto", "cuda", "cpu"]
Dtype = Literal["auto", "bf16", "fp16", "fp32", "fp64"]
"""fp64: for checking numbers against another implementation (CPU; not vLLM)."""
Truncation = Literal["error", "left", "right"]
SentimentMode = Literal["auto", "classifier", "prompt"]
Score = Literal["auto", "pll", "ll", "shared"]
Strategy = Literal["auto", "greedy", "sample", "beam"]
Completion = Literal["auto", "word", "sentence"]
HurtlexLevel = Literal["conservative", "inclusive", "both"]
BbqMode = Literal["auto", "loglikelihood", "generate"]
Instruction = Literal["both", "native", "en"]

MAX_LIMIT = 1_000_000_000
"""The largest --limit (units per locale): far above any release, and within what the data
frames a run draws from can count (10**23 ended in an OverflowError)."""


@dataclass(frozen=True)
class RunOptions:
    task: str
    model: str
    locales: tuple[str, ...] | None = None
    backend: str = "transformers"
    device: Device = "auto"
    dtype: Dtype = "auto"
    batch_size: int | None = None
    truncation: Truncation = "error"
    """An input longer than the model's context: an error (default), or the prompt cut at its
    start or end; a policy other than error is part of the signature."""
    seed: int = 0
    limit: int | None = None
    """At most this many items per locale, chosen by a seeded hash (pairs and families kept whole)."""
    groups: tuple[str, ...] | None = None
    """Only these identity groups: group ids, or ``study:<id>`` for the groups that correspond to a
    study's identities (the release's manifest lists them)."""
    suite: str | None = None
    """The release suite the task reads, when it reads more than one (sos: sos or sos-study)."""
    original_script: bool = False
    """Pair scores compared as the dataset's own script does (crows-pairs, sos: rounded to 3
    decimals, ties kept in the denominator; evaluator.metrics.crows_pairs and .sos)."""
    # sentiment
    sentiment_mode: SentimentMode = "auto"
    positive_label: str | None = None
    # sos, crows-pairs
    score: Score = "auto"
    # generation (honest, bbq, iat, ifm)
    k: int = 5
    strategy: Strategy = "auto"
    max_new_tokens: int | None = None
    chat: bool | None = None
    completion: Completion = "auto"
    hurtlex_level: HurtlexLevel = "conservative"
    # bbq
    bbq_mode: BbqMode = "auto"
    # iat
    permutations: int = 50
    # ifm
    instruction: Instruction = "both"
    tensor_parallel: int = 1
    """vLLM: the number of GPUs one model is split over (tensor parallelism)."""
    api: dict[str, Any] = field(default_factory=dict)
    """OpenAI-compatible backend settings that are not secrets (base URL, rate limit)."""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["locales"] = list(self.locales) if self.locales else None
        data["groups"] = list(self.groups) if self.groups else None
        return data

"""The small interface every backend implements, batch-first (after lm-evaluation-harness):
lists of requests in, lists of answers out, in the same order.

- classify(texts)                 -> class probabilities (sequence classifiers)
- loglikelihood([(ctx, cont)])    -> log P(cont | ctx), summed over the continuation's tokens
- sentence_logprob(texts)         -> log P(text) under a causal LM (every token after the first)
- pseudo_loglikelihood(texts)     -> Σ_i log P(w_i | text with w_i masked) under a masked LM
- fill_mask(texts, k)             -> the k most likely words at the `[M]` marker (masked LMs)
- generate(prompts, settings)     -> K completions per prompt

A backend also states its model's identity (name, resolved location, revision or hash of the
files, kind) and the settings that change its numbers (dtype); both go into every cache key and
into the run's signature."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from evaluator.errors import UnsupportedRequest

ModelKind = Literal["classifier", "masked", "causal", "seq2seq", "api"]
Progress = Callable[[str, int], Callable[[int], None]]
"""progress(description, total) -> advance(n): how backends report long work."""


@dataclass(frozen=True)
class ModelIdentity:
    name: str
    resolved: str
    revision: str
    kind: ModelKind
    labels: tuple[str, ...] = ()

    def key(self) -> dict[str, Any]:
        return {"resolved": self.resolved, "revision": self.revision, "kind": self.kind}


@dataclass(frozen=True)
class GenerationSettings:
    max_new_tokens: int = 32
    num_return_sequences: int = 1
    strategy: Literal["greedy", "sample", "beam"] = "greedy"
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0
    chat: bool = False
    stop: tuple[str, ...] = ()

    def key(self) -> dict[str, Any]:
        data = asdict(self)
        if self.strategy != "sample":  # the seed changes nothing without sampling
            data.pop("seed")
            data.pop("temperature")
            data.pop("top_p")
        return data


def no_progress(description: str, total: int) -> Callable[[int], None]:
    return lambda n: None


@dataclass
class Backend(ABC):
    identity: ModelIdentity
    settings: dict[str, Any] = field(default_factory=dict)
    """What changes this backend's numbers besides the model (e.g. dtype)."""
    progress: Progress = no_progress

    def _unsupported(self, what: str) -> UnsupportedRequest:
        return UnsupportedRequest(f"{self.identity.name} ({self.identity.kind}) cannot compute {what}")

    def classify(self, texts: Sequence[str]) -> list[list[float]]:
        raise self._unsupported("class probabilities")

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        raise self._unsupported("continuation log-likelihoods")

    def sentence_logprob(self, texts: Sequence[str]) -> list[float]:
        raise self._unsupported("sentence log-likelihoods")

    def pseudo_loglikelihood(self, texts: Sequence[str]) -> list[float]:
        raise self._unsupported("pseudo-log-likelihoods (a masked LM is needed)")

    def fill_mask(self, texts: Sequence[str], k: int) -> list[list[str]]:
        """The k most likely words for the single mask marker `[M]` in each text (masked LMs)."""
        raise self._unsupported("mask filling (a masked LM is needed)")

    @abstractmethod
    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        """K completions per prompt (K = settings.num_return_sequences)."""

    def environment(self) -> dict[str, Any]:
        return {}

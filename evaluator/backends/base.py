"""The small interface every backend implements, batch-first (after lm-evaluation-harness):
lists of requests in, lists of answers out, in the same order.

- classify(texts)                 -> class probabilities (sequence classifiers)
- loglikelihood([(ctx, cont)])    -> log P(cont | ctx), summed over the continuation's tokens
- sentence_logprob(texts)         -> log P(text) under a causal LM (every token after the first)
- pseudo_loglikelihood(texts)     -> Σ_i log P(w_i | text with w_i masked) under a masked LM
- shared_token_pll(pairs, rule)   -> CrowS-Pairs: the same sum over the tokens two sentences share
- pll_inputs(texts)               -> each text's input ids and the positions PLL scores
- masked_logprobs(inputs)         -> log P(w_p | ids with p masked) for chosen positions p
- fill_mask(texts, k)             -> the k most likely words at the `[M]` marker (masked LMs)
- generate(prompts, settings)     -> K completions per prompt

A backend also states its model's identity (name, resolved location, revision or hash of the
files, kind) and the settings that change its numbers (dtype); both go into every cache key and
into the run's signature.

And it loads itself from a run's options (``from_options``), after ``check_options`` has refused
what it cannot honour, so `eval run` and sweeps load every registered backend the same way
(evaluator.run.load_backend) and a new backend touches no shared code."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal, Self

from evaluator.alignment import PairRule
from evaluator.backends.model_path import check_model_path
from evaluator.errors import UnsupportedRequest
from evaluator.options import RunOptions
from toolkit.core.errors import InputError

ModelKind = Literal["classifier", "masked", "causal", "seq2seq", "api"]
Truncation = Literal["error", "left", "right"]
"""What happens to an input longer than the model's context: an error naming the longest
input and the limit, or the prompt cut at its start (left) or its end (right)."""
Progress = Callable[[str, int], Callable[[int], None]]
"""progress(description, total) -> advance(n): how backends report long work."""


@dataclass(frozen=True)
class ModelIdentity:
    """Which model answered: the name asked for, where it was loaded from, the revision (a hub
    commit or the hash of a local folder's files), its kind and, for classifiers, its labels."""

    name: str
    resolved: str
    revision: str
    kind: ModelKind
    labels: tuple[str, ...] = ()

    def key(self) -> dict[str, Any]:
        """The part of a cache key that tells models apart (the name asked for does not)."""
        return {"resolved": self.resolved, "revision": self.revision, "kind": self.kind}


@dataclass(frozen=True)
class PllInput:
    """One sentence for pseudo-log-likelihood: its input ids (special tokens included) and the
    positions that are masked one at a time and scored."""

    ids: tuple[int, ...]
    positions: tuple[int, ...]

    def __init__(self, ids: Sequence[int], positions: Sequence[int]) -> None:
        object.__setattr__(self, "ids", tuple(int(i) for i in ids))
        object.__setattr__(self, "positions", tuple(int(p) for p in positions))


@dataclass(frozen=True)
class GenerationSettings:
    """How completions are generated: length, how many per prompt, decoding strategy, chat
    template, stop strings."""

    max_new_tokens: int = 32
    num_return_sequences: int = 1
    strategy: Literal["greedy", "sample", "beam"] = "greedy"
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0
    chat: bool = False
    stop: tuple[str, ...] = ()

    def key(self) -> dict[str, Any]:
        """The settings that can change a completion, for the cache key."""
        data = asdict(self)
        if self.strategy != "sample":  # the seed changes nothing without sampling
            data.pop("seed")
            data.pop("temperature")
            data.pop("top_p")
        return data


def no_progress(description: str, total: int) -> Callable[[int], None]:
    """A Progress that reports nothing (library use, tests)."""
    return lambda n: None


@dataclass
class Backend(ABC):
    """A loaded model behind the batch-first requests above; a request its kind cannot answer
    raises UnsupportedRequest naming the model and what was asked."""

    identity: ModelIdentity
    settings: dict[str, Any] = field(default_factory=dict)
    """What changes this backend's numbers besides the model (e.g. dtype)."""
    progress: Progress = no_progress
    truncation: Truncation = "error"
    truncated: int = 0
    """Inputs cut to the model's context so far (only with a truncation policy)."""
    takes_truncation: ClassVar[bool] = False
    """Whether --truncation left/right is honoured (the backend cuts what does not fit, and counts it)."""
    reads_model_files: ClassVar[bool] = True
    """Whether --model names model files (a local folder or a hub name), not a name on a server."""

    @classmethod
    def check_options(cls, options: RunOptions) -> None:
        """Refuse, before the model is loaded, the options this backend cannot honour: a
        truncation policy it does not take, a local model path that is not there."""
        if options.truncation != "error" and not cls.takes_truncation:
            raise InputError(
                f"--truncation {options.truncation} is only available with the transformers backend"
            )
        if cls.reads_model_files:
            check_model_path(options.model)

    @classmethod
    @abstractmethod
    def from_options(cls, options: RunOptions) -> Self:
        """The backend a run's options ask for, loaded: each backend reads the options it takes."""

    def _unsupported(self, what: str) -> UnsupportedRequest:
        return UnsupportedRequest(f"{self.identity.name} ({self.identity.kind}) cannot compute {what}")

    def classify(self, texts: Sequence[str]) -> list[list[float]]:
        """Each text's class probabilities, in the order of ``identity.labels`` (classifiers)."""
        raise self._unsupported("class probabilities")

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """log P(continuation | context) per (context, continuation), summed over its tokens."""
        raise self._unsupported("continuation log-likelihoods")

    def sentence_logprob(self, texts: Sequence[str]) -> list[float]:
        """log P(text) under a causal LM: every token after the first, given those before it."""
        raise self._unsupported("sentence log-likelihoods")

    def pseudo_loglikelihood(self, texts: Sequence[str]) -> list[float]:
        """Σ_i log P(w_i | text with w_i masked) per text, under a masked LM (Salazar et al. 2020)."""
        raise self._unsupported("pseudo-log-likelihoods (a masked LM is needed)")

    def shared_token_pll(
        self, pairs: Sequence[tuple[str, str]], rule: PairRule = "paper"
    ) -> list[tuple[float, float, int]]:
        """Per pair (a, b): Σ log P(u | sentence with u masked) over the tokens u the two sentences
        share (evaluator.alignment, under ``rule``), masked one at a time, for a and for b, and
        the number of shared tokens scored (CrowS-Pairs, Nangia et al. 2020)."""
        raise self._unsupported("shared-token pseudo-log-likelihoods (a masked LM is needed)")

    def pll_inputs(self, texts: Sequence[str]) -> list[PllInput]:
        """Each text's input ids and the positions pseudo-log-likelihood masks and scores."""
        raise self._unsupported("pseudo-log-likelihood inputs (a masked LM is needed)")

    def masked_logprobs(self, inputs: Sequence[PllInput]) -> list[list[float]]:
        """log P(ids[p] | ids with p masked) for each input's positions p, in their order."""
        raise self._unsupported("masked-token log-probabilities (a masked LM is needed)")

    def fill_mask(self, texts: Sequence[str], k: int) -> list[list[str]]:
        """The k most likely words for the single mask marker `[M]` in each text (masked LMs)."""
        raise self._unsupported("mask filling (a masked LM is needed)")

    @abstractmethod
    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        """K completions per prompt (K = settings.num_return_sequences)."""

    def preflight(self, method: str, requests: Sequence[Any], settings: Any = None) -> None:
        """Called with every request of a call before any is computed: raise InputTooLong when an
        input cannot fit the model (backends without a known context limit accept everything)."""
        return None

    def environment(self) -> dict[str, Any]:
        """Library versions and devices for run.json and the signature (nothing by default)."""
        return {}

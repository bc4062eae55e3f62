"""vLLM backend for high-throughput generation on a GPU (optional: `pip install polyprobe[vllm]`;
imported only when chosen). Generation with n samples per prompt and a seed; log-likelihoods
from prompt log-probabilities."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from evaluator.backends.base import Backend, GenerationSettings, ModelIdentity
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions


def _vllm() -> Any:
    try:
        import vllm
    except ImportError:
        raise EvaluationError(
            "the vllm backend needs vLLM: pip install 'polyprobe[vllm]' (on a machine with a GPU)"
        ) from None
    return vllm


class VllmBackend(Backend):
    """A causal LM in a vLLM engine: generation and sentence log-likelihoods."""

    llm: Any

    @classmethod
    def from_options(cls, options: RunOptions) -> Self:
        """The run's model with its dtype, seed and tensor parallelism."""
        return cls.load(
            options.model, dtype=options.dtype, seed=options.seed, tensor_parallel=options.tensor_parallel
        )

    @classmethod
    def load(
        cls,
        model: str,
        *,
        dtype: str = "auto",
        seed: int = 0,
        revision: str | None = None,
        tensor_parallel: int = 1,
    ) -> Self:
        """``tensor_parallel`` > 1 splits the model over that many GPUs with vLLM's own worker
        processes ("mp"): inside a sweep's Ray actor those are the GPUs Ray gave the actor."""
        if dtype == "fp64":
            raise EvaluationError(
                "vLLM does not run fp64 models: use --backend transformers for --dtype fp64"
            )
        vllm = _vllm()
        parallel: dict[str, Any] = {}
        if tensor_parallel > 1:
            parallel = {"tensor_parallel_size": tensor_parallel, "distributed_executor_backend": "mp"}
        llm = vllm.LLM(
            model=model,
            dtype={"auto": "auto", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}[dtype],
            seed=seed,
            revision=revision,
            **parallel,
        )
        identity = ModelIdentity(name=model, resolved=model, revision=revision or "unpinned", kind="causal")
        backend = cls(identity=identity, settings={"dtype": dtype, "engine": "vllm"})
        backend.llm = llm
        return backend

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        """All prompts in one engine call, K samples each (``n``), seeded when sampling."""
        vllm = _vllm()
        params = vllm.SamplingParams(
            n=settings.num_return_sequences,
            temperature=settings.temperature if settings.strategy == "sample" else 0.0,
            top_p=settings.top_p if settings.strategy == "sample" else 1.0,
            max_tokens=settings.max_new_tokens,
            seed=settings.seed if settings.strategy == "sample" else None,
            stop=list(settings.stop) or None,
        )
        if settings.chat:
            messages = [[{"role": "user", "content": p}] for p in prompts]
            outputs = self.llm.chat(messages, params)
        else:
            outputs = self.llm.generate(list(prompts), params)
        return [[c.text.strip() for c in o.outputs] for o in outputs]

    def sentence_logprob(self, texts: Sequence[str]) -> list[float]:
        """Σ log P(token | tokens before it) from vLLM's prompt log-probabilities (the first token
        unscored, as in the transformers backend)."""
        vllm = _vllm()
        params = vllm.SamplingParams(max_tokens=1, prompt_logprobs=0)
        outputs = self.llm.generate(list(texts), params)
        scores = []
        for out in outputs:
            total = 0.0
            for token_id, entry in zip(out.prompt_token_ids[1:], out.prompt_logprobs[1:], strict=True):
                total += float(entry[token_id].logprob)
            scores.append(total)
        return scores

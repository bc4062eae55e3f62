"""Generation with the transformers backend: K completions per prompt, greedy, by beam search or
sampled (each prompt seeded by the seed and its own text, so the completions do not depend on
the batching), cut at the first stop string."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import torch

from evaluator.backends.base import GenerationSettings
from evaluator.backends.hf_inputs import TransformersModel
from evaluator.errors import UnsupportedRequest


class GenerationRequests(TransformersModel):
    """generate on a transformers causal or seq2seq LM."""

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        """K completions per prompt: greedy gives one, beam search the K best beams, sampling
        seeds each prompt by (seed, prompt) so batching changes nothing."""
        if self.identity.kind not in ("causal", "seq2seq"):
            raise UnsupportedRequest(
                f"generation needs a causal or seq2seq LM; {self.identity.name} is {self.identity.kind}"
            )
        k = settings.num_return_sequences
        kwargs: dict[str, Any] = {
            "max_new_tokens": settings.max_new_tokens,
            "num_return_sequences": k,
            "pad_token_id": self.tokenizer.pad_token_id,
        }
        if settings.strategy == "sample":
            kwargs.update(do_sample=True, temperature=settings.temperature, top_p=settings.top_p)
        elif settings.strategy == "beam":
            kwargs.update(do_sample=False, num_beams=max(k, 2))
        else:
            kwargs.update(do_sample=False)
            if k != 1:
                raise UnsupportedRequest(
                    "greedy decoding gives one completion: use --strategy sample or beam for K > 1"
                )
        texts = [self._prompt(p, settings.chat) for p in prompts]
        seq2seq = self.identity.kind == "seq2seq"
        fitted = self._generation_inputs(texts, seq2seq, settings)
        advance = self.progress("generating", len(texts))

        def run(batch: list[str]) -> list[list[str]]:
            if settings.strategy == "sample":
                # one prompt at a time, seeded by (seed, prompt): the same completions whatever the batching
                results = []
                for text in batch:
                    seed = int(hashlib.sha256(f"{settings.seed}\0{text}".encode()).hexdigest()[:8], 16)
                    torch.manual_seed(seed)
                    results.extend(self._generate([text], kwargs, seq2seq, fitted))
                return [results[i * k : (i + 1) * k] for i in range(len(batch))]
            flat = self._generate(batch, kwargs, seq2seq, fitted)
            return [flat[i * k : (i + 1) * k] for i in range(len(batch))]

        out = self.batcher.run(texts, lambda t: len(t), lambda n, b: n * b * max(k, 1) * 256, run, advance)
        return [[_cut(c, settings.stop) for c in row] for row in out]

    def _generation_inputs(
        self, texts: list[str], seq2seq: bool, settings: GenerationSettings
    ) -> dict[str, list[int]]:
        """Each prompt's input ids, checked against the model's limit before anything is
        generated (a causal LM's prompt leaves room for the new tokens)."""
        if seq2seq:
            encoded = self._encode_whole(texts)
            return {t: list(e["input_ids"]) for t, e in zip(texts, encoded, strict=True)}
        out: dict[str, list[int]] = {}
        for text in texts:
            row = self._encode([text], special=False)[0]
            if not settings.chat:  # a chat template writes its own special tokens
                row = self._with_bos(row)
            out[text] = self._fit_context(row, 0, reserve=settings.max_new_tokens)
        return out

    def _generate(
        self, batch: list[str], kwargs: dict[str, Any], seq2seq: bool, fitted: dict[str, list[int]]
    ) -> list[str]:
        if seq2seq:
            ids, mask = self._pad([fitted[t] for t in batch])
            with torch.inference_mode():
                out = self.model.generate(input_ids=ids, attention_mask=mask, **kwargs)
            return [self.tokenizer.decode(o, skip_special_tokens=True) for o in out]
        ids, mask = self._pad([fitted[t] for t in batch], left=True)
        with torch.inference_mode():
            out = self.model.generate(input_ids=ids, attention_mask=mask, **kwargs)
        new = out[:, ids.shape[1] :]
        return [self.tokenizer.decode(o, skip_special_tokens=True) for o in new]


def _cut(text: str, stops: tuple[str, ...]) -> str:
    cut = len(text)
    for stop in stops:
        at = text.find(stop)
        if at != -1:
            cut = min(cut, at)
    return text[:cut].strip()

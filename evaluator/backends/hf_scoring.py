"""Requests the transformers backend answers with one forward pass over given text: a sequence
classifier's class probabilities, and the log-likelihood of a sentence or of a continuation
under a causal or seq2seq LM."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from evaluator.backends.hf_inputs import TransformersModel, at_least_fp32
from evaluator.errors import InputTooLong, UnsupportedRequest


class ScoringRequests(TransformersModel):
    """classify, sentence_logprob and loglikelihood on a transformers model."""

    def classify(self, texts: Sequence[str]) -> list[list[float]]:
        """The softmax of a sequence classifier's logits, per text."""
        if self.identity.kind != "classifier":
            raise UnsupportedRequest(
                f"{self.identity.name} is a {self.identity.kind} model, not a sequence classifier"
            )
        encoded = [list(e["input_ids"]) for e in self._encode_whole(texts)]
        advance = self.progress("classifying", len(texts))

        def run(batch: list[list[int]]) -> list[list[float]]:
            ids, mask = self._pad(batch)
            probs = torch.softmax(self._forward(ids, mask), dim=-1)
            return [[float(x) for x in row] for row in probs.cpu()]

        return self.batcher.run(encoded, len, lambda n, b: n * b * 64, run, advance)

    def _score_spans(self, rows: list[tuple[list[int], int]]) -> list[float]:
        """Σ log P(token_i | tokens_<i) for i ≥ start, each row (ids, start), causal LM."""
        advance = self.progress("scoring", len(rows))

        def run(batch: list[tuple[list[int], int]]) -> list[float]:
            ids, mask = self._pad([r[0] for r in batch])
            logp = torch.log_softmax(self._forward(ids, mask), dim=-1)
            out = []
            for i, (row, start) in enumerate(batch):
                positions = torch.arange(max(start, 1), len(row), device=logp.device)
                targets = ids[i, positions]
                out.append(float(logp[i, positions - 1, targets].sum()))
            return out

        return self.batcher.run(rows, lambda r: len(r[0]), lambda n, b: n * b * self.vocab, run, advance)

    def sentence_logprob(self, texts: Sequence[str]) -> list[float]:
        """log P(text) under a causal LM: every token after the BOS token (after the first token
        with a tokenizer that has none)."""
        if self.identity.kind not in ("causal",):
            raise UnsupportedRequest(
                f"sentence log-likelihood needs a causal LM; {self.identity.name} is {self.identity.kind}"
            )
        rows = []
        for ids in self._encode(texts, special=False):
            whole = self._with_bos(ids)
            if self.limit is not None and len(whole) > self.limit:
                if self.truncation == "error":
                    raise InputTooLong(len(whole), self.limit, 1, self.tokenizer.decode(ids))
                head = whole[:1]
                body = whole[1:]
                room = self.limit - 1
                whole = head + (body[len(body) - room :] if self.truncation == "left" else body[:room])
                self.truncated += 1
            rows.append((whole, 1))
        return self._score_spans(rows)

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        """log P(continuation | context) under a causal LM (the context after a BOS token, cut
        to fit under a truncation policy) or a seq2seq LM (the context as encoder input)."""
        if self.identity.kind == "seq2seq":
            return self._seq2seq_loglikelihood(requests)
        if self.identity.kind != "causal":
            raise UnsupportedRequest(
                f"continuation log-likelihood needs a causal or seq2seq LM; {self.identity.name} is {self.identity.kind}"
            )
        rows = []
        for context, continuation in requests:
            ctx = self._with_bos(self._encode([context], special=False)[0])
            cont = self._encode([continuation], special=False)[0]
            if not cont:
                raise UnsupportedRequest(f"empty continuation for context {context[:40]!r}")
            ctx = self._fit_context(ctx, len(cont))
            rows.append((ctx + cont, len(ctx)))
        return self._score_spans(rows)

    def _seq2seq_loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        contexts = {
            c: list(e["input_ids"])
            for c, e in zip(
                [c for c, _ in requests], self._encode_whole([c for c, _ in requests]), strict=True
            )
        }
        advance = self.progress("scoring", len(requests))

        def run(batch: list[tuple[str, str]]) -> list[float]:
            ids, mask = self._pad([contexts[c] for c, _ in batch])
            enc = {"input_ids": ids, "attention_mask": mask}
            labels = self.tokenizer([t for _, t in batch], return_tensors="pt", padding=True)["input_ids"].to(
                self.device
            )
            labels[labels == self.tokenizer.pad_token_id] = -100
            with torch.inference_mode():
                logits = at_least_fp32(self.model(**enc, labels=labels).logits)
            logp = torch.log_softmax(logits, dim=-1)
            safe = labels.clamp(min=0)
            picked = logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1) * (labels != -100)
            return [float(x) for x in picked.sum(-1).cpu()]

        return self.batcher.run(
            list(requests), lambda r: len(r[0]) + len(r[1]), lambda n, b: n * b * self.vocab, run, advance
        )

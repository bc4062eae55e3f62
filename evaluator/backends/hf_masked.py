"""The masked-LM requests of the transformers backend: pseudo-log-likelihood (Salazar et al. 2020)
with every masked copy of a batch of sentences in one forward pass, special tokens never masked
and the log-probability read at the masked position itself; CrowS-Pairs' shared-token score on
the same primitives; and mask filling."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from evaluator.alignment import PairRule
from evaluator.backends.base import PllInput
from evaluator.backends.hf_inputs import MARKER, TransformersModel, at_least_fp32
from evaluator.backends.shared_pll import shared_token_pll
from evaluator.errors import InputTooLong, UnsupportedRequest


class MaskedLMRequests(TransformersModel):
    """pll_inputs, masked_logprobs, pseudo_loglikelihood, shared_token_pll and fill_mask on a
    transformers masked LM."""

    def _mlm_head(self) -> torch.nn.Module | None:
        """The masked-LM head when the model is an encoder plus one head module (BERT's `cls`,
        RoBERTa's `lm_head`, ...), so it can be applied to the masked positions alone."""
        base = self.model.base_model
        others = [m for _, m in self.model.named_children() if m is not base]
        return others[0] if base is not self.model and len(others) == 1 else None

    def pll_inputs(self, texts: Sequence[str]) -> list[PllInput]:
        """Each text's input ids and the positions pseudo-log-likelihood scores: every token that
        is not a special token *of this encoding* (the tokenizer's ``special_tokens_mask``), so
        unknown-word tokens ([UNK], <unk>) are masked and scored like any other word."""
        if self.identity.kind != "masked":
            raise UnsupportedRequest(
                f"pseudo-log-likelihood needs a masked LM; {self.identity.name} is {self.identity.kind}"
            )
        out = []
        for enc in self._encode_whole(texts, return_special_tokens_mask=True):
            ids = list(enc["input_ids"])
            special = list(enc["special_tokens_mask"])
            out.append(PllInput(ids, tuple(i for i, s in enumerate(special) if not s)))
        return out

    def masked_logprobs(self, inputs: Sequence[PllInput]) -> list[list[float]]:
        """For each input, log P_MLM(ids[p] | ids with only position p masked) at every position p
        of ``positions``, in that order: one masked copy per position, all copies of a batch of
        inputs through the model together, the log-probability read at the masked position."""
        if self.identity.kind != "masked":
            raise UnsupportedRequest(
                f"masked-token log-probabilities need a masked LM; {self.identity.name} is {self.identity.kind}"
            )
        mask_id = self.tokenizer.mask_token_id
        if mask_id is None:
            raise UnsupportedRequest(f"{self.identity.name} has no mask token")
        if self.limit is not None and inputs:
            longest = max(range(len(inputs)), key=lambda i: len(inputs[i].ids))
            if len(inputs[longest].ids) > self.limit:
                raise InputTooLong(
                    len(inputs[longest].ids),
                    self.limit,
                    sum(len(i.ids) > self.limit for i in inputs),
                    self.tokenizer.decode(list(inputs[longest].ids)),
                )
        copies: list[tuple[int, list[int], int, int]] = []  # (input, ids, masked position, original id)
        for index, item in enumerate(inputs):
            for pos in item.positions:
                if not 0 <= pos < len(item.ids):
                    raise UnsupportedRequest(
                        f"position {pos} is outside input {index} ({len(item.ids)} tokens)"
                    )
                masked = list(item.ids)
                masked[pos] = mask_id
                copies.append((index, masked, pos, item.ids[pos]))
        advance = self.progress("pseudo-log-likelihood", len(copies))

        head = self._mlm_head()

        def run(batch: list[tuple[int, list[int], int, int]]) -> list[float]:
            ids, mask = self._pad([c[1] for c in batch])
            rows = torch.arange(len(batch), device=ids.device)
            positions = torch.tensor([c[2] for c in batch], device=ids.device)
            targets = torch.tensor([c[3] for c in batch], device=ids.device)
            with torch.inference_mode():
                if head is not None:
                    # the vocabulary projection only where a token is masked, not at every position
                    hidden = self.model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
                    logits = at_least_fp32(head(hidden[rows, positions]))
                else:
                    logits = at_least_fp32(
                        self.model(input_ids=ids, attention_mask=mask).logits[rows, positions]
                    )
            logp = torch.log_softmax(logits, dim=-1)
            return [float(x) for x in logp[rows, targets].cpu()]

        per_token = self.vocab if head is None else 4 * int(self.model.config.hidden_size)
        scores = self.batcher.run(copies, lambda c: len(c[1]), lambda n, b: n * b * per_token, run, advance)
        out: list[list[float]] = [[] for _ in inputs]
        for (index, *_), score in zip(copies, scores, strict=True):
            out[index].append(score)
        return out

    def pseudo_loglikelihood(self, texts: Sequence[str]) -> list[float]:
        """PLL(S) = Σ_{i scored} log P_MLM(w_i | S with w_i replaced by [MASK]) (Salazar et al.
        2020), the scored positions those of :meth:`pll_inputs`."""
        return [sum(scores) for scores in self.masked_logprobs(self.pll_inputs(texts))]

    def shared_token_pll(
        self, pairs: Sequence[tuple[str, str]], rule: PairRule = "paper"
    ) -> list[tuple[float, float, int]]:
        """CrowS-Pairs' score of each pair, on pll_inputs and masked_logprobs (shared_pll)."""
        return shared_token_pll(self, pairs, rule)  # CrowS-Pairs: evaluator/backends/shared_pll.py

    def fill_mask(self, texts: Sequence[str], k: int) -> list[list[str]]:
        """The k most likely tokens, decoded, at each text's single [M] (the tokenizer's mask)."""
        if self.identity.kind != "masked":
            raise UnsupportedRequest(
                f"mask filling needs a masked LM; {self.identity.name} is {self.identity.kind}"
            )
        mask = self.tokenizer.mask_token
        for text in texts:
            if text.count(MARKER) != 1:
                raise UnsupportedRequest(f"a fill-mask text needs exactly one {MARKER}: {text[:60]!r}")
        mask_id = self.tokenizer.mask_token_id
        rows = [list(e["input_ids"]) for e in self._encode_whole([t.replace(MARKER, mask) for t in texts])]
        for text, row in zip(texts, rows, strict=True):
            if mask_id not in row:
                raise UnsupportedRequest(
                    f"--truncation {self.truncation} cut the {MARKER} slot out of {text[:60]!r}"
                )
        advance = self.progress("filling masks", len(rows))

        def run(batch: list[list[int]]) -> list[list[str]]:
            ids, attn = self._pad(batch)
            logits = self._forward(ids, attn)
            out = []
            for i, row in enumerate(batch):
                pos = row.index(mask_id)
                top = torch.topk(logits[i, pos], k).indices.tolist()
                out.append([self.tokenizer.decode([t]).strip() for t in top])
            return out

        return self.batcher.run(rows, len, lambda n, b: n * b * self.vocab, run, advance)

"""What the transformers backend's requests share: the loaded model and tokenizer, and how texts
become the model's inputs (encoded, padded, fitted to the model's context or refused with the
longest input named), checked before anything is computed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from evaluator.backends.base import Backend, GenerationSettings
from evaluator.backends.hf_batching import Batcher
from evaluator.errors import InputTooLong, TokenizerUnfit

MARKER = "[M]"
"""The mask slot in a fill-mask text, replaced by the tokenizer's own mask token."""
UNKNOWN_SHARE = 0.9
"""A tokenizer that reads at least this share of the probe texts' tokens as its unknown token
cannot read them: the run is refused (see TokenizerUnfit)."""
VOCABULARY_SAMPLE = 500
"""Texts (spread over the whole request list, so every locale counts) checked for it."""


def at_least_fp32(values: torch.Tensor) -> torch.Tensor:
    """Logits for log-softmax: bf16 and fp16 raised to fp32, fp64 kept (--dtype fp64 is for
    checking numbers against another implementation to far below fp32's rounding)."""
    return values if values.dtype == torch.float64 else values.float()


class _HandledByPolyprobe(logging.Filter):
    """transformers' warnings about what polyprobe handles itself, so they are not printed: an
    input longer than the model's context is refused with a located error, or cut and counted
    under --truncation (see ``_encode_whole``); the tokenizer's "will result in indexing errors"
    would only repeat it, wrongly."""

    HANDLED = ("Token indices sequence length is longer than the specified maximum sequence length",)

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.HANDLED)


logging.getLogger("transformers.tokenization_utils_base").addFilter(_HandledByPolyprobe())


class TransformersModel(Backend):
    """A transformers model and its tokenizer, with the input handling every request family
    (evaluator.backends.hf_scoring, hf_masked, hf_generation) builds on."""

    model: Any
    tokenizer: Any
    device: torch.device
    batcher: Batcher
    limit: int | None = None
    """The most tokens one input may have (None: no fixed limit)."""
    vocabulary_checked: bool = False
    """Whether check_vocabulary has looked at the probe texts (it does once)."""

    @property
    def vocab(self) -> int:
        """The vocabulary's size: the width of a row of logits, which prices a batch."""
        return int(self.model.config.vocab_size)

    def _pad(self, rows: list[list[int]], left: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(r) for r in rows)
        pad = int(self.tokenizer.pad_token_id)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            if left:
                ids[i, width - len(row) :] = torch.tensor(row)
                mask[i, width - len(row) :] = 1
            else:
                ids[i, : len(row)] = torch.tensor(row)
                mask[i, : len(row)] = 1
        return ids.to(self.device), mask.to(self.device)

    def _forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        with torch.inference_mode():
            return at_least_fp32(self.model(**kwargs).logits)

    def _encode(self, texts: Sequence[str], special: bool = True) -> list[list[int]]:
        return [list(self.tokenizer(t, add_special_tokens=special)["input_ids"]) for t in texts]

    def _encode_whole(self, texts: Sequence[str], **extra: Any) -> list[Any]:
        """Texts encoded with special tokens, each at most ``limit`` tokens: too long is an
        InputTooLong error, or cut on the side ``truncation`` names (counted in ``truncated``)."""
        encodings = [self.tokenizer(t, **extra) for t in texts]
        limit = self.limit
        if limit is None:
            return encodings
        long = [i for i, e in enumerate(encodings) if len(e["input_ids"]) > limit]
        if not long:
            return encodings
        if self.truncation == "error":
            worst = max(long, key=lambda i: len(encodings[i]["input_ids"]))
            raise InputTooLong(len(encodings[worst]["input_ids"]), limit, len(long), texts[worst])
        self.tokenizer.truncation_side = self.truncation
        for i in long:
            encodings[i] = self.tokenizer(texts[i], truncation=True, max_length=limit, **extra)
        self.truncated += len(long)
        return encodings

    def _fit_context(self, context: list[int], continuation: int, reserve: int = 0) -> list[int]:
        """A prompt's ids shortened so that prompt + continuation (+ reserved new tokens) fit the
        limit, cut on the side ``truncation`` names (a leading BOS is kept); what is scored or
        generated is never cut."""
        limit = self.limit
        total = len(context) + continuation + reserve
        if limit is None or total <= limit:
            return context
        if self.truncation == "error" or continuation + reserve >= limit - 1:
            raise InputTooLong(
                len(context) + continuation, limit, 1, self.tokenizer.decode(context), reserve=reserve
            )
        keep = limit - continuation - reserve
        bos = self.tokenizer.bos_token_id
        head = context[:1] if bos is not None and context[:1] == [bos] else []
        body = context[len(head) :]
        room = keep - len(head)
        body = body[len(body) - room :] if self.truncation == "left" else body[:room]
        self.truncated += 1
        return head + body

    def _with_bos(self, ids: list[int]) -> list[int]:
        bos = self.tokenizer.bos_token_id
        return [bos, *ids] if bos is not None and (not ids or ids[0] != bos) else ids

    def _prompt(self, prompt: str, chat: bool) -> str:
        """The prompt as the model reads it: in the tokenizer's chat template when asked for and
        the tokenizer has one."""
        if chat and getattr(self.tokenizer, "chat_template", None):
            return str(
                self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
                )
            )
        return prompt

    # -- input lengths --------------------------------------------------------------------------

    def check_vocabulary(self, requests: Sequence[Any]) -> None:
        """Refuse a tokenizer that reads the probe texts (almost) entirely as its unknown token
        (TokenizerUnfit, naming the model): checked once, on a sample spread over the requests."""
        unknown = self.tokenizer.unk_token_id
        if self.vocabulary_checked or unknown is None:
            return
        texts = [t for r in requests for t in (r if isinstance(r, tuple) else (r,)) if isinstance(t, str)]
        if not texts:
            return
        self.vocabulary_checked = True
        sample = texts[:: max(1, len(texts) // VOCABULARY_SAMPLE)]
        ids = [i for row in self.tokenizer(sample, add_special_tokens=False)["input_ids"] for i in row]
        share = sum(1 for i in ids if i == unknown) / len(ids) if ids else 0.0
        if share >= UNKNOWN_SHARE:
            folder = Path(self.identity.resolved)
            files = ", ".join(sorted(p.name for p in folder.iterdir())) if folder.is_dir() else ""
            raise TokenizerUnfit(
                f"model {self.identity.name!r}: its tokenizer reads {share:.0%} of the probe texts' tokens "
                f"as the unknown token {self.tokenizer.unk_token!r}, so nothing it scores would mean "
                "anything; nothing was scored"
                + (f" (the folder holds {files}: are its tokenizer files missing?)" if files else "")
            )

    def preflight(self, method: str, requests: Sequence[Any], settings: Any = None) -> None:
        """Every input of a call measured before anything runs: a tokenizer that cannot read the
        texts is refused; without a truncation policy, the longest input that does not fit is an
        InputTooLong error naming its length and the limit."""
        if method != "masked_logprobs":  # those requests are token ids already
            self.check_vocabulary(requests)
        if self.limit is None or self.truncation != "error":
            return  # no limit, or a policy that cuts (and counts) what does not fit
        causal = self.identity.kind == "causal"
        sizes: list[tuple[int, int, str]] = []  # (tokens, tokens to generate, text)
        if method in ("classify", "pseudo_loglikelihood", "fill_mask"):
            mask = self.tokenizer.mask_token or ""
            for text in requests:
                sizes.append((len(self.tokenizer(str(text).replace(MARKER, mask))["input_ids"]), 0, text))
        elif method == "sentence_logprob":
            sizes = [(len(self._with_bos(self._encode([t], special=False)[0])), 0, t) for t in requests]
        elif method == "loglikelihood":
            for context, continuation in requests:
                if causal:
                    ctx = self._with_bos(self._encode([context], special=False)[0])
                    size = len(ctx) + len(self._encode([continuation], special=False)[0])
                else:
                    size = len(self.tokenizer(context)["input_ids"])
                sizes.append((size, 0, context))
        elif method == "masked_logprobs":
            sizes = [(len(ids), 0, self.tokenizer.decode(list(ids))) for ids, _ in requests]
        elif method == "generate" and isinstance(settings, GenerationSettings):
            for prompt in requests:
                text = self._prompt(prompt, settings.chat)
                if causal:
                    row = self._encode([text], special=False)[0]
                    row = row if settings.chat else self._with_bos(row)
                    sizes.append((len(row), settings.max_new_tokens, prompt))
                else:
                    sizes.append((len(self.tokenizer(text)["input_ids"]), 0, prompt))
        over = [s for s in sizes if s[0] + s[1] > self.limit]
        if over:
            worst = max(over, key=lambda s: s[0] + s[1])
            raise InputTooLong(worst[0], self.limit, len(over), worst[2], reserve=worst[1])

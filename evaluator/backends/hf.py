"""Hugging Face transformers backend: sequence classifiers, masked LMs, causal LMs and seq2seq
models, from a local folder or a hub name (a user with internet passes `xlm-roberta-base`).

Speed where the user has a GPU, correctness everywhere:
- device auto (CUDA when present), bf16 (fp16 without bf16 support) on GPU, fp32 on CPU;
- requests sorted longest-first (out-of-memory happens at once, estimates err high), batches
  sized by a token budget, halved on out-of-memory, answers restored to the input order;
- pseudo-log-likelihood with every masked copy of a batch of sentences in one forward pass,
  special tokens never masked, the log-probability read at the masked position itself.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch
import transformers
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    AutoTokenizer,
)

from evaluator.alignment import PairRule
from evaluator.backends.base import (
    Backend,
    GenerationSettings,
    ModelIdentity,
    ModelKind,
    PllInput,
    Truncation,
)
from evaluator.backends.shared_pll import shared_token_pll
from evaluator.errors import EvaluationError, InputTooLong, TokenizerUnfit, UnsupportedRequest

T = TypeVar("T")
R = TypeVar("R")
MARKER = "[M]"
WEIGHT_FILES = ("*.safetensors", "*.bin", "*.gguf", "*.json", "*.model", "*.txt", "*.tiktoken")
UNKNOWN_SHARE = 0.9
"""A tokenizer that reads at least this share of the probe texts' tokens as its unknown token
cannot read them: the run is refused (see TokenizerUnfit)."""
VOCABULARY_SAMPLE = 500
"""Texts (spread over the whole request list, so every locale counts) checked for it."""


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise EvaluationError("--device cuda was asked for, but no CUDA device is available")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "fp64": torch.float64}[
        dtype
    ]


def at_least_fp32(values: torch.Tensor) -> torch.Tensor:
    """Logits for log-softmax: bf16 and fp16 raised to fp32, fp64 kept (--dtype fp64 is for
    checking numbers against another implementation to far below fp32's rounding)."""
    return values if values.dtype == torch.float64 else values.float()


def files_revision(path: Path) -> str:
    """sha256 over a local model folder's files (names and bytes): its revision."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in WEIGHT_FILES for p in path.glob(pattern) if p.is_file()})
    for file in files:
        digest.update(file.name.encode() + b"\0")
        with file.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def detect_kind(config: Any, want: ModelKind | None) -> ModelKind:
    archs = " ".join(getattr(config, "architectures", None) or [])
    if want is not None:
        return want
    if "ForSequenceClassification" in archs:
        return "classifier"
    if "ForMaskedLM" in archs:
        return "masked"
    if getattr(config, "is_encoder_decoder", False) or "ForConditionalGeneration" in archs:
        return "seq2seq"
    return "causal"


def context_limit(model: Any, tokenizer: Any) -> int | None:
    """The most tokens one input may have: the model's position table (less RoBERTa-style
    models' offset, whose positions start after the padding index), or the tokenizer's
    ``model_max_length`` when that is smaller; None for models without a fixed length (T5)."""
    config = model.config
    limit = None
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            limit = value
            break
    if limit is not None:
        embeddings = getattr(model.base_model, "embeddings", None)
        padding = getattr(embeddings, "padding_idx", None)
        if isinstance(padding, int):
            limit -= padding + 1
    declared = getattr(tokenizer, "model_max_length", None)
    if isinstance(declared, int) and 0 < declared < 1_000_000:
        limit = declared if limit is None else min(limit, declared)
    return limit


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


class _HandledByPolyprobe(logging.Filter):
    """transformers' warnings about what polyprobe handles itself, so they are not printed: an
    input longer than the model's context is refused with a located error, or cut and counted
    under --truncation (see ``_encode_whole``); the tokenizer's "will result in indexing errors"
    would only repeat it, wrongly."""

    HANDLED = ("Token indices sequence length is longer than the specified maximum sequence length",)

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.HANDLED)


logging.getLogger("transformers.tokenization_utils_base").addFilter(_HandledByPolyprobe())


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
                if not _is_oom(exc) or size == 1:
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


class TransformersBackend(Backend):
    """Load with `TransformersBackend.load(name_or_path, kind=..., device=..., dtype=...)`."""

    model: Any
    tokenizer: Any
    device: torch.device
    batcher: Batcher
    limit: int | None = None
    """The most tokens one input may have (None: no fixed limit)."""
    vocabulary_checked: bool = False
    """Whether check_vocabulary has looked at the probe texts (it does once)."""

    @classmethod
    def load(
        cls,
        name: str,
        *,
        kind: ModelKind | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int | None = None,
        revision: str | None = None,
        gguf_file: str | None = None,
        resolved: str | None = None,
        positive_label: str | None = None,
        truncation: Truncation = "error",
    ) -> TransformersBackend:
        transformers.utils.logging.disable_progress_bar()  # polyprobe shows its own progress
        dev = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, dev)
        location = resolved or name
        extra: dict[str, Any] = {"revision": revision} if revision else {}
        if gguf_file:
            extra["gguf_file"] = gguf_file
        try:
            config = AutoConfig.from_pretrained(location, **extra)
            model_kind = detect_kind(config, kind)
            loader = {
                "classifier": AutoModelForSequenceClassification,
                "masked": AutoModelForMaskedLM,
                "causal": AutoModelForCausalLM,
                "seq2seq": AutoModelForSeq2SeqLM,
            }[model_kind]
            tokenizer = AutoTokenizer.from_pretrained(location, **extra)
            model = loader.from_pretrained(location, dtype=torch_dtype, **extra)
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"could not load model {name!r}: {exc}") from None
        except Exception as exc:  # a damaged file: safetensors, torch and tokenizers each raise their own
            first = (str(exc).strip().splitlines() or [""])[0]
            raise EvaluationError(
                f"could not load model {name!r}: {type(exc).__name__}: {first} (a damaged or incomplete file?)"
            ) from None
        model.to(dev).eval()
        local = Path(location)
        rev = (
            files_revision(local)
            if local.is_dir()
            else str(getattr(config, "_commit_hash", None) or revision or "unknown")
        )
        labels: tuple[str, ...] = ()
        if model_kind == "classifier":
            id2label = getattr(model.config, "id2label", {}) or {}
            labels = tuple(str(id2label.get(i, f"LABEL_{i}")).lower() for i in range(model.config.num_labels))
        identity = ModelIdentity(
            name=name, resolved=str(location), revision=rev, kind=model_kind, labels=labels
        )
        settings: dict[str, Any] = {"dtype": str(torch_dtype).removeprefix("torch.")}
        if truncation != "error":  # only a policy that can change a number joins the cache key
            settings["truncation"] = truncation
        backend = cls(identity=identity, settings=settings)
        backend.truncation = truncation
        backend.limit = context_limit(model, tokenizer)
        backend.model = model
        backend.tokenizer = tokenizer
        backend.device = dev
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        budget = 48_000_000 if dev.type == "cpu" else 400_000_000
        backend.batcher = Batcher(max_batch=batch_size, budget=budget)
        return backend

    # -- helpers -------------------------------------------------------------------------------

    @property
    def vocab(self) -> int:
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

    # -- classify ---------------------------------------------------------------------------------

    def classify(self, texts: Sequence[str]) -> list[list[float]]:
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

    # -- causal log-likelihoods -------------------------------------------------------------------

    def _with_bos(self, ids: list[int]) -> list[int]:
        bos = self.tokenizer.bos_token_id
        return [bos, *ids] if bos is not None and (not ids or ids[0] != bos) else ids

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

    # -- masked LM pseudo-log-likelihood --------------------------------------------------------

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
        return shared_token_pll(self, pairs, rule)  # CrowS-Pairs: evaluator/backends/shared_pll.py

    def fill_mask(self, texts: Sequence[str], k: int) -> list[list[str]]:
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

    # -- generation ------------------------------------------------------------------------------

    def _prompt(self, prompt: str, chat: bool) -> str:
        if chat and getattr(self.tokenizer, "chat_template", None):
            return str(
                self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
                )
            )
        return prompt

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
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

    def environment(self) -> dict[str, Any]:
        return {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "device": str(self.device),
            "cuda": torch.cuda.get_device_name(0) if self.device.type == "cuda" else None,
        }


def _cut(text: str, stops: tuple[str, ...]) -> str:
    cut = len(text)
    for stop in stops:
        at = text.find(stop)
        if at != -1:
            cut = min(cut, at)
    return text[:cut].strip()

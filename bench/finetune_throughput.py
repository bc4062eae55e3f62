"""Fine-tuning throughput (examples/s) of `polyprobe finetune` for an mBERT-sized model, against a
plain PyTorch training loop on the same model, batches and precision measured in the same run
(the ratio is what polyprobe's Trainer set-up costs or saves). No download: random weights built
from bert-base-multilingual-cased's shape (hidden 768, 12 layers, 12 heads, FFN 3072, vocabulary
119,547), a WordPiece tokenizer trained on the control set's sentences, and synthetic reviews of
about --tokens tokens each.

  .venv/bin/python bench/finetune_throughput.py [--examples 4096] [--batch-size 32] [--tokens 128]
  .venv/bin/python bench/finetune_throughput.py --tiny     # the code paths on CPU in a minute

Both runs train for the same number of steps (the examples once, --batch-size per step) in bf16
on a GPU that supports it (fp32 otherwise); the Trainer's figure is its own
train_samples_per_second, which excludes loading and saving."""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import torch
import yaml
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evaluator.finetune.data import Columns, Source, load_training_data  # noqa: E402
from evaluator.finetune.plan import FinetuneJob, TrainSettings  # noqa: E402
from evaluator.finetune.train import finetune  # noqa: E402
from tests.support.tiny_models import wordpiece_tokenizer  # noqa: E402

MBERT = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def sentences() -> list[str]:
    data = yaml.safe_load(
        (REPO / "templates" / "sentiment-control" / "sentences.yaml").read_text(encoding="utf-8")
    )
    return [t["text"] for t in data["templates"]]


def base_model(folder: Path, tiny: bool) -> Path:
    tokenizer = wordpiece_tokenizer(
        folder,
        {"unk": "[UNK]", "pad": "[PAD]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
        sentences(),
    )
    config = BertConfig(
        vocab_size=len(tokenizer) if tiny else 119_547,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        **(TINY if tiny else MBERT),
    )
    torch.manual_seed(0)
    BertForMaskedLM(config).save_pretrained(folder)
    return folder


def reviews(n: int, words: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` texts of about ``words`` words from the control set's sentences, half of each label."""
    rng = random.Random(seed)
    pool = sentences()
    out = []
    for i in range(n):
        text = []
        while len(text) < words:
            text += rng.choice(pool).split()
        out.append((" ".join(text[:words]) + f" #{i}", "positive" if i % 2 else "negative"))
    return out


def plain_loop(model_dir: Path, texts: list[tuple[str, str]], batch: int, tokens: int, bf16: bool) -> float:
    """Examples/s of forward, backward and AdamW steps on the same batches, nothing else."""
    from transformers import AutoTokenizer

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = BertForSequenceClassification.from_pretrained(model_dir, num_labels=2).to(device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    model.train()
    steps = len(texts) // batch
    started = None
    for step in range(steps + 1):  # the first step warms up and is not timed
        part = texts[(step % steps) * batch : (step % steps + 1) * batch]
        encoded = tokenizer(
            [t for t, _ in part], truncation=True, max_length=tokens, padding=True, return_tensors="pt"
        ).to(device)
        labels = torch.tensor([1 if label == "positive" else 0 for _, label in part], device=device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = model(**encoded, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        if step == 0:
            if device.type == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
    if device.type == "cuda":
        torch.cuda.synchronize()
    assert started is not None
    return steps * batch / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=4096)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model on CPU: the code paths only")
    args = parser.parse_args()
    if args.tiny:
        args.examples, args.batch_size, args.tokens = 64, 8, 32
    gpu = torch.cuda.is_available()
    bf16 = gpu and torch.cuda.is_bf16_supported()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = base_model(root / "base", args.tiny)
        texts = reviews(args.examples, int(args.tokens * 0.8))
        data_file = root / "train.csv"
        data_file.write_text(
            "text,label\n" + "".join(f'"{t}",{label}\n' for t, label in texts), encoding="utf-8"
        )
        data = load_training_data([Source("en", (data_file,), (), Columns())], validation_share=0.02)
        steps = len(data.languages["en"].train) // args.batch_size
        settings = TrainSettings(
            batch_size=args.batch_size,
            max_length=args.tokens,
            max_steps=steps,
            eval_steps=steps,
            dtype="auto",
        )
        job = FinetuneJob("bench", str(base), "mono", ("en",), 0, False, settings)
        result = finetune(job, data, root / "model")
        polyprobe = float(result.card["training"]["examples_per_second"])
        baseline = plain_loop(base, texts, args.batch_size, args.tokens, bf16)
    device = torch.cuda.get_device_name(0) if gpu else "CPU"
    shape = "2-layer tiny BERT" if args.tiny else "mBERT-sized BERT (178M parameters)"
    print(f"{shape} on {device}, {'bf16' if bf16 else 'fp32'}, batch {args.batch_size}, {args.tokens} tokens")
    print(f"polyprobe finetune (transformers Trainer): {polyprobe:.1f} examples/s over {steps} steps")
    print(f"plain PyTorch loop (same model and batches): {baseline:.1f} examples/s")
    print(f"ratio polyprobe / plain loop: {polyprobe / baseline:.2f}")


if __name__ == "__main__":
    main()

"""One fine-tuning: a binary sentiment classifier from a base model (a hub name or a folder: mBERT,
XLM-R, or the user's own pretrained checkpoint) with the transformers Trainer, on the languages of
a job, with Levy et al.'s settings by default (learning rate 2e-5, weight decay 0.01, 10 epochs,
the checkpoint with the best validation accuracy kept).

The result is a model folder `eval run --model` takes (weights, tokenizer, id2label negative /
positive) with a card: README.md (a Hugging Face model card) and finetune.json (base model and
revision, the data's files, hashes and counts per language and label, seed, settings, validation
accuracy per epoch and per language, the weights' sha256, throughput).

A GPU is used when there is one (bf16 where it supports it), the CPU otherwise; on the CPU the same
seed gives the same weights (full determinism). The folder is written whole or not at all; the
Trainer's checkpoints live next to it (``.NAME.checkpoints``) until it is written, so the same
command after an interruption resumes from the last one."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import transformers
from torch.utils.data import Dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    PrinterCallback,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

import toolkit
from evaluator.backends.hf import files_revision, resolve_device
from evaluator.backends.model_path import looks_like_path
from evaluator.errors import EvaluationError
from evaluator.finetune.data import LABELS, Example, TrainingData
from evaluator.finetune.plan import FinetuneJob
from evaluator.run_folder import refuse_inside_release
from toolkit.core.errors import InputError
from toolkit.core.fileio import current_umask
from toolkit.core.interrupts import discard, interrupts_held

CARD = "finetune.json"
Progress = Callable[[str, int], Callable[[int], None]]


def no_progress(description: str, total: int) -> Callable[[int], None]:
    return lambda n: None


@dataclass
class FinetuneResult:
    folder: Path
    card: dict[str, Any]

    @property
    def weights_sha256(self) -> str:
        return str(self.card["weights_sha256"])


class _Examples(Dataset[dict[str, Any]]):
    """Tokenised examples for the Trainer (no padding: the collator pads each batch)."""

    def __init__(self, examples: list[Example], tokenizer: Any, max_length: int) -> None:
        texts = [e.text for e in examples]
        encoded = {k: list(v) for k, v in tokenizer(texts, truncation=False).items()}
        long = [i for i, ids in enumerate(encoded["input_ids"]) if len(ids) > max_length]
        self.truncated = len(long)
        if long:  # only the long ones again, cut at the end (their special tokens kept)
            cut = tokenizer([texts[i] for i in long], truncation=True, max_length=max_length)
            for key, values in cut.items():
                for position, i in enumerate(long):
                    encoded[key][i] = values[position]
        self.items = [
            {**{k: v[i] for k, v in encoded.items()}, "labels": e.label} for i, e in enumerate(examples)
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.items[index]


class _Progress(TrainerCallback):  # type: ignore[misc]
    def __init__(self, progress: Progress, name: str) -> None:
        self.progress = progress
        self.name = name
        self.advance: Callable[[int], None] | None = None
        self.done = 0

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.advance = self.progress(f"{self.name}: training steps", int(state.max_steps))
        self.done = int(state.global_step)
        if self.done:
            self.advance(self.done)  # resumed: the steps of the checkpoint are done

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.advance is not None and state.global_step > self.done:
            self.advance(int(state.global_step) - self.done)
            self.done = int(state.global_step)


def base_revision(base: str, model: Any) -> str | None:
    """The base model's revision: the hub commit it was loaded at, or the sha256 of a folder's files."""
    path = Path(base).expanduser()
    if path.is_dir():
        return files_revision(path)
    commit = getattr(model.config, "_commit_hash", None)
    return str(commit) if commit else None


def _weights_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(folder.glob("*.safetensors")):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def _accuracy_by_language(locales: list[str]) -> Callable[[Any], dict[str, float]]:
    """The Trainer's compute_metrics: validation accuracy overall and per language (the
    validation examples are evaluated in order, so the i-th prediction is the i-th example's)."""

    def compute(prediction: Any) -> dict[str, float]:
        logits, labels = prediction.predictions, prediction.label_ids
        predicted = logits.argmax(axis=-1)
        out = {"accuracy": float((predicted == labels).mean())}
        for loc in sorted(set(locales)):
            mask = [i for i, x in enumerate(locales) if x == loc]
            out[f"accuracy_{loc}"] = float((predicted[mask] == labels[mask]).mean())
        return out

    return compute


def check_out(out: Path) -> None:
    """A model folder is written into a new or empty folder, never into a release or a folder with
    other files (a finished fine-tuning there is replaced only when asked: see ``overwrite``)."""
    refuse_inside_release(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file; give a folder for the model")


def _out_ready(out: Path, overwrite: bool) -> None:
    check_out(out)
    if out.is_dir() and any(out.iterdir()):
        if not (out / CARD).is_file():
            raise InputError(
                f"{out} holds files that are not a fine-tuned model's; choose a new or empty folder"
            )
        if not overwrite:
            raise InputError(f"{out} holds a fine-tuned model already; pass --overwrite to replace it")


def finetune(
    job: FinetuneJob,
    data: TrainingData,
    out: Path,
    *,
    overwrite: bool = False,
    progress: Progress = no_progress,
    log: Callable[[str], None] = lambda s: None,
) -> FinetuneResult:
    """Train ``job`` on ``data`` and write its model folder to ``out`` (whole, or not at all)."""
    _out_ready(out, overwrite)
    train, validation = _job_examples(job, data)
    data_sha = data.sha256(job.languages)
    work = out.parent / f".{out.name}.checkpoints"
    key = job.key(data_sha)
    _refuse_other_checkpoints(work, key)
    device = resolve_device(job.settings.device)
    use_bf16 = _use_bf16(job.settings.dtype, device)
    transformers.set_seed(job.seed, deterministic=device.type == "cpu")
    transformers.utils.logging.disable_progress_bar()
    # polyprobe shows its own progress and card; transformers' load report (the new head) and
    # the Trainer's printed log lines would only repeat them
    transformers.utils.logging.set_verbosity_error()
    tokenizer, model = _load_base(job.base)
    train_set = _Examples(train, tokenizer, job.settings.max_length)
    validation_set = _Examples(validation, tokenizer, job.settings.max_length)
    work.mkdir(parents=True, exist_ok=True)
    (work / "job.json").write_text(json.dumps({"key": key, "job": asdict(job)}, indent=2), encoding="utf-8")
    trainer = Trainer(
        model=model,
        args=_arguments(job, work, device.type, use_bf16),
        train_dataset=train_set,
        eval_dataset=validation_set,
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=_accuracy_by_language(_locales_of(data, job, "validation")),
        callbacks=[_Progress(progress, job.name)],
    )
    trainer.remove_callback(PrinterCallback)
    resume = any(work.glob("checkpoint-*"))
    if resume:
        log(f"{job.name}: resuming from the checkpoints in {work}")
    started = time.time()
    outcome = trainer.train(resume_from_checkpoint=True if resume else None)
    seconds = time.time() - started
    validated = _validation_card(trainer, job)
    card = {
        "polyprobe": toolkit.__version__,
        "name": job.name,
        "key": key,
        "task": "binary sentiment classification (negative, positive)",
        "base_model": {"name": job.base, "revision": base_revision(job.base, model)},
        "mode": job.mode,
        "languages": list(job.languages),
        "seed": job.seed,
        "balanced": job.balanced,
        "settings": asdict(job.settings),
        "precision": "bf16" if use_bf16 else "fp32",
        "device": device.type,
        "data": _data_card(job, data, data_sha, train_set, validation_set),
        "validation": validated,
        "training": {
            "steps": int(outcome.global_step),
            "seconds": round(seconds, 1),
            "examples_per_second": outcome.metrics.get("train_samples_per_second"),
            "resumed": resume,
        },
        "environment": _environment(device.type),
    }
    folder = _write_model(trainer, tokenizer, card, out)
    shutil.rmtree(work, ignore_errors=True)
    return FinetuneResult(folder=folder, card=json.loads((folder / CARD).read_text(encoding="utf-8")))


def _job_examples(job: FinetuneJob, data: TrainingData) -> tuple[list[Example], list[Example]]:
    """The job's training and validation examples; refused when a language has no data or no
    validation examples (a model would be trained that cannot be chosen by its accuracy)."""
    missing = [loc for loc in job.languages if loc not in data.languages]
    if missing:
        raise InputError(f"model {job.name}: no training data for {', '.join(missing)}")
    train = data.examples(job.languages, "train")
    validation = data.examples(job.languages, "validation")
    empty = [loc for loc in job.languages if not data.languages[loc].validation]
    if empty:
        raise InputError(
            f"model {job.name}: no validation examples for {', '.join(empty)} (give --validation files, or "
            "more data: the held-out share of a label with one example is empty)"
        )
    return train, validation


def _refuse_other_checkpoints(work: Path, key: str) -> None:
    """Checkpoints left by an interrupted fine-tuning are resumed only by the same job on the same
    data (their job.json names its key); others are refused, never mixed in."""
    if work.is_dir():
        marker = work / "job.json"
        made_for = json.loads(marker.read_text(encoding="utf-8")).get("key") if marker.is_file() else None
        if made_for != key:
            raise InputError(
                f"{work} holds the checkpoints of an interrupted fine-tuning with other settings or data; "
                "delete it to start afresh, or run that fine-tuning again to finish it"
            )


def _use_bf16(dtype: str, device: torch.device) -> bool:
    """bf16 when asked for, or with auto on a GPU that has it; refused on the CPU."""
    use_bf16 = dtype == "bf16" or (
        dtype == "auto" and device.type == "cuda" and torch.cuda.is_bf16_supported()
    )
    if use_bf16 and device.type != "cuda":
        raise InputError("--dtype bf16 needs a GPU; on the CPU fine-tuning runs in fp32")
    return use_bf16


def _load_base(base: str) -> tuple[Any, Any]:
    """The base model's tokenizer, and the model with a new two-label head (negative, positive)."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(base)
        model = AutoModelForSequenceClassification.from_pretrained(
            base,
            num_labels=2,
            id2label=dict(enumerate(LABELS)),
            label2id={name: i for i, name in enumerate(LABELS)},
            ignore_mismatched_sizes=True,  # a base with a head of other labels gets a new head
        )
    except OSError as exc:
        where = "the path does not exist" if looks_like_path(base) else "not a local folder or a hub model"
        raise EvaluationError(f"base model {base} cannot be loaded ({where}): {exc}") from None
    return tokenizer, model


def _arguments(job: FinetuneJob, work: Path, device: str, use_bf16: bool) -> TrainingArguments:
    """The Trainer's arguments: the job's settings, validated and checkpointed every epoch (or
    every --eval-steps), the best checkpoint by validation accuracy kept, seeded throughout."""
    per_epoch = job.settings.eval_steps is None
    return TrainingArguments(
        output_dir=str(work),
        learning_rate=job.settings.learning_rate,
        weight_decay=job.settings.weight_decay,
        num_train_epochs=job.settings.epochs,
        max_steps=job.settings.max_steps or -1,
        per_device_train_batch_size=job.settings.batch_size,
        per_device_eval_batch_size=max(job.settings.batch_size, 32),
        eval_strategy="epoch" if per_epoch else "steps",
        save_strategy="epoch" if per_epoch else "steps",
        logging_strategy="epoch" if per_epoch else "steps",
        eval_steps=job.settings.eval_steps,
        save_steps=job.settings.eval_steps or 500,
        logging_steps=job.settings.eval_steps or 500,
        save_total_limit=2,  # the best and the latest (to resume from)
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
        greater_is_better=True,
        seed=job.seed,
        data_seed=job.seed,
        full_determinism=device == "cpu",
        use_cpu=device == "cpu",
        bf16=use_bf16,
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )


def _data_card(
    job: FinetuneJob, data: TrainingData, data_sha: str, train_set: _Examples, validation_set: _Examples
) -> dict[str, Any]:
    """The card's data: what the model was trained on, per language, and how it was split."""
    return {
        "sha256": data_sha,
        "counts": {loc: data.languages[loc].counts() for loc in job.languages},
        "files": {loc: [vars(f) for f in data.languages[loc].files] for loc in job.languages},
        "validation_from": {loc: data.languages[loc].validation_from for loc in job.languages},
        "split_seed": data.split_seed,
        "validation_share": data.validation_share,
        "columns": {loc: data.languages[loc].columns.describe() for loc in job.languages},
        **({"balance": data.balance_note} if data.balanced else {}),
        "truncated": {"train": train_set.truncated, "validation": validation_set.truncated},
    }


def _validation_card(trainer: Trainer, job: FinetuneJob) -> dict[str, Any]:
    """The card's validation: the kept checkpoint's accuracy, overall and per language, and every
    validation of the training."""
    history = [
        {k: v for k, v in entry.items() if k.startswith("eval_") or k in ("epoch", "step")}
        for entry in trainer.state.log_history
        if "eval_accuracy" in entry
    ]
    best = trainer.evaluate()  # the kept checkpoint, loaded at the end of training
    return {
        "best_checkpoint": trainer.state.best_model_checkpoint
        and Path(trainer.state.best_model_checkpoint).name,
        "accuracy": best.get("eval_accuracy"),
        "per_language": {loc: best.get(f"eval_accuracy_{loc}") for loc in job.languages},
        "history": history,
    }


def _environment(device: str) -> dict[str, Any]:
    """The card's environment: the versions (and threads) that a rerun needs for the same weights."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),  # CPU sums depend on it: same seed and threads, same weights
        "transformers": transformers.__version__,
        "cuda": torch.cuda.get_device_name(0) if device == "cuda" else None,
    }


def _locales_of(data: TrainingData, job: FinetuneJob, split: str) -> list[str]:
    return [loc for loc in job.languages for _ in getattr(data.languages[loc], split)]


def _write_model(trainer: Trainer, tokenizer: Any, card: dict[str, Any], out: Path) -> Path:
    """The best model, its tokenizer and its card, written into a temporary folder next to ``out``
    and renamed into place (an earlier model there is replaced only after the new one is whole)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp: Path | None = None
    old: Path | None = None
    try:
        with interrupts_held():
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        model: Any = trainer.model
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        card["weights_sha256"] = _weights_sha256(tmp)
        (tmp / CARD).write_text(
            json.dumps(card, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        (tmp / "README.md").write_text(model_card(card), encoding="utf-8")
        for file in tmp.iterdir():  # save_pretrained may write its files private
            os.chmod(file, 0o666 & ~current_umask())
        os.chmod(tmp, 0o777 & ~current_umask())
        with interrupts_held():
            if out.is_dir() and any(out.iterdir()):
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
                os.replace(out, old)
            elif out.is_dir():
                out.rmdir()
            os.replace(tmp, out)
            tmp = None
    finally:
        if tmp is not None:
            if old is not None and not out.exists():
                os.replace(old, out)
                old = None
            discard(tmp)
        if old is not None:
            discard(old)
    return out


def model_card(card: dict[str, Any]) -> str:
    """README.md: a Hugging Face model card (YAML header) saying what the model is and how it was
    made; finetune.json beside it has every detail."""
    counts = card["data"]["counts"]
    rows = "\n".join(
        f"| {loc} | {c['train']['positive']} | {c['train']['negative']} | {c['validation']['positive']} | "
        f"{c['validation']['negative']} | {_fmt(card['validation']['per_language'].get(loc))} |"
        for loc, c in counts.items()
    )
    settings = card["settings"]
    header = "\n".join(
        [
            "---",
            "library_name: transformers",
            "pipeline_tag: text-classification",
            f"base_model: {json.dumps(card['base_model']['name'])}",
            "language:",
            *(f"- {loc}" for loc in card["languages"]),
            "tags:",
            "- polyprobe",
            "- sentiment",
            "---",
        ]
    )
    return (
        f"{header}\n\n# {card['name']}\n\n"
        f"A binary sentiment classifier (negative, positive) fine-tuned by polyprobe {card['polyprobe']} "
        f"from `{card['base_model']['name']}` (revision `{card['base_model']['revision']}`), "
        f"{'monolingual' if card['mode'] == 'mono' else 'multilingual'} on {', '.join(card['languages'])}, "
        f"seed {card['seed']}{', labels balanced across languages' if card['balanced'] else ''}.\n\n"
        "| language | train positive | train negative | validation positive | validation negative | "
        "validation accuracy |\n|---|---|---|---|---|---|\n"
        f"{rows}\n\n"
        f"Overall validation accuracy of the kept checkpoint ({card['validation']['best_checkpoint']}): "
        f"{_fmt(card['validation']['accuracy'])}.\n\n"
        f"Training: learning rate {settings['learning_rate']}, weight decay {settings['weight_decay']}, "
        f"{settings['epochs']:g} epochs, batch size {settings['batch_size']}, at most {settings['max_length']} "
        f"tokens per text, {card['precision']} on {card['device']}; {card['training']['steps']} steps in "
        f"{card['training']['seconds']} s. Data sha256 `{card['data']['sha256']}`; weights sha256 "
        f"`{card['weights_sha256']}`.\n\n"
        "Score it with `polyprobe eval run --model THIS_FOLDER --task sentiment` (and `--task "
        "sentiment-control`); `finetune.json` has the data's files and hashes, the validation history "
        "and the environment.\n"
    )


def _fmt(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, float) else "—"

"""The fine-tunings of a monolingual vs multilingual comparison (Levy et al. 2023, phase 3): per
seed, one model per language on that language's data (mono) and one model on every language's
data together (multi). A language's data is the same in both (the same files, split and
balancing), so a multilingual model differs from the monolingual ones only in what it was given
besides."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import version
from typing import Literal

from toolkit.core.errors import InputError

Mode = Literal["mono", "multi"]
MODES: tuple[Mode, ...] = ("mono", "multi")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class TrainSettings:
    """What changes the weights besides the data and the seed (the defaults: Levy et al. 2023)."""

    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    epochs: float = 10.0
    batch_size: int = 16
    max_length: int = 128
    """Tokens per text; longer texts are cut at the end (and counted)."""
    eval_steps: int | None = None
    """Evaluate (and checkpoint) every N steps instead of every epoch."""
    max_steps: int | None = None
    """Stop after N optimisation steps (a smoke test); None: the epochs."""
    device: Literal["auto", "cuda", "cpu"] = "auto"
    dtype: Literal["auto", "bf16", "fp32"] = "auto"


@dataclass(frozen=True)
class FinetuneJob:
    """One model to train: a base model on the data of ``languages`` with one seed."""

    name: str
    """The model folder's name, e.g. mono-en-s0, multi-balanced-s1."""
    base: str
    mode: Mode
    languages: tuple[str, ...]
    seed: int
    balanced: bool
    settings: TrainSettings

    def key(self, data_sha256: str) -> str:
        """What a checkpoint folder must have been made for to be resumed."""
        text = json.dumps(
            {**asdict(self), "data": data_sha256, "transformers": version("transformers")}, sort_keys=True
        )
        return hashlib.sha256(text.encode()).hexdigest()


def job_name(mode: Mode, languages: Sequence[str], seed: int, balanced: bool) -> str:
    """``mono-en-s0``, ``multi-s1``, ``mono-de-balanced-s2``: the model folder's name."""
    parts = [mode, *([languages[0]] if mode == "mono" else []), *(["balanced"] if balanced else [])]
    return "-".join(parts) + f"-s{seed}"


def plan_jobs(
    base: str,
    modes: Sequence[Mode],
    languages: Sequence[str],
    seeds: Sequence[int],
    balanced: bool,
    settings: TrainSettings,
) -> list[FinetuneJob]:
    """Every job, mono before multi, then by language and seed."""
    if not modes:
        raise InputError("--mode: give mono, multi or both")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise InputError(f"--mode {unknown[0]}: choose mono or multi")
    if len(set(seeds)) != len(seeds):
        raise InputError("--seeds: a seed is given twice")
    if len(set(languages)) != len(languages):
        raise InputError("--languages: a language is given twice")
    if not languages:
        raise InputError("--languages: no language to train on")
    if "multi" in modes and len(languages) < 2:
        raise InputError(f"--mode multi needs at least two languages (given: {', '.join(languages)})")
    jobs = []
    for mode in MODES:
        if mode not in modes:
            continue
        groups = [(loc,) for loc in languages] if mode == "mono" else [tuple(languages)]
        for group in groups:
            for seed in seeds:
                name = job_name(mode, group, seed, balanced)
                jobs.append(FinetuneJob(name, base, mode, group, seed, balanced, settings))
    return jobs

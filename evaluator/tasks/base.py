"""What every task's scoring code provides: which rows of its release suite it scores, how they
become backend requests and predictions, and the metrics computed from those predictions (what
the task is, its suite, model kinds and settings, is its descriptor: evaluator.tasks)."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import polars as pl

from evaluator.alignment import PairRule
from evaluator.backends.base import GenerationSettings
from evaluator.cache import CachedBackend
from evaluator.options import RunOptions
from evaluator.results.base import TaskMetrics
from evaluator.tasks.descriptor import TaskDescriptor
from toolkit.release import Release

T = TypeVar("T")


@dataclass(frozen=True)
class LexiconNeed:
    """One entry a run reads from an evaluation lexicon: ``lexicon`` (answers, prompts), the
    locale, and the key inside it (``sentiment_labels.positive``: a key of a key)."""

    lexicon: str
    locale: str
    key: str
    why: str


def missing_lexicon_entries(release: Release, needs: list[LexiconNeed]) -> list[str]:
    """What a run would look up in the release's lexicons and not find, one line each."""
    out: list[str] = []
    tables: dict[str, dict[str, Any] | None] = {}
    for need in needs:
        if need.lexicon not in tables:
            rel = f"lexicons/{need.lexicon}.json"
            tables[need.lexicon] = (
                release.lexicon(need.lexicon)["locales"] if rel in release.manifest.files else None
            )
            if tables[need.lexicon] is None:
                out.append(f"{rel}: not in the release ({need.why})")
        table = tables[need.lexicon]
        if table is None:
            continue
        value: Any = table.get(need.locale)
        for part in need.key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value in (None, "", [], {}):
            out.append(f"lexicons/{need.lexicon}.json: locale {need.locale}: no `{need.key}` ({need.why})")
    return out


@dataclass
class ScoringContext:
    """What a task's predict() and metrics() work with: the release, the (cached) model, the
    run's options and the locales (and groups, suite) it scores."""

    release: Release
    backend: CachedBackend
    options: RunOptions
    locales: list[str]
    groups: frozenset[str] | None = None
    """Only rows of these identity groups (``--groups``); None: every row."""
    suite: str = ""
    """The release suite read (default: the task's own)."""


class Task(ABC):
    """A task's scoring code: the rows it reads, the model's outputs it adds to them (predict)
    and the metrics it computes from them (metrics). Its descriptor says everything else."""

    def __init__(self, descriptor: TaskDescriptor) -> None:
        self.descriptor = descriptor

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """What --limit counts and keeps whole, the same in every locale (default: the sample)."""
        return pl.col("parallel_id")

    def release_rows(self, ctx: ScoringContext) -> pl.DataFrame:
        """The suite's rows in the run's locales (of the chosen groups, when --groups says so)."""
        suite = ctx.suite or self.descriptor.suite
        frames = [
            ctx.release.scan(suite, loc).collect() for loc in ctx.locales if ctx.release.has(suite, loc)
        ]
        if not frames:
            return pl.DataFrame()
        frame = pl.concat(frames, how="vertical")
        if ctx.groups is not None:
            frame = frame.filter(pl.col("group").is_in(sorted(ctx.groups)))
        return frame

    def rows(self, ctx: ScoringContext) -> pl.DataFrame:
        """The rows the run scores: the release's, limited by --limit to whole units."""
        frame = self.release_rows(ctx)
        if frame.height == 0:
            return frame
        return limit_rows(frame, ctx.options.limit, ctx.options.seed, self.unit(frame))

    def lexicon_needs(self, ctx: ScoringContext) -> list[LexiconNeed]:
        """The entries of the release's evaluation lexicons (lexicons/*.json) this run will read,
        checked before anything is scored (default: none)."""
        return []

    @abstractmethod
    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """The rows with the model's raw outputs added."""

    @abstractmethod
    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> TaskMetrics:
        """Metrics per locale (and wherever the task reports them), as the task's metrics model."""


def unit_key(seed: int, unit: str) -> str:
    """What --limit sorts units by (then by the unit itself): sha256 of the seed and the unit. The
    lm-evaluation-harness export orders its documents by it too, so that its --limit takes the
    same units."""
    return hashlib.sha256(f"{seed}\0{unit}".encode()).hexdigest()


def limit_rows(frame: pl.DataFrame, limit: int | None, seed: int, unit: pl.Expr) -> pl.DataFrame:
    """At most ``limit`` units per locale, chosen by sha256(seed, unit): deterministic, the same
    units in every locale (parallel samples stay parallel), pairs and template instances whole."""
    if limit is None or frame.height == 0:
        return frame
    keyed = frame.with_columns(unit.cast(pl.String).alias("_unit"))
    keyed = keyed.with_columns(
        pl.col("_unit").map_elements(lambda v: unit_key(seed, v), return_dtype=pl.String).alias("_key")
    )
    chosen = (
        keyed.select("locale", "_unit", "_key")
        .unique()
        .sort("_key", "_unit")
        .group_by("locale", maintain_order=True)
        .head(limit)
    )
    return keyed.join(chosen.select("locale", "_unit"), on=["locale", "_unit"], how="semi").drop(
        "_unit", "_key"
    )


def pair_unit() -> pl.Expr:
    """sos / ifm pairs: the pair id without its locale prefix (pairs are parallel across locales)."""
    return pl.col("pair_id").str.splitn(":", 2).struct.field("field_1")


def per_locale(
    ctx: ScoringContext, predictions: pl.DataFrame, report: Callable[[pl.DataFrame], T]
) -> dict[str, T]:
    """``report`` of each locale's predictions, for the locales that have some."""
    out = {}
    for locale in ctx.locales:
        frame = predictions.filter(pl.col("locale") == locale)
        if frame.height:
            out[locale] = report(frame)
    return out


def instruction_generation(options: RunOptions, max_new_tokens: int) -> GenerationSettings:
    """Generation for tasks that ask an instruction model a question (bbq, iat, ifm): greedy and
    in the model's chat template unless the options say otherwise."""
    strategy, chat = options.option("strategy"), options.option("chat")
    return GenerationSettings(
        max_new_tokens=options.option("max_new_tokens") or max_new_tokens,
        strategy="greedy" if strategy == "auto" else strategy,
        seed=options.seed,
        chat=True if chat is None else chat,
    )


def pair_rule(options: RunOptions) -> PairRule:
    """How pair scores are compared: the paper's definition, or the dataset's own script
    (--original-script). What the script does differs per dataset (how it rounds, where ties
    go): see evaluator.metrics.sos and evaluator.metrics.crows_pairs."""
    return "original" if options.option("original_script") else "paper"

"""What every task provides: the release suite it reads, how its rows become backend requests
and predictions, and the metrics computed from those predictions."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl

from evaluator.alignment import PairRule
from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.cache import CachedBackend
from evaluator.options import RunOptions
from toolkit.release import Release


@dataclass
class Context:
    release: Release
    backend: CachedBackend
    options: RunOptions
    locales: list[str]
    groups: frozenset[str] | None = None
    """Only rows of these identity groups (``--groups``); None: every row."""
    suite: str = ""
    """The release suite read (default: the task's own)."""


class Task(ABC):
    name: ClassVar[str]
    suite: ClassVar[str]
    kinds: ClassVar[tuple[ModelKind, ...]]
    """Model kinds the task can score, in order of preference."""
    also_reads: ClassVar[tuple[str, ...]] = ()
    """Other release suites with the columns of this task's own (sos: the regional study's set)."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """What --limit counts and keeps whole, the same in every locale (default: the sample)."""
        return pl.col("parallel_id")

    def release_rows(self, ctx: Context) -> pl.DataFrame:
        """The suite's rows in the run's locales (of the chosen groups, when --groups says so)."""
        suite = ctx.suite or self.suite
        frames = [
            ctx.release.scan(suite, loc).collect() for loc in ctx.locales if ctx.release.has(suite, loc)
        ]
        if not frames:
            return pl.DataFrame()
        frame = pl.concat(frames, how="vertical")
        if ctx.groups is not None:
            frame = frame.filter(pl.col("group").is_in(sorted(ctx.groups)))
        return frame

    def rows(self, ctx: Context) -> pl.DataFrame:
        frame = self.release_rows(ctx)
        if frame.height == 0:
            return frame
        return limit_rows(frame, ctx.options.limit, ctx.options.seed, self.unit(frame))

    @abstractmethod
    def predict(self, ctx: Context, rows: pl.DataFrame) -> pl.DataFrame:
        """The rows with the model's raw outputs added."""

    @abstractmethod
    def metrics(self, ctx: Context, predictions: pl.DataFrame) -> dict[str, Any]:
        """Metrics per locale (and wherever the task reports them)."""

    def settings(self, options: RunOptions, kind: ModelKind) -> dict[str, Any]:
        """The task settings that change its numbers (for the signature)."""
        return {}


def instruction_generation(options: RunOptions, max_new_tokens: int) -> GenerationSettings:
    """Generation for tasks that ask an instruction model a question (bbq, iat, ifm): greedy and
    in the model's chat template unless the options say otherwise."""
    return GenerationSettings(
        max_new_tokens=options.max_new_tokens or max_new_tokens,
        strategy="greedy" if options.strategy == "auto" else options.strategy,
        seed=options.seed,
        chat=True if options.chat is None else options.chat,
    )


def limit_rows(frame: pl.DataFrame, limit: int | None, seed: int, unit: pl.Expr) -> pl.DataFrame:
    """At most ``limit`` units per locale, chosen by sha256(seed, unit): deterministic, the same
    units in every locale (parallel samples stay parallel), pairs and template instances whole."""
    if limit is None or frame.height == 0:
        return frame
    keyed = frame.with_columns(unit.cast(pl.String).alias("_unit"))
    keyed = keyed.with_columns(
        pl.col("_unit")
        .map_elements(lambda v: hashlib.sha256(f"{seed}\0{v}".encode()).hexdigest(), return_dtype=pl.String)
        .alias("_key")
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


def pair_rule(options: RunOptions) -> PairRule:
    """How pair scores are compared: the paper's definition, or the dataset's own script
    (--original-script: scores rounded to 3 decimals, ties kept in the denominator)."""
    return "original" if options.original_script else "paper"


def per_locale(
    ctx: Context, predictions: pl.DataFrame, report: Callable[[pl.DataFrame], dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``report`` of each locale's predictions, for the locales that have some."""
    out = {}
    for locale in ctx.locales:
        frame = predictions.filter(pl.col("locale") == locale)
        if frame.height:
            out[locale] = report(frame)
    return out

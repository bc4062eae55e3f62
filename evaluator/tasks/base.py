"""What every task provides: the release suite it reads, how its rows become backend requests
and predictions, and the metrics computed from those predictions."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl

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


class Task(ABC):
    name: ClassVar[str]
    suite: ClassVar[str]
    kinds: ClassVar[tuple[ModelKind, ...]]
    """Model kinds the task can score, in order of preference."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """What --limit counts and keeps whole, the same in every locale (default: the sample)."""
        return pl.col("parallel_id")

    def release_rows(self, ctx: Context) -> pl.DataFrame:
        """The suite's rows in the run's locales, all of them."""
        frames = [
            ctx.release.scan(self.suite, loc).collect()
            for loc in ctx.locales
            if ctx.release.has(self.suite, loc)
        ]
        return pl.concat(frames, how="vertical") if frames else pl.DataFrame()

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

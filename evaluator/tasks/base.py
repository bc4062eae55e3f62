"""What every task provides: the release suite it reads, how its rows become backend requests
and predictions, and the metrics computed from those predictions."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl

from evaluator.backends.base import ModelKind
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
    unit: ClassVar[str] = "parallel_id"
    """Column that keeps related rows together when --limit samples (pairs, families)."""

    def rows(self, ctx: Context) -> pl.DataFrame:
        frames = [
            ctx.release.scan(self.suite, loc).collect()
            for loc in ctx.locales
            if ctx.release.has(self.suite, loc)
        ]
        if not frames:
            return pl.DataFrame()
        frame = pl.concat(frames, how="vertical")
        return limit_rows(frame, ctx.options.limit, ctx.options.seed, self.unit)

    @abstractmethod
    def predict(self, ctx: Context, rows: pl.DataFrame) -> pl.DataFrame:
        """The rows with the model's raw outputs added."""

    @abstractmethod
    def metrics(self, ctx: Context, predictions: pl.DataFrame) -> dict[str, Any]:
        """Metrics per locale (and wherever the task reports them)."""

    def settings(self, options: RunOptions, kind: ModelKind) -> dict[str, Any]:
        """The task settings that change its numbers (for the signature)."""
        return {}


def limit_rows(frame: pl.DataFrame, limit: int | None, seed: int, unit: str) -> pl.DataFrame:
    """At most ``limit`` units per locale, chosen by sha256(seed, unit): deterministic, the same
    units in every locale (parallel samples stay parallel), pairs and families whole."""
    if limit is None or frame.height == 0:
        return frame
    key = frame.select(
        pl.col(unit)
        .cast(pl.String)
        .map_elements(
            lambda v: hashlib.sha256(
                f"{seed}\0{v.split(':', 1)[-1] if unit != 'parallel_id' else v}".encode()
            ).hexdigest(),
            return_dtype=pl.String,
        )
    ).to_series()
    ranked = frame.with_columns(key.alias("_key"))
    chosen = (
        ranked.select("locale", unit, "_key")
        .unique()
        .sort("_key")
        .group_by("locale", maintain_order=True)
        .head(limit)
    )
    return ranked.join(chosen.select("locale", unit), on=["locale", unit], how="semi").drop("_key")

"""SOS (Elsafoury et al.): is the toxic sentence more likely than its non-toxic twin? Masked LMs
score sentences by pseudo-log-likelihood, causal LMs by log-likelihood (or as --score says)."""

from __future__ import annotations

from typing import Any

import polars as pl

from evaluator.backends.base import ModelKind
from evaluator.errors import EvaluationError
from evaluator.metrics.sos import sos_report
from evaluator.options import RunOptions
from evaluator.tasks.base import Context, Task, pair_unit


def score_kind(options: RunOptions, kind: ModelKind) -> str:
    if options.score != "auto":
        return options.score
    if kind == "masked":
        return "pll"
    if kind in ("causal", "api"):
        return "ll"
    raise EvaluationError(f"sos needs a masked or causal LM, not a {kind} model")


class SosTask(Task):
    name = "sos"
    suite = "sos"
    kinds = ("masked", "causal")

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        return pair_unit()

    def settings(self, options: RunOptions, kind: ModelKind) -> dict[str, Any]:
        return {"score": score_kind(options, kind)}

    def predict(self, ctx: Context, rows: pl.DataFrame) -> pl.DataFrame:
        texts = rows["text"].to_list()
        kind = score_kind(ctx.options, ctx.backend.identity.kind)
        scores = (
            ctx.backend.pseudo_loglikelihood(texts) if kind == "pll" else ctx.backend.sentence_logprob(texts)
        )
        return rows.with_columns(
            pl.Series("score", scores, dtype=pl.Float64), pl.lit(kind).alias("score_kind")
        )

    def metrics(self, ctx: Context, predictions: pl.DataFrame) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": predictions["score_kind"][0] if predictions.height else None,
            "per_locale": {},
        }
        for locale in ctx.locales:
            frame = predictions.filter(pl.col("locale") == locale)
            if frame.height:
                out["per_locale"][locale] = sos_report(frame, seed=ctx.options.seed)
        return out

"""SOS (Elsafoury et al.): is the toxic sentence more likely than its non-toxic twin? Masked LMs
score sentences by pseudo-log-likelihood, causal LMs by log-likelihood (or as --score says:
``shared`` scores only the tokens the twins share, as CrowS-Pairs does and as the regional study's
script does). Reads polyprobe's sos suite or, with --suite sos-study, the study's own sets."""

from __future__ import annotations

import polars as pl

from evaluator.metrics.sos import sos_report
from evaluator.results.sos import SosLocale, SosMetrics
from evaluator.tasks.base import ScoringContext, Task, pair_unit, per_locale
from evaluator.tasks.settings import pair_rule, sos_score


class SosTask(Task):
    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        return pair_unit()

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        kind = sos_score(ctx.options, ctx.backend.identity.kind)
        if kind == "shared":
            return self._shared(ctx, rows).with_columns(pl.lit(kind).alias("score_kind"))
        texts = rows["text"].to_list()
        scores = (
            ctx.backend.pseudo_loglikelihood(texts) if kind == "pll" else ctx.backend.sentence_logprob(texts)
        )
        return rows.with_columns(
            pl.Series("score", scores, dtype=pl.Float64), pl.lit(kind).alias("score_kind")
        )

    def _shared(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each twin scored on the tokens it shares with the other (evaluator.alignment); a pair
        that shares none scores 0 against 0 and is counted (``shared_tokens`` 0:
        ``no_shared_tokens`` in the metrics, evaluator.metrics.sos)."""
        label = pl.col("label").cast(pl.String)
        toxic = rows.filter(label == "toxic").select("pair_id", "text")
        clean = rows.filter(label == "non_toxic").select("pair_id", pl.col("text").alias("twin"))
        joined = toxic.join(clean, on="pair_id", how="inner", maintain_order="left")
        pairs = list(zip(joined["text"].to_list(), joined["twin"].to_list(), strict=True))
        results = ctx.backend.shared_token_pll(pairs, pair_rule(ctx.options))
        ids = joined["pair_id"].to_list()
        scores = pl.DataFrame(
            {
                "pair_id": ids + ids,
                "label": ["toxic"] * len(ids) + ["non_toxic"] * len(ids),
                "score": [r[0] for r in results] + [r[1] for r in results],
                "shared_tokens": [r[2] for r in results] * 2,
            },
            schema={"pair_id": pl.String, "label": pl.String, "score": pl.Float64, "shared_tokens": pl.Int64},
        ).with_columns(pl.col("label").cast(rows.schema["label"]))
        return rows.join(scores, on=["pair_id", "label"], how="left", maintain_order="left")

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> SosMetrics:
        rule = pair_rule(ctx.options)
        return SosMetrics(
            score=predictions["score_kind"][0] if predictions.height else None,
            rule=rule,
            per_locale=per_locale(
                ctx,
                predictions,
                lambda frame: SosLocale.model_validate(sos_report(frame, rule=rule, seed=ctx.options.seed)),
            ),
        )

"""SOS (Elsafoury et al.): is the toxic sentence more likely than its non-toxic twin? Masked LMs
score sentences by pseudo-log-likelihood, causal LMs by log-likelihood (or as --score says:
``shared`` scores only the tokens the twins share, as CrowS-Pairs does and as the regional study's
script does). Reads polyprobe's sos suite or, with --suite sos-study, the study's own sets."""

from __future__ import annotations

from typing import Any

import polars as pl

from evaluator.backends.base import ModelKind
from evaluator.errors import EvaluationError
from evaluator.metrics.sos import sos_report
from evaluator.options import RunOptions
from evaluator.results.sos import SosLocale, SosMetrics
from evaluator.tasks.base import (
    ScoringContext,
    Task,
    pair_rule,
    pair_unit,
    per_locale,
)
from evaluator.tasks.descriptor import PAIR_OPTIONS, Headline, TaskDescriptor


def sos_score(options: RunOptions, kind: ModelKind) -> str:
    """How sentences are scored: --score, or by model kind (masked: pll, causal and API: ll)."""
    score: str = options.option("score")
    if score != "auto":
        return score
    if kind == "masked":
        return "pll"
    if kind in ("causal", "api"):
        return "ll"
    raise EvaluationError(f"sos needs a masked or causal LM, not a {kind} model")


def sos_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    """The sentence scoring, and the comparison rule when it is not the paper's."""
    rule = pair_rule(options)
    return {"score": sos_score(options, kind), **({"rule": rule} if rule != "paper" else {})}


SOS = TaskDescriptor(
    name="sos",
    suite="sos",
    also_reads=("sos-study",),
    kinds=("masked", "causal"),
    options=PAIR_OPTIONS,
    settings=sos_settings,
    predictions=("score", "score_kind"),
    metrics_model="evaluator.results.sos:SosMetrics",
    title="Systematic offensive stereotyping (SOS)",
    intro="How often the model finds the toxic sentence of a toxic / non-toxic twin pair more likely "
    "(Elsafoury et al.): 0.5 is no preference.",
    headline=Headline("SOS per locale", None, "SOS"),
    implementation="evaluator.tasks.sos:SosTask",
    section="evaluator.report.sections.sos:sos",
    legend=("standing",),
)


class SosTask(Task):
    """SOS: both sentences of each toxic / non-toxic twin pair scored."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """Pairs, the same in every locale."""
        return pair_unit()

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each sentence's score (and the tokens its pair shares, when scored on shared tokens)."""
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
        """Each locale's SOS tables, under the run's comparison rule."""
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

"""Task performance on the sentiment study's control set (suite sentiment-control): generic
positive and negative sentences, parallel in every locale, no identity group. The model is asked
exactly as by the sentiment task (a classifier's head, or a prompted LM's label words); the
prediction scored is the likelier of positive and negative (Levy et al.'s 2-way decision, so a
3-class model's neutral does not count against it on a binary set). Per locale: accuracy and
macro F1 with bootstrap intervals over sentences; McNemar between every two locales on the same
sentences, with Holm's adjustment; and the sets of locales whose performance does not differ
(evaluator.metrics.classification), the languages whose biases may be compared."""

from __future__ import annotations

from itertools import combinations
from typing import Any

import polars as pl

from evaluator.metrics import sentiment as sentiment_metrics
from evaluator.metrics.classification import alike_sets, binary_scores, macro_f1_of_sums
from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.uncertainty import Figure, add_holm, add_intervals, ratio
from evaluator.results.sentiment_control import SentimentControlMetrics
from evaluator.tasks.base import ScoringContext
from evaluator.tasks.descriptor import Headline, TaskDescriptor
from evaluator.tasks.sentiment import SENTIMENT_OPTIONS, SentimentScoring, sentiment_settings, two_way

SENTIMENT_CONTROL = TaskDescriptor(
    name="sentiment-control",
    suite="sentiment-control",
    kinds=("classifier", "causal"),
    options=SENTIMENT_OPTIONS,
    settings=sentiment_settings,
    predictions=("p_pos", "probs", "pred_label", "model_labels", "prob_labels", "pred_2way"),
    metrics_model="evaluator.results.sentiment_control:SentimentControlMetrics",
    title="Sentiment task performance (control set)",
    intro="Accuracy and macro F1 on generic positive and negative sentences that name no group, "
    "parallel in every locale, and McNemar's test between every two locales on the same sentences "
    "(Holm-adjusted): Levy et al. (2023) compare the biases of languages whose task performance does "
    "not differ significantly.",
    headline=Headline("Task performance per locale", "accuracy", "accuracy"),
    implementation="evaluator.tasks.sentiment_control:SentimentControlTask",
    section="evaluator.report.sections.sentiment_control:sentiment_control",
)

ALPHA = 0.05
"""The significance level below which two locales' McNemar p (Holm) says they differ."""
PREDICTION = "pred_2way"


def binary_predictions(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows with ``pred_2way``: the likelier of positive and negative under the model's
    probabilities (null when the model gives no probability to one of them)."""
    if frame.height == 0:
        return frame.with_columns(pl.lit(None, dtype=pl.String).alias(PREDICTION))
    decided = two_way(frame.with_columns(pl.col("label").cast(pl.String))).select(
        "sample_id", pl.col("pred_label").alias(PREDICTION)
    )
    return frame.join(decided, on="sample_id", how="left", maintain_order="left")


class SentimentControlTask(SentimentScoring):
    """The sentiment control set: task performance on sentences that name no group."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """--limit counts sentences, the same ones in every locale."""
        return pl.col("parallel_id")

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Sentiment's predictions, with the 2-way (positive or negative) answer."""
        return binary_predictions(super().predict(ctx, rows))

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> SentimentControlMetrics:
        """Accuracy and macro F1 per locale, and McNemar's test between every two locales."""
        frame = predictions.with_columns(pl.col("label").cast(pl.String), pl.col("locale").cast(pl.String))
        frames = {loc: frame.filter(pl.col("locale") == loc) for loc in ctx.locales}
        present = [loc for loc in ctx.locales if frames[loc].height]
        per_locale: dict[str, Any] = {}
        for locale in present:
            part = frames[locale]
            scores = binary_scores(part["label"].to_list(), part[PREDICTION].to_list())
            [row] = add_intervals(
                [{"locale": locale}],
                part,
                ["locale"],
                "parallel_id",
                _FIGURES,
                seed=ctx.options.seed,
            )
            row.pop("locale")
            per_locale[locale] = {**scores, **row}
        mcnemar: dict[str, Any] = {}
        for a, b in combinations(present, 2):
            try:
                mcnemar[f"{a}-{b}"] = sentiment_metrics.mcnemar(
                    frames[a], frames[b], outcome="correct", prediction=PREDICTION
                )
            except MetricInputError as exc:
                mcnemar[f"{a}-{b}"] = {"error": str(exc)}
        add_holm(list(mcnemar.values()))
        p_holm = {
            tuple(key.split("-", 1)): test.get("p_holm") for key, test in mcnemar.items() if "p_holm" in test
        }
        return SentimentControlMetrics.model_validate(
            {
                "per_locale": per_locale,
                "mcnemar": mcnemar,
                "alpha": ALPHA,
                "alike": alike_sets(present, p_holm, ALPHA),  # type: ignore[arg-type]
            }
        )


def _gold(label: str, predicted: str | None) -> pl.Expr:
    wanted = pl.col(PREDICTION).is_null() if predicted is None else pl.col(PREDICTION).eq_missing(predicted)
    return (pl.col("label") == label) & wanted


_FIGURES = (
    Figure(
        "accuracy",
        {"correct": pl.col(PREDICTION).eq_missing(pl.col("label")), "n": pl.lit(1)},
        ratio,
    ),
    Figure(
        "macro_f1",
        {
            "pp": _gold("positive", "positive"),
            "pn": _gold("positive", "negative"),
            "np": _gold("negative", "positive"),
            "nn": _gold("negative", "negative"),
            "p_none": _gold("positive", None),
            "n_none": _gold("negative", None),
        },
        macro_f1_of_sums,
    ),
)
"""Accuracy and macro F1 recomputed from per-sentence counts for the bootstrap."""

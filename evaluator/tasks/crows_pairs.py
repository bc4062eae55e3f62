"""CrowS-Pairs (Nangia et al. 2020; French CrowS-Pairs, Névéol et al. 2022): does the model score
the more stereotyping sentence of each pair higher?

Masked LMs score each sentence by the pseudo-log-likelihood of the tokens the two sentences share
(``--score shared``, the default for them: evaluator.alignment, evaluator/backends/shared_pll.py);
causal LMs by the sentence's log-likelihood (``--score ll``). ``--original-script`` compares the
scores as the published script does (evaluator.metrics.crows_pairs)."""

from __future__ import annotations

from typing import Any

import polars as pl

from evaluator.backends.base import ModelKind
from evaluator.errors import EvaluationError
from evaluator.metrics.crows_pairs import crows_pairs_report
from evaluator.options import RunOptions
from evaluator.results.crows_pairs import CrowsLocale, CrowsPairsMetrics
from evaluator.tasks.base import ScoringContext, Task, pair_rule, per_locale
from evaluator.tasks.descriptor import PAIR_OPTIONS, Headline, TaskDescriptor


def crows_pairs_score(options: RunOptions, kind: ModelKind) -> str:
    """How pairs are scored: --score, or by model kind (masked: shared, causal: ll); pll is refused."""
    score: str = options.option("score")
    if score == "auto":
        return "shared" if kind == "masked" else "ll"
    if score not in ("shared", "ll"):
        raise EvaluationError(
            f"crows-pairs scores pairs by shared-token pseudo-log-likelihood (--score shared, masked LMs) "
            f"or sentence log-likelihood (--score ll, causal LMs), not --score {score}"
        )
    return score


def crows_pairs_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    """The pair scoring and the comparison rule, for run.json and the signature."""
    return {"score": crows_pairs_score(options, kind), "rule": pair_rule(options)}


CROWS_PAIRS = TaskDescriptor(
    name="crows-pairs",
    suite="crows-pairs",
    kinds=("masked", "causal"),
    options=PAIR_OPTIONS,
    settings=crows_pairs_settings,
    predictions=("score_more", "score_less", "shared_tokens", "score_kind"),
    metrics_model="evaluator.results.crows_pairs:CrowsPairsMetrics",
    title="Stereotyping sentence pairs (CrowS-Pairs)",
    intro="How often the model scores the more stereotyping sentence of a CrowS-Pairs pair higher "
    "(Nangia et al. 2020; French CrowS-Pairs, Névéol et al. 2022): 50 is no preference.",
    headline=Headline("CrowS-Pairs score − 50 per locale (0: no preference)", None, "score − 50"),
    implementation="evaluator.tasks.crows_pairs:CrowsPairsTask",
    section="evaluator.report.sections.crows_pairs:crows_pairs",
)


class CrowsPairsTask(Task):
    """CrowS-Pairs: both sentences of each pair scored, the more stereotyping one counted
    when it scores higher."""

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each pair's two scores (and the tokens they share, when scored on shared tokens)."""
        kind = crows_pairs_score(ctx.options, ctx.backend.identity.kind)
        more, less = rows["sent_more"].to_list(), rows["sent_less"].to_list()
        shared: list[int | None]
        if kind == "shared":
            results = ctx.backend.shared_token_pll(list(zip(more, less, strict=True)), pair_rule(ctx.options))
            score_more = [r[0] for r in results]
            score_less = [r[1] for r in results]
            shared = [r[2] for r in results]
        else:
            scores = ctx.backend.sentence_logprob(more + less)
            score_more, score_less = scores[: len(more)], scores[len(more) :]
            shared = [None] * len(more)
        return rows.with_columns(
            pl.Series("score_more", score_more, dtype=pl.Float64),
            pl.Series("score_less", score_less, dtype=pl.Float64),
            pl.Series("shared_tokens", shared, dtype=pl.Int64),
            pl.lit(kind).alias("score_kind"),
        )

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> CrowsPairsMetrics:
        """The score per locale, overall and per bias type, under the run's comparison rule."""
        rule = pair_rule(ctx.options)

        def report(frame: pl.DataFrame) -> CrowsLocale:
            out = crows_pairs_report(frame.rename({"stereo_antistereo": "direction"}), rule=rule)
            # a pair whose sentences share no scorable token scores 0 against 0: a tie, counted here
            out["no_shared_tokens"] = int((frame["shared_tokens"] == 0).sum())
            return CrowsLocale.model_validate(out)

        return CrowsPairsMetrics(
            score=predictions["score_kind"][0] if predictions.height else None,
            rule=rule,
            per_locale=per_locale(ctx, predictions, report),
        )

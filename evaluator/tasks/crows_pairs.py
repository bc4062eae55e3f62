"""CrowS-Pairs (Nangia et al. 2020; French CrowS-Pairs, Névéol et al. 2022): does the model score
the more stereotyping sentence of each pair higher?

Masked LMs score each sentence by the pseudo-log-likelihood of the tokens the two sentences share
(``--score shared``, the default for them: evaluator.alignment, evaluator/backends/shared_pll.py);
causal LMs by the sentence's log-likelihood (``--score ll``). ``--original-script`` compares the
scores as the published script does (evaluator.metrics.crows_pairs)."""

from __future__ import annotations

import polars as pl

from evaluator.metrics.crows_pairs import crows_pairs_report
from evaluator.results.crows_pairs import CrowsLocale, CrowsPairsMetrics
from evaluator.tasks.base import ScoringContext, Task, per_locale
from evaluator.tasks.settings import crows_pairs_score, pair_rule


class CrowsPairsTask(Task):
    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
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

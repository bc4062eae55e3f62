"""BBQ (Parrish et al. 2022): the model answers each item by the log-likelihood of exactly its
three options (no extra "unknown" paraphrases as options, unlike lm-evaluation-harness), or by
generating an answer parsed in the prompt's language."""

from __future__ import annotations

from typing import Any

import polars as pl

from evaluator.backends.base import ModelKind
from evaluator.metrics.bbq import bbq_report
from evaluator.options import RunOptions
from evaluator.parsing import parse_bbq_choice
from evaluator.tasks.base import Context, Task, instruction_generation


def mode(options: RunOptions, kind: ModelKind) -> str:
    if options.bbq_mode != "auto":
        return options.bbq_mode
    return "generate" if kind == "api" else "loglikelihood"


class BbqTask(Task):
    name = "bbq"
    suite = "bbq"
    kinds = ("causal", "seq2seq", "api")

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        return pl.col("item_id")

    def settings(self, options: RunOptions, kind: ModelKind) -> dict[str, Any]:
        how = mode(options, kind)
        return {
            "mode": how,
            **({"generation": instruction_generation(options, 24).key()} if how == "generate" else {}),
        }

    def _prompts(self, ctx: Context, rows: pl.DataFrame) -> list[str]:
        prompts = ctx.release.lexicon("prompts")["locales"]
        out = []
        for row in rows.iter_rows(named=True):
            template = prompts[str(row["locale"])]["bbq"]
            options = "; ".join(f"({chr(97 + i)}) {row[f'ans{i}']}" for i in range(3))
            out.append(
                template.replace("{context}", row["context"])
                .replace("{question}", row["question"])
                .replace("{options}", options)
            )
        return out

    def predict(self, ctx: Context, rows: pl.DataFrame) -> pl.DataFrame:
        prompts = self._prompts(ctx, rows)
        how = mode(ctx.options, ctx.backend.identity.kind)
        if how == "loglikelihood":
            requests = [
                (p, " " + row[f"ans{i}"])
                for p, row in zip(prompts, rows.iter_rows(named=True), strict=True)
                for i in range(3)
            ]
            lls = ctx.backend.loglikelihood(requests)
            per_item = [lls[i * 3 : i * 3 + 3] for i in range(rows.height)]
            answers = [max(range(3), key=ll.__getitem__) for ll in per_item]
            return rows.with_columns(
                pl.Series("option_ll", per_item, dtype=pl.List(pl.Float64)),
                pl.Series("answer", answers, dtype=pl.Int8),
                pl.lit(None, dtype=pl.String).alias("raw"),
            )
        answers_lexicon = ctx.release.lexicon("answers")["locales"]
        settings = instruction_generation(ctx.options, 24)
        raw = [r[0] for r in ctx.backend.generate(prompts, settings)]
        parsed = []
        for text, row in zip(raw, rows.iter_rows(named=True), strict=True):
            options = [row[f"ans{i}"] for i in range(3)]
            parsed.append(
                parse_bbq_choice(
                    text, options, row["unknown_label"], answers_lexicon[str(row["locale"])]["unknown"]
                )
            )
        return rows.with_columns(
            pl.lit(None, dtype=pl.List(pl.Float64)).alias("option_ll"),
            pl.Series("answer", parsed, dtype=pl.Int8),
            pl.Series("raw", raw, dtype=pl.String),
        )

    def metrics(self, ctx: Context, predictions: pl.DataFrame) -> dict[str, Any]:
        return bbq_report(predictions.with_columns(pl.col("locale").cast(pl.String)))

"""BBQ (Parrish et al. 2022): the model answers each item by the log-likelihood of exactly its
three options (no extra "unknown" paraphrases as options, unlike lm-evaluation-harness), or by
generating an answer parsed in the prompt's language."""

from __future__ import annotations

from typing import Any

import polars as pl

from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.metrics.bbq import bbq_report
from evaluator.options import RunOptions
from evaluator.parsing import parse_bbq_choice
from evaluator.results.bbq import BbqMetrics
from evaluator.tasks.base import (
    LexiconNeed,
    ScoringContext,
    Task,
    instruction_generation,
    limit_rows,
)
from evaluator.tasks.descriptor import GENERATION_OPTIONS, Headline, TaskDescriptor, TaskOption

BBQ_OPTIONS = (
    TaskOption(
        "bbq_mode",
        str,
        "auto",
        "bbq: score each option's log-likelihood, or generate and parse.",
        choices=("auto", "loglikelihood", "generate"),
    ),
    *GENERATION_OPTIONS,
)


def bbq_mode(options: RunOptions, kind: ModelKind) -> str:
    """Answers by the likelihood of each option, or generated and parsed (API models)."""
    mode: str = options.option("bbq_mode")
    if mode != "auto":
        return mode
    return "generate" if kind == "api" else "loglikelihood"


def bbq_generation(options: RunOptions) -> GenerationSettings:
    """Generation for BBQ answers generated and parsed (24 tokens unless --max-new-tokens)."""
    return instruction_generation(options, 24)


def bbq_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    """The answer mode, and the generation settings when answers are generated."""
    how = bbq_mode(options, kind)
    return {"mode": how, **({"generation": bbq_generation(options).key()} if how == "generate" else {})}


BBQ = TaskDescriptor(
    name="bbq",
    suite="bbq",
    kinds=("causal", "seq2seq", "api"),
    options=BBQ_OPTIONS,
    settings=bbq_settings,
    predictions=("option_ll", "answer", "raw"),
    metrics_model="evaluator.results.bbq:BbqMetrics",
    title="Bias in question answering (BBQ)",
    intro="Accuracy and bias scores on BBQ items (Parrish et al. 2022); s_DIS and s_AMB in [−1, 1].",
    headline=Headline("BBQ per locale", "s_AMB", "s_AMB"),
    implementation="evaluator.tasks.bbq:BbqTask",
    section="evaluator.report.sections.bbq:bbq",
)


class BbqTask(Task):
    """BBQ: each item's answer, by option likelihood or generated and parsed, scored for
    accuracy and bias (Parrish et al. 2022)."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """Whole families (the four items of a context × question polarity pairing): a bias
        score of part of a family measures which items were drawn, not the model."""
        return pl.col("family_id") if "family_id" in frame.columns else pl.col("item_id")

    def rows(self, ctx: ScoringContext) -> pl.DataFrame:
        """The items the run scores: under --limit, whole families, balanced and shared by every locale."""
        frame = self.release_rows(ctx)
        if frame.height == 0:
            return frame
        if ctx.options.limit is not None and "family_id" in frame.columns:
            frame = shared_families(balanced_families(frame))
        return limit_rows(frame, ctx.options.limit, ctx.options.seed, self.unit(frame))

    def lexicon_needs(self, ctx: ScoringContext) -> list[LexiconNeed]:
        """The question frame of each locale (and the answer words when answers are generated)."""
        needs = [
            LexiconNeed("prompts", locale, "bbq", "the question-answering frame") for locale in ctx.locales
        ]
        if bbq_mode(ctx.options, ctx.backend.identity.kind) != "loglikelihood":
            why = "the phrases that pick the unknown answer in a generated one"
            needs += [LexiconNeed("answers", locale, "unknown", why) for locale in ctx.locales]
        return needs

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each item's answer: the option of highest likelihood, or the parsed generated one."""
        prompts = bbq_prompts(rows, ctx.release.lexicon("prompts")["locales"])
        how = bbq_mode(ctx.options, ctx.backend.identity.kind)
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
        raw = [r[0] for r in ctx.backend.generate(prompts, bbq_generation(ctx.options))]
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

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> BbqMetrics:
        """Accuracy and bias scores overall, per locale and per locale and category."""
        frame = predictions.with_columns(pl.col("locale").cast(pl.String))
        if "report_category" in frame.columns:  # names and control items reported apart, as BBQ does
            frame = frame.with_columns(pl.col("report_category").alias("category"))
        report = bbq_report(frame, seed=ctx.options.seed)
        report["warnings"] = no_target_warnings(report["by_locale_category"])
        return BbqMetrics.model_validate(report)


def bbq_prompts(rows: pl.DataFrame, prompts: dict[str, Any]) -> list[str]:
    """Each item put in its locale's question-answering frame (``prompts``: the release's prompts
    lexicon, per locale), its options lettered (a), (b), (c)."""
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


def balanced_families(frame: pl.DataFrame) -> pl.DataFrame:
    """The families whose items in a locale cover every question polarity × context condition
    equally often (a family partly translated would tilt a sample's bias score)."""
    cells = frame.group_by("locale", "family_id", "question_polarity", "context_condition").len()
    counts = cells.group_by("locale", "family_id").agg(
        pl.len().alias("cells"), pl.col("len").min().alias("low"), pl.col("len").max().alias("high")
    )
    whole = counts.filter((pl.col("cells") == 4) & (pl.col("low") == pl.col("high")))
    return frame.join(whole.select("locale", "family_id"), on=["locale", "family_id"], how="semi")


def shared_families(frame: pl.DataFrame) -> pl.DataFrame:
    """Only the families every locale of the frame has: a seeded sample of them is then the same
    families in every locale, so the locales are compared on the same items."""
    locales = frame["locale"].n_unique()
    shared = (
        frame.group_by("family_id").agg(pl.col("locale").n_unique().alias("n")).filter(pl.col("n") == locales)
    )
    return frame.join(shared.select("family_id"), on="family_id", how="semi")


def no_target_warnings(table: list[dict[str, Any]]) -> list[str]:
    """One line per locale and category with rows that have no target answer."""
    return [
        f"{r['locale']} {r['category']}: {r['n_no_target']} of {r['n']} row(s) have no target answer "
        "(left out of the bias scores)"
        for r in table
        if r.get("n_no_target")
    ]

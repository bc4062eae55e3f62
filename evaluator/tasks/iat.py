"""Prompt-based IAT (Bai et al. 2025): per category and locale, P seeded permutations of the
attribute words and of which group comes first (and which of a group's tokens is named); each
answer is parsed into word–group pairs and scored with D = a/(a+b) + d/(c+d) − 1. The prompt
template comes from the release and is rendered in the toolkit's sandbox."""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import polars as pl

from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.metrics.iat import iat_report
from evaluator.options import RunOptions
from evaluator.parsing import parse_iat_pairs
from evaluator.results.iat import IatMetrics
from evaluator.tasks.base import ScoringContext, Task, instruction_generation
from evaluator.tasks.descriptor import GENERATION_OPTIONS, Headline, TaskDescriptor, TaskOption
from toolkit.catalog.grammar import LocaleGrammar, new_environment

IAT_OPTIONS = (
    TaskOption("permutations", int, 50, "iat: seeded permutations of the word list per category.", minimum=1),
    *GENERATION_OPTIONS,
)


def iat_generation(options: RunOptions) -> GenerationSettings:
    """Generation for IAT answers (256 tokens unless --max-new-tokens)."""
    return instruction_generation(options, 256)


def iat_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    """The permutations per category and the generation settings."""
    return {"permutations": options.option("permutations"), "generation": iat_generation(options).key()}


IAT = TaskDescriptor(
    name="iat",
    suite="iat",
    kinds=("causal", "seq2seq", "api"),
    options=IAT_OPTIONS,
    settings=iat_settings,
    predictions=("permutation", "prompt", "group_a", "group_b", "raw", "pairs"),
    metrics_model="evaluator.results.iat:IatMetrics",
    title="Implicit association (prompt-based IAT)",
    intro="Word–group pairings elicited by prompt (Bai et al. 2025); D in [−1, 1], > 0 stereotypical.",
    headline=Headline("IAT D per category", None, "IAT D"),
    implementation="evaluator.tasks.iat:IatTask",
    section="evaluator.report.sections.iat:iat",
)


class IatTask(Task):
    """The prompt-based IAT: the model pairs words with two groups, in seeded orders."""

    def permutations(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each row's prompts, one per seeded permutation of its word list."""
        grammar = LocaleGrammar("iat", None, new_environment(), frozenset())
        out: list[dict[str, Any]] = []
        for row in rows.iter_rows(named=True):
            for p in range(ctx.options.option("permutations")):
                seed = int(
                    hashlib.sha256(f"{ctx.options.seed}\0{row['sample_id']}\0{p}".encode()).hexdigest()[:12],
                    16,
                )
                rng = random.Random(seed)
                words = [*row["positive"], *row["negative"]]
                rng.shuffle(words)
                token_a, token_b = rng.choice(row["group_a"]), rng.choice(row["group_b"])
                first, second = (token_a, token_b) if rng.random() < 0.5 else (token_b, token_a)
                prompt = grammar.render(
                    row["prompt_template"],
                    {"group_a": first, "group_b": second, "words": row["word_separator"].join(words)},
                )
                out.append(
                    {
                        "sample_id": row["sample_id"],
                        "locale": row["locale"],
                        "category": row["category"],
                        "dataset": row["dataset"],
                        "permutation": p,
                        "prompt": prompt,
                        "positive": list(row["positive"]),
                        "negative": list(row["negative"]),
                        "group_a": token_a,
                        "group_b": token_b,
                    }
                )
        return pl.DataFrame(out)

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each prompt's answer and the word-group pairs parsed from it."""
        table = self.permutations(ctx, rows)
        raw = [r[0] for r in ctx.backend.generate(table["prompt"].to_list(), iat_generation(ctx.options))]
        pairs = []
        for text, row in zip(raw, table.iter_rows(named=True), strict=True):
            parsed = parse_iat_pairs(
                text, [*row["positive"], *row["negative"]], (row["group_a"], row["group_b"])
            )
            pairs.append(json.dumps(parsed, ensure_ascii=False, sort_keys=True))
        return table.with_columns(
            pl.Series("raw", raw, dtype=pl.String), pl.Series("pairs", pairs, dtype=pl.String)
        )

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> IatMetrics:
        """The mean D per locale and category."""
        frame = predictions.with_columns(pl.col("locale").cast(pl.String))
        return IatMetrics.model_validate({"by_category": iat_report(frame, seed=ctx.options.seed)})

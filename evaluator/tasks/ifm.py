"""IFM (Elsafoury et al.): each sos sentence as a yes/no hate question to an instruction model,
with the instruction in the sentence's language and in English; answers parsed with the
instruction language's yes/no words and the English ones (a model answering a German question
with "No" has answered it); anything else is a hallucination; rectified F1 = F1 · (1 − h/t)."""

from __future__ import annotations

from typing import Any

import polars as pl

from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.metrics.ifm import ifm_report
from evaluator.options import Instruction, RunOptions
from evaluator.parsing import parse_yes_no
from evaluator.results.ifm import IfmMetrics
from evaluator.tasks.base import (
    LexiconNeed,
    ScoringContext,
    Task,
    instruction_generation,
    pair_unit,
)
from evaluator.tasks.descriptor import GENERATION_OPTIONS, Headline, TaskDescriptor, TaskOption

IFM_OPTIONS = (
    TaskOption(
        "instruction",
        str,
        "both",
        "ifm: the instruction in the sentence's language (native), in English (en), or both.",
        choices=("both", "native", "en"),
    ),
    *GENERATION_OPTIONS,
)


def ifm_generation(options: RunOptions) -> GenerationSettings:
    """Generation for IFM's yes/no answers (8 tokens unless --max-new-tokens)."""
    return instruction_generation(options, 8)


def ifm_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    """The instruction language(s) and the generation settings."""
    return {"instruction": options.option("instruction"), "generation": ifm_generation(options).key()}


IFM = TaskDescriptor(
    name="ifm",
    suite="ifm",
    kinds=("causal", "seq2seq", "api"),
    options=IFM_OPTIONS,
    settings=ifm_settings,
    predictions=("instruction", "prompt", "raw", "answer"),
    metrics_model="evaluator.results.ifm:IfmMetrics",
    title="Instruction-following hate classification (IFM)",
    intro="Hate classification as a yes/no question, with the instruction in the sentence's language "
    "and in English (Elsafoury et al.); rectified F1 penalises hallucinated answers.",
    headline=Headline("IFM rectified F1", None, "rectified F1"),
    implementation="evaluator.tasks.ifm:IfmTask",
    section="evaluator.report.sections.ifm:ifm",
)


def ifm_prompts(rows: pl.DataFrame, instruction: Instruction) -> pl.DataFrame:
    """One row per prompt: each sentence with its instruction in its own language (``native``)
    and in English (``en``), as ``instruction`` asks; an English sentence's English prompt is its
    native one, so it is asked once."""
    which = ["native", "en"] if instruction == "both" else [instruction]
    frames = []
    for name in which:
        column = "prompt_native" if name == "native" else "prompt_en"
        part = rows.with_columns(pl.lit(name).alias("instruction"), pl.col(column).alias("prompt"))
        if name == "en":
            part = part.filter(pl.col("locale") != "en")
        frames.append(part)
    return pl.concat(frames, how="vertical")


def read_answer(text: str, answers: dict[str, Any], locale: str, instruction: str) -> str | None:
    """yes, no or None (a hallucination) for one generated answer (``answers``: the release's
    answers lexicon, per locale). A model that answers a German question with "No" has answered
    it: the instruction language's words are tried, then the English ones (models often fall
    back to English)."""
    words = answers["en" if instruction == "en" else locale]
    english = answers["en"]
    return parse_yes_no(
        text,
        [*words["yes"], *english["yes"]],
        [*words["no"], *english["no"]],
        neither=[*words["unknown"], *english["unknown"]],
    )


class IfmTask(Task):
    """IFM: hate classification as a yes/no question, in the sentence's language and in English."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """Pairs, the same in every locale."""
        return pair_unit()

    def lexicon_needs(self, ctx: ScoringContext) -> list[LexiconNeed]:
        """The yes, no and unknown words of each locale (and English's) that read an answer."""
        why = "the words that read a generated answer as yes, no or neither"
        locales = dict.fromkeys([*ctx.locales, "en"])  # English words are always tried too
        return [LexiconNeed("answers", loc, key, why) for loc in locales for key in ("yes", "no", "unknown")]

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each prompt's generated answer and the yes, no or neither read from it."""
        answers = ctx.release.lexicon("answers")["locales"]
        table = ifm_prompts(rows, ctx.options.option("instruction"))
        raw = ctx.backend.generate(table["prompt"].to_list(), ifm_generation(ctx.options))
        parsed = [
            read_answer(text, answers, locale, instruction)
            for (text,), locale, instruction in zip(
                raw, table["locale"].cast(pl.String).to_list(), table["instruction"].to_list(), strict=True
            )
        ]
        return table.with_columns(
            pl.Series("raw", [r[0] for r in raw], dtype=pl.String),
            pl.Series("answer", parsed, dtype=pl.String),
        )

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> IfmMetrics:
        """Rectified F1 and the hallucination rate per locale and instruction language."""
        frame = predictions.with_columns(pl.col("label").cast(pl.String), pl.col("locale").cast(pl.String))
        frame = frame.with_columns(pair_unit().alias("_pair"))
        seed = ctx.options.seed
        return IfmMetrics.model_validate(
            {
                "by_locale_instruction": ifm_report(
                    frame, ["locale", "instruction"], unit="_pair", seed=seed
                ),
                "by_attribute": ifm_report(
                    frame, ["locale", "instruction", "attribute"], unit="_pair", seed=seed
                ),
                "by_standing": ifm_report(
                    frame, ["locale", "instruction", "standing"], unit="_pair", seed=seed
                ),
            }
        )

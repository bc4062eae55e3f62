"""The options each task declares, how they resolve for a model kind ("auto" made concrete), and
the settings that change its numbers: what a run records in run.json and hashes into its
signature. Kept apart from the tasks' scoring code so that the registry (evaluator.tasks) stays
light to import."""

from __future__ import annotations

from typing import Any, Literal

from evaluator.alignment import PairRule
from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions
from evaluator.tasks.descriptor import GENERATION_OPTIONS, TaskOption

Completion = Literal["word", "sentence"]


def instruction_generation(options: RunOptions, max_new_tokens: int) -> GenerationSettings:
    """Generation for tasks that ask an instruction model a question (bbq, iat, ifm): greedy and
    in the model's chat template unless the options say otherwise."""
    strategy, chat = options.option("strategy"), options.option("chat")
    return GenerationSettings(
        max_new_tokens=options.option("max_new_tokens") or max_new_tokens,
        strategy="greedy" if strategy == "auto" else strategy,
        seed=options.seed,
        chat=True if chat is None else chat,
    )


def pair_rule(options: RunOptions) -> PairRule:
    """How pair scores are compared: the paper's definition, or the dataset's own script
    (--original-script). What the script does differs per dataset (how it rounds, where ties
    go): see evaluator.metrics.sos and evaluator.metrics.crows_pairs."""
    return "original" if options.option("original_script") else "paper"


# sos, crows-pairs

SCORE = TaskOption(
    "score",
    str,
    "auto",
    "sos, crows-pairs: pseudo-log-likelihood (pll), log-likelihood (ll), or shared-token PLL (shared).",
    choices=("auto", "pll", "ll", "shared"),
)
ORIGINAL_SCRIPT = TaskOption(
    "original_script",
    bool,
    False,
    "crows-pairs, sos: compare pair scores as the dataset's own script does (rounded to 3 "
    "decimals, ties in the denominator), to match published numbers.",
)
PAIR_OPTIONS = (SCORE, ORIGINAL_SCRIPT)


# sentiment

SENTIMENT_OPTIONS = (
    TaskOption(
        "sentiment_mode",
        str,
        "auto",
        "sentiment: a classifier's P(positive), or a prompted LM.",
        choices=("auto", "classifier", "prompt"),
    ),
    TaskOption("positive_label", str, None, "sentiment: the classifier label that is positive."),
)


def sentiment_mode(options: RunOptions, kind: ModelKind) -> Literal["classifier", "prompt"]:
    """P(positive) from a classifier's head, or from a prompted LM's label-word likelihoods."""
    mode: Literal["auto", "classifier", "prompt"] = options.option("sentiment_mode")
    if mode != "auto":
        return mode
    return "classifier" if kind == "classifier" else "prompt"


def sentiment_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"mode": sentiment_mode(options, kind)}


# sos


def sos_score(options: RunOptions, kind: ModelKind) -> str:
    score: str = options.option("score")
    if score != "auto":
        return score
    if kind == "masked":
        return "pll"
    if kind in ("causal", "api"):
        return "ll"
    raise EvaluationError(f"sos needs a masked or causal LM, not a {kind} model")


def sos_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    rule = pair_rule(options)
    return {"score": sos_score(options, kind), **({"rule": rule} if rule != "paper" else {})}


# crows-pairs


def crows_pairs_score(options: RunOptions, kind: ModelKind) -> str:
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
    return {"score": crows_pairs_score(options, kind), "rule": pair_rule(options)}


# honest

HONEST_OPTIONS = (
    TaskOption("k", int, 5, "honest: completions per prompt (HONEST uses 1, 5, 20).", minimum=1),
    TaskOption(
        "completion",
        str,
        "auto",
        "honest: one-word or sentence completions.",
        choices=("auto", "word", "sentence"),
    ),
    TaskOption(
        "hurtlex_level",
        str,
        "conservative",
        "honest: which HurtLex entries count as hurtful.",
        choices=("conservative", "inclusive", "both"),
    ),
    *GENERATION_OPTIONS,
)


def completion_kind(options: RunOptions, kind: ModelKind) -> Completion:
    """Masked LMs complete one word at the slot; generative models continue the text."""
    completion: Literal["auto", "word", "sentence"] = options.option("completion")
    if completion != "auto":
        return completion
    return "word" if kind == "masked" else "sentence"


def honest_generation(options: RunOptions) -> GenerationSettings:
    chosen: Literal["auto", "greedy", "sample", "beam"] = options.option("strategy")
    strategy = "sample" if chosen == "auto" else chosen
    k: int = options.option("k")
    if strategy == "greedy" and k > 1:
        raise EvaluationError("HONEST with K > 1 needs --strategy sample or beam")
    return GenerationSettings(
        max_new_tokens=options.option("max_new_tokens") or 20,
        num_return_sequences=k,
        strategy=strategy,
        seed=options.seed,
        chat=bool(options.option("chat")),
        stop=("\n",),
    )


def honest_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    mode = completion_kind(options, kind)
    base: dict[str, Any] = {
        "k": options.option("k"),
        "completion": mode,
        "hurtlex_level": options.option("hurtlex_level"),
    }
    if mode == "sentence":
        base["generation"] = honest_generation(options).key()
    return base


# bbq

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
    return instruction_generation(options, 24)


def bbq_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    how = bbq_mode(options, kind)
    return {"mode": how, **({"generation": bbq_generation(options).key()} if how == "generate" else {})}


# iat

IAT_OPTIONS = (
    TaskOption("permutations", int, 50, "iat: seeded permutations of the word list per category.", minimum=1),
    *GENERATION_OPTIONS,
)


def iat_generation(options: RunOptions) -> GenerationSettings:
    return instruction_generation(options, 256)


def iat_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"permutations": options.option("permutations"), "generation": iat_generation(options).key()}


# ifm

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
    return instruction_generation(options, 8)


def ifm_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"instruction": options.option("instruction"), "generation": ifm_generation(options).key()}

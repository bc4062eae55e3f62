"""How each task's options resolve for a model kind ("auto" made concrete), and the settings that
change its numbers: what a run records in run.json and hashes into its signature. Kept apart from
the tasks' scoring code so that the registry (evaluator.tasks) stays light to import."""

from __future__ import annotations

from typing import Any, Literal

from evaluator.alignment import PairRule
from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions

Completion = Literal["word", "sentence"]


def instruction_generation(options: RunOptions, max_new_tokens: int) -> GenerationSettings:
    """Generation for tasks that ask an instruction model a question (bbq, iat, ifm): greedy and
    in the model's chat template unless the options say otherwise."""
    return GenerationSettings(
        max_new_tokens=options.max_new_tokens or max_new_tokens,
        strategy="greedy" if options.strategy == "auto" else options.strategy,
        seed=options.seed,
        chat=True if options.chat is None else options.chat,
    )


def pair_rule(options: RunOptions) -> PairRule:
    """How pair scores are compared: the paper's definition, or the dataset's own script
    (--original-script). What the script does differs per dataset (how it rounds, where ties
    go): see evaluator.metrics.sos and evaluator.metrics.crows_pairs."""
    return "original" if options.original_script else "paper"


# sentiment


def sentiment_mode(options: RunOptions, kind: ModelKind) -> Literal["classifier", "prompt"]:
    """P(positive) from a classifier's head, or from a prompted LM's label-word likelihoods."""
    if options.sentiment_mode != "auto":
        return options.sentiment_mode
    return "classifier" if kind == "classifier" else "prompt"


def sentiment_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"mode": sentiment_mode(options, kind)}


# sos


def sos_score(options: RunOptions, kind: ModelKind) -> str:
    if options.score != "auto":
        return options.score
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
    if options.score == "auto":
        return "shared" if kind == "masked" else "ll"
    if options.score not in ("shared", "ll"):
        raise EvaluationError(
            f"crows-pairs scores pairs by shared-token pseudo-log-likelihood (--score shared, masked LMs) "
            f"or sentence log-likelihood (--score ll, causal LMs), not --score {options.score}"
        )
    return options.score


def crows_pairs_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"score": crows_pairs_score(options, kind), "rule": pair_rule(options)}


# honest


def completion_kind(options: RunOptions, kind: ModelKind) -> Completion:
    """Masked LMs complete one word at the slot; generative models continue the text."""
    if options.completion != "auto":
        return options.completion
    return "word" if kind == "masked" else "sentence"


def honest_generation(options: RunOptions) -> GenerationSettings:
    strategy = "sample" if options.strategy == "auto" else options.strategy
    if strategy == "greedy" and options.k > 1:
        raise EvaluationError("HONEST with K > 1 needs --strategy sample or beam")
    return GenerationSettings(
        max_new_tokens=options.max_new_tokens or 20,
        num_return_sequences=options.k,
        strategy=strategy,
        seed=options.seed,
        chat=bool(options.chat),
        stop=("\n",),
    )


def honest_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    mode = completion_kind(options, kind)
    base: dict[str, Any] = {"k": options.k, "completion": mode, "hurtlex_level": options.hurtlex_level}
    if mode == "sentence":
        base["generation"] = honest_generation(options).key()
    return base


# bbq


def bbq_mode(options: RunOptions, kind: ModelKind) -> str:
    """Answers by the likelihood of each option, or generated and parsed (API models)."""
    if options.bbq_mode != "auto":
        return options.bbq_mode
    return "generate" if kind == "api" else "loglikelihood"


def bbq_generation(options: RunOptions) -> GenerationSettings:
    return instruction_generation(options, 24)


def bbq_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    how = bbq_mode(options, kind)
    return {"mode": how, **({"generation": bbq_generation(options).key()} if how == "generate" else {})}


# iat


def iat_generation(options: RunOptions) -> GenerationSettings:
    return instruction_generation(options, 256)


def iat_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"permutations": options.permutations, "generation": iat_generation(options).key()}


# ifm


def ifm_generation(options: RunOptions) -> GenerationSettings:
    return instruction_generation(options, 8)


def ifm_settings(options: RunOptions, kind: ModelKind) -> dict[str, Any]:
    return {"instruction": options.instruction, "generation": ifm_generation(options).key()}

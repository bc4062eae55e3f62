"""HONEST (Nozza et al. 2021): K completions of each template's text before the slot, scored
against the locale's pinned HurtLex lexicon. Masked LMs complete one word at the slot (word
completions); generative models continue the text (sentence completions). The task declares
which, from the model kind or --completion; nothing is guessed from the completions."""

from __future__ import annotations

from typing import Any, Literal

import polars as pl

from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.errors import EvaluationError
from evaluator.hurtlex import load_hurtlex
from evaluator.metrics.honest import honest_report
from evaluator.options import RunOptions
from evaluator.tasks.base import Context, Task
from toolkit.core.fileio import sha256_file
from toolkit.core.project import cache_dir

Completion = Literal["word", "sentence"]


def completion_kind(options: RunOptions, kind: ModelKind) -> Completion:
    if options.completion != "auto":
        return options.completion
    return "word" if kind == "masked" else "sentence"


def generation(options: RunOptions) -> GenerationSettings:
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


def hurtlex_file(ctx: Context, locale: str) -> tuple[str, Any]:
    """The locale's pinned HurtLex file from the user cache, checked against the release's pins."""
    pins = ctx.release.lexicon_pins().get("hurtlex")
    if not pins:
        raise EvaluationError(f"release {ctx.release.version} records no HurtLex pins")
    lang = ctx.release.manifest.locales[locale].hurtlex
    if not lang:
        raise EvaluationError(f"{locale} has no HurtLex lexicon")
    path = cache_dir() / "lexicons" / "hurtlex" / pins["version"] / f"hurtlex_{lang}.tsv"
    if not path.is_file():
        raise EvaluationError(
            f"HurtLex {pins['version']} {lang} is not in the cache: run `polyprobe lexicon fetch hurtlex` (or with --from DIR)"
        )
    actual = sha256_file(path)
    if actual != pins["sha256"].get(lang):
        raise EvaluationError(
            f"{path} does not match the release's HurtLex pin for {lang} (sha256 {actual[:12]}…)"
        )
    return lang, path


class HonestTask(Task):
    name = "honest"
    suite = "honest"
    kinds = ("causal", "masked", "seq2seq", "api")

    def settings(self, options: RunOptions, kind: ModelKind) -> dict[str, Any]:
        mode = completion_kind(options, kind)
        base: dict[str, Any] = {"k": options.k, "completion": mode, "hurtlex_level": options.hurtlex_level}
        if mode == "sentence":
            base["generation"] = generation(options).key()
        return base

    def predict(self, ctx: Context, rows: pl.DataFrame) -> pl.DataFrame:
        mode = completion_kind(ctx.options, ctx.backend.identity.kind)
        for locale in ctx.locales:  # fail before any compute if a lexicon is missing
            if rows.filter(pl.col("locale") == locale).height:
                hurtlex_file(ctx, locale)
        if mode == "word":
            completions = ctx.backend.fill_mask(rows["text"].to_list(), ctx.options.k)
        else:
            completions = ctx.backend.generate(rows["prefix"].to_list(), generation(ctx.options))
        return rows.with_columns(
            pl.Series("completions", completions, dtype=pl.List(pl.String)),
            pl.lit(mode).alias("completion_kind"),
        )

    def metrics(self, ctx: Context, predictions: pl.DataFrame) -> dict[str, Any]:
        mode: Completion = (
            "word" if predictions.height and predictions["completion_kind"][0] == "word" else "sentence"
        )
        out: dict[str, Any] = {
            "completion": mode,
            "k": ctx.options.k,
            "level": ctx.options.hurtlex_level,
            "per_locale": {},
        }
        for locale in ctx.locales:
            frame = predictions.filter(pl.col("locale") == locale)
            if not frame.height:
                continue
            lang, path = hurtlex_file(ctx, locale)
            lexicon = load_hurtlex(path, level=ctx.options.hurtlex_level)
            script: Literal["space", "cjk"] = "cjk" if locale == "zh" else "space"
            entry: dict[str, Any] = {
                "hurtlex": lang,
                "note": "scored with the Arabic HurtLex lexicon" if locale == "arz" else None,
            }
            entry.update(honest_report(frame, lexicon, completion=mode, script=script, seed=ctx.options.seed))
            out["per_locale"][locale] = entry
        return out

"""HONEST (Nozza et al. 2021): K completions of each template's text before the slot, scored
against the locale's pinned HurtLex lexicon. Masked LMs complete one word at the slot (word
completions); generative models continue the text (sentence completions). The task declares
which, from the model kind or --completion; nothing is guessed from the completions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl

from evaluator.backends.base import GenerationSettings, ModelKind
from evaluator.errors import EvaluationError
from evaluator.metrics.honest import honest_report
from evaluator.metrics.hurtlex import Lexicon, Script, load_hurtlex
from evaluator.options import RunOptions
from evaluator.results.honest import HonestLocale, HonestMetrics
from evaluator.tasks.base import ScoringContext, Task
from evaluator.tasks.descriptor import GENERATION_OPTIONS, Headline, TaskDescriptor, TaskOption
from toolkit.core.fileio import sha256_file
from toolkit.core.project import cache_dir
from toolkit.release import Release
from toolkit.release.manifest import WordSplit

Completion = Literal["word", "sentence"]


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
    """HONEST's sentence completions: K sampled ones per prompt by default (greedy gives one)."""
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
    """K, the completion kind, the HurtLex level, and the generation of sentence completions."""
    mode = completion_kind(options, kind)
    base: dict[str, Any] = {
        "k": options.option("k"),
        "completion": mode,
        "hurtlex_level": options.option("hurtlex_level"),
    }
    if mode == "sentence":
        base["generation"] = honest_generation(options).key()
    return base


HONEST = TaskDescriptor(
    name="honest",
    suite="honest",
    kinds=("causal", "masked", "seq2seq", "api"),
    options=HONEST_OPTIONS,
    settings=honest_settings,
    predictions=("completions", "completion_kind"),
    metrics_model="evaluator.results.honest:HonestMetrics",
    title="Hurtful sentence completion (HONEST)",
    intro="Share of the model's completions that hold a HurtLex lemma (Nozza et al. 2021).",
    headline=Headline("HONEST per locale", None, "HONEST"),
    implementation="evaluator.tasks.honest:HonestTask",
    section="evaluator.report.sections.honest:honest",
    legend=("standing", "gender"),
)

SCRIPTS: dict[WordSplit, Script] = {"spaces": "space", "characters": "cjk"}
"""How the lexicon matcher splits a locale's text, by its word splitting (lexicons/locales.yaml)."""


def hurtlex_file(release: Release, locale: str) -> tuple[str, Path]:
    """The locale's pinned HurtLex file from the user cache, checked against the release's pins."""
    pins = release.lexicon_pins().get("hurtlex")
    if not pins:
        raise EvaluationError(f"release {release.version} records no HurtLex pins")
    lang = release.manifest.locales[locale].hurtlex
    if not lang:
        raise EvaluationError(f"{locale} has no HurtLex lexicon")
    return lang, pinned_hurtlex(pins["version"], lang, pins["sha256"].get(lang))


def word_split(release: Release, locale: str) -> WordSplit:
    """How the locale's text splits into words, as the release records it (lexicons/locales.yaml
    ``word_split``); a release built before it recorded that cannot be scored."""
    split = release.manifest.locales[locale].word_split
    if split is None:
        raise EvaluationError(
            f"release {release.version} does not record how {locale} splits into words (built before "
            "lexicons/locales.yaml 1.2.0): build the release again to score HONEST on it"
        )
    return split


def pinned_hurtlex(version: str, lang: str, sha256: str | None) -> Path:
    """HurtLex ``version`` of ``lang`` from the user cache (where `polyprobe lexicon fetch`
    puts it), checked against its pinned ``sha256``."""
    path = cache_dir() / "lexicons" / "hurtlex" / version / f"hurtlex_{lang}.tsv"
    if not path.is_file():
        raise EvaluationError(
            f"HurtLex {version} {lang} is not in the cache: run `polyprobe lexicon fetch hurtlex` (or with --from DIR)"
        )
    actual = sha256_file(path)
    if actual != sha256:
        raise EvaluationError(
            f"{path} does not match the release's HurtLex pin for {lang} (sha256 {actual[:12]}…)"
        )
    return path


class HonestTask(Task):
    """HONEST: K completions per prompt, each checked for a hurtful HurtLex lemma."""

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each prompt's completions: words filled at the mask, or generated sentences."""
        mode = completion_kind(ctx.options, ctx.backend.identity.kind)
        for locale in ctx.locales:  # fail before any compute if a lexicon is missing
            if rows.filter(pl.col("locale") == locale).height:
                hurtlex_file(ctx.release, locale)
                word_split(ctx.release, locale)
        if mode == "word":
            completions = ctx.backend.fill_mask(rows["text"].to_list(), ctx.options.option("k"))
        else:
            completions = ctx.backend.generate(rows["prefix"].to_list(), honest_generation(ctx.options))
        return rows.with_columns(
            pl.Series("completions", completions, dtype=pl.List(pl.String)),
            pl.lit(mode).alias("completion_kind"),
        )

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> HonestMetrics:
        """Each locale's HONEST tables, against its HurtLex lexicon."""
        lexicons = {}
        splits = {}
        for locale in ctx.locales:
            if predictions.filter(pl.col("locale") == locale).height:
                lang, path = hurtlex_file(ctx.release, locale)
                lexicons[locale] = (lang, load_hurtlex(path, level=ctx.options.option("hurtlex_level")))
                splits[locale] = word_split(ctx.release, locale)
        return honest_metrics(
            predictions,
            ctx.locales,
            lexicons,
            splits,
            k=ctx.options.option("k"),
            level=ctx.options.option("hurtlex_level"),
            seed=ctx.options.seed,
        )


def honest_metrics(
    predictions: pl.DataFrame,
    locales: Sequence[str],
    lexicons: Mapping[str, tuple[str, Lexicon]],
    splits: Mapping[str, WordSplit],
    *,
    k: int,
    level: str,
    seed: int,
) -> HonestMetrics:
    """The metrics of each locale's completions against its lexicon (``lexicons``: locale →
    HurtLex language and its lexicon, ``splits``: locale → how its text splits into words, both
    for every locale with predictions)."""
    mode: Completion = (
        "word" if predictions.height and predictions["completion_kind"][0] == "word" else "sentence"
    )
    per_locale = {}
    for locale in locales:
        frame = predictions.filter(pl.col("locale") == locale)
        if not frame.height:
            continue
        lang, lexicon = lexicons[locale]
        script = SCRIPTS[splits[locale]]
        per_locale[locale] = HonestLocale.model_validate(
            {
                "hurtlex": lang,
                "note": "scored with the Arabic HurtLex lexicon" if locale == "arz" else None,
                **honest_report(frame, lexicon, completion=mode, script=script, seed=seed),
            }
        )
    return HonestMetrics(completion=mode, k=k, level=level, per_locale=per_locale)

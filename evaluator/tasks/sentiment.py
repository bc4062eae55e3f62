"""Sentiment bias (Levy et al. 2023): the model's positive-class probability per sample.

A sequence classifier gives P(positive) directly (3-class models too: P(pos) is the scoring
function, as Levy et al.). A causal LM is prompted (lexicons/prompts: the locale's sentiment
prompt and label words) and P(label) is its likelihood of each label word after the prompt,
normalised over the labels."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from itertools import combinations
from typing import Any, Literal

import polars as pl

from evaluator.backends.base import ModelKind
from evaluator.errors import EvaluationError
from evaluator.metrics import sentiment as m
from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.uncertainty import add_holm
from evaluator.options import RunOptions
from evaluator.results.sentiment import SentimentMetrics
from evaluator.tasks.base import LexiconNeed, ScoringContext, Task
from evaluator.tasks.descriptor import Headline, TaskDescriptor, TaskOption

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
    """The scoring mode made concrete for the model kind."""
    return {"mode": sentiment_mode(options, kind)}


SENTIMENT = TaskDescriptor(
    name="sentiment",
    suite="sentiment",
    kinds=("classifier", "causal"),
    options=SENTIMENT_OPTIONS,
    settings=sentiment_settings,
    predictions=("p_pos", "probs", "pred_label", "model_labels", "prob_labels"),
    metrics_model="evaluator.results.sentiment:SentimentMetrics",
    title="Sentiment bias (MCM, VBCM)",
    intro="The model's P(positive) for parallel template instances that differ only in the group "
    "(Levy et al. 2023; metrics of Czarnowska et al. 2021). MCM: mean standard deviation across groups; "
    "VBCM: each group against the instance's background.",
    headline=Headline("MCM per locale and attribute", None, "MCM"),
    implementation="evaluator.tasks.sentiment:SentimentTask",
    section="evaluator.report.sections.sentiment:sentiment",
    legend=("gender",),
    digits=4,
)

LABELS = ("positive", "negative", "neutral")


def classifier_labels(labels: tuple[str, ...], positive: str | None) -> tuple[int, list[str]]:
    """Index of the positive class, and each class's name mapped onto positive/negative/neutral."""
    mapped = []
    for name in labels:
        low = name.lower()
        mapped.append(
            "positive"
            if low.startswith("pos")
            else "negative"
            if low.startswith("neg")
            else "neutral"
            if low.startswith("neu")
            else low
        )
    if positive is not None:
        if positive.lower() not in [n.lower() for n in labels]:
            raise EvaluationError(
                f"--positive-label {positive!r} is not a label of the model ({', '.join(labels)})"
            )
        return [n.lower() for n in labels].index(positive.lower()), mapped
    if "positive" not in mapped:
        raise EvaluationError(
            f"cannot tell which of the model's labels ({', '.join(labels)}) is positive: pass --positive-label"
        )
    return mapped.index("positive"), mapped


class SentimentScoring(Task):
    """How a model is asked for sentiment, shared by the tasks that ask it (sentiment, and the
    control set's sentiment-control): a classifier's P(positive), or a prompted LM's label words."""

    def lexicon_needs(self, ctx: ScoringContext) -> list[LexiconNeed]:
        """The prompt and label words of each locale, when a generative model is prompted."""
        if sentiment_mode(ctx.options, ctx.backend.identity.kind) == "classifier":
            return []
        why = "the prompt and label words put to a generative model"
        keys = ["sentiment", *(f"sentiment_labels.{label}" for label in LABELS)]
        return [LexiconNeed("prompts", locale, key, why) for locale in ctx.locales for key in keys]

    def predict(self, ctx: ScoringContext, rows: pl.DataFrame) -> pl.DataFrame:
        """Each row's class probabilities and P(positive), from a classifier or a prompted LM."""
        texts = rows["text"].to_list()
        if sentiment_mode(ctx.options, ctx.backend.identity.kind) == "classifier":
            probs = ctx.backend.classify(texts)
            pos, mapped = classifier_labels(ctx.backend.identity.labels, ctx.options.option("positive_label"))
            p_pos = [row[pos] for row in probs]
            pred = [mapped[max(range(len(row)), key=row.__getitem__)] for row in probs]
            can_predict = sorted({n for n in mapped if n in LABELS})
            order = mapped
        else:
            prompts = ctx.release.lexicon("prompts")["locales"]
            requests: list[tuple[str, str]] = []
            for text, locale in zip(texts, rows["locale"].cast(pl.String).to_list(), strict=True):
                spec = prompts[locale]
                context = spec["sentiment"].replace("{text}", text)
                requests.extend((context, spec["sentiment_labels"][label]) for label in LABELS)
            lls = ctx.backend.loglikelihood(requests)
            probs = []
            for i in range(len(texts)):
                row = lls[i * 3 : i * 3 + 3]
                top = max(row)
                weights = [math.exp(x - top) for x in row]
                total = sum(weights)
                probs.append([w / total for w in weights])
            p_pos = [row[0] for row in probs]
            pred = [LABELS[max(range(3), key=row.__getitem__)] for row in probs]
            can_predict = list(LABELS)
            order = list(LABELS)
        return rows.with_columns(
            pl.Series("p_pos", p_pos, dtype=pl.Float64),
            pl.Series("probs", probs, dtype=pl.List(pl.Float64)),
            pl.Series("pred_label", pred, dtype=pl.String),
            pl.lit(",".join(can_predict)).alias("model_labels"),
            pl.lit(",".join(order)).alias("prob_labels"),
        )


class SentimentTask(SentimentScoring):
    """Sentiment bias: P(positive) of parallel template instances that differ only in the group."""

    def unit(self, frame: pl.DataFrame) -> pl.Expr:
        """Templates: both gender variants and every group stay together (f/m pairs, instances)."""
        return pl.col("template")

    def metrics(self, ctx: ScoringContext, predictions: pl.DataFrame) -> SentimentMetrics:
        """MCM, VBCM and the accuracies per locale, and McNemar's tests between locales."""
        out: dict[str, Any] = {"per_locale": {}, "mcnemar": {}}
        labels = predictions["model_labels"][0].split(",") if predictions.height else list(LABELS)
        frame_all = predictions.with_columns(
            pl.col("attribute").cast(pl.String), pl.col("label").cast(pl.String)
        )
        frames = {loc: frame_all.filter(pl.col("locale") == loc) for loc in ctx.locales}
        for locale, frame in frames.items():
            if frame.height == 0:
                continue
            per_attr: dict[str, Any] = {}
            for attribute in sorted(frame["attribute"].unique().to_list()):
                per_attr[attribute] = _attribute_metrics(
                    frame.filter(pl.col("attribute") == attribute), attribute, ctx.options.seed
                )
            out["per_locale"][locale] = {
                "accuracy": _safe(partial(m.accuracy, frame, labels=labels)),
                "accuracy_2way": _safe(partial(m.accuracy, two_way(frame), labels=["positive", "negative"])),
                "attributes": per_attr,
            }
        present = [loc for loc in ctx.locales if frames[loc].height]
        for a, b in combinations(present, 2):
            out["mcnemar"][f"{a}-{b}"] = _safe(partial(m.mcnemar, frames[a], frames[b], outcome="correct"))
        # many tests at once: Holm-adjusted p-values beside the raw ones, one family per kind of test
        attributes = [a for loc in out["per_locale"].values() for a in loc["attributes"].values()]
        for test in ("friedman", "wilcoxon_gender"):
            add_holm([a[test] for a in attributes if test in a])
        add_holm(list(out["mcnemar"].values()))
        return SentimentMetrics.model_validate(out)


def two_way(frame: pl.DataFrame) -> pl.DataFrame:
    """Levy et al.'s 2-way accuracy: positive and negative samples only, the prediction being the
    likelier of positive and negative (probs are ordered as the model's labels)."""
    labels = frame["prob_labels"][0].split(",") if frame.height else []
    if "positive" not in labels or "negative" not in labels:
        return frame.filter(pl.lit(False))
    pos, neg = labels.index("positive"), labels.index("negative")
    return frame.filter(pl.col("label").is_in(["positive", "negative"])).with_columns(
        pl.when(pl.col("probs").list.get(pos) >= pl.col("probs").list.get(neg))
        .then(pl.lit("positive"))
        .otherwise(pl.lit("negative"))
        .alias("pred_label")
    )


def _attribute_metrics(sub: pl.DataFrame, attribute: str, seed: int) -> dict[str, Any]:
    # gender groups fill only their own variant: compare them template by template
    inst = ("template",) if attribute == "gender" else ("template", "variant")

    def mcm_of(x: pl.DataFrame) -> float:
        return m.mcm(x, instance=inst) or 0.0

    entry: dict[str, Any] = {
        "n": sub.height,
        "v": _safe(lambda: m.v_scores(sub).to_dicts()),
        "mcm": _safe(lambda: m.mcm(sub, instance=inst)),
        "mcm_ci95": _safe(
            lambda: dict(
                zip(
                    ("low", "high"),
                    m.bootstrap_ci(sub, mcm_of, resamples=200, seed=seed, instance=inst),
                    strict=True,
                )
            )
        ),
        "vbcm": _safe(lambda: m.vbcm(sub, instance=inst).to_dicts()),
    }
    if attribute == "gender":
        entry["wilcoxon_gender"] = _safe(lambda: m.wilcoxon_gender(sub, pair_on=("template",)))
    else:
        entry["friedman"] = _safe(lambda: m.friedman(sub, instance=inst))
        entry["wilcoxon_gender"] = _safe(lambda: m.wilcoxon_gender(sub))
    if sub["reference"].any():
        entry["mbcm"] = {
            "overall": _safe(lambda: m.mbcm_overall(sub, instance=inst)),
            "groups": _safe(lambda: m.mbcm(sub, instance=inst).to_dicts()),
        }
    return entry


def _safe(compute: Callable[[], Any]) -> Any:
    """A metric that cannot be computed on this slice (too few groups after --limit, ...) is
    reported with the reason instead of failing the whole run."""
    try:
        return compute()
    except MetricInputError as exc:
        return {"error": str(exc)}

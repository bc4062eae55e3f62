"""The task-performance control set (suite sentiment-control) and its task: the repository's
sentences render in all nine locales, parallel and balanced; a control set with unbalanced labels
or a group slot is refused; accuracy, macro F1, McNemar with Holm and the sets of locales that
perform alike are checked against computations written here (F1 from its definition, statsmodels
for the tests)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from evaluator.metrics.classification import alike_sets, binary_scores, macro_f1_of_sums
from evaluator.tasks import descriptor
from evaluator.tasks.base import ScoringContext
from evaluator.tasks.sentiment_control import SentimentControlTask
from tests.conftest import REPO
from tests.evaluator.finetune.test_finetune import brute_force_alike
from tests.support.finetune_fixtures import write_study_catalog
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.renderer import render

LOCALES = ["en", "zh", "it", "he", "es", "ar", "arz", "de", "fr"]


def test_the_control_set_renders_in_every_locale_parallel_and_balanced() -> None:
    catalog = load_catalog(Project.at(REPO), suites=["sentiment-control"])
    ids = None
    for locale in LOCALES:
        rendered = render(catalog, "sentiment-control", locale)
        assert rendered.problems == [] and not rendered.skipped, locale
        frame = rendered.frame
        assert frame.height == 200
        assert frame["label"].cast(pl.String).value_counts().sort("label").rows() == [
            ("negative", 100),
            ("positive", 100),
        ]
        assert frame["group"].null_count() == 200 and frame["attribute"].null_count() == 200
        assert frame["text"].n_unique() == 200
        if locale != "en":
            assert set(frame["status"].cast(pl.String)) == {"draft"}
        current = frame.sort("parallel_id").select("parallel_id", "label").rows()
        assert ids is None or current == ids
        ids = current


@pytest.mark.bad_input
def test_an_unbalanced_or_slotted_control_set_is_refused(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    root = write_study_catalog(tmp_path / "catalog")
    sentences = root / "templates" / "sentiment-control" / "sentences.yaml"
    text = sentences.read_text(encoding="utf-8")
    sentences.write_text(
        text + '  - id: pos-101\n    label: positive\n    text: "The cake was great."\n', encoding="utf-8"
    )
    result = cli("catalog", "validate", "--root", str(root))
    assert result.code == 2
    assert (
        "templates/sentiment-control/suite.yaml: sentiment-control labels: the labels must be balanced: "
        "5 positive and 4 negative sentences"
    ) in result.err
    sentences.write_text(
        text.replace('"The soup was wonderful."', '"The {{ group.adj }} soup was good."'), encoding="utf-8"
    )
    result = cli("catalog", "validate", "--root", str(root))
    assert result.code == 2 and "pos-001 text: unknown variable 'group'" in result.err


def test_binary_scores_follow_the_definitions() -> None:
    rng = np.random.default_rng(3)
    gold = list(rng.choice(["positive", "negative"], size=60))
    predicted = [p if rng.random() > 0.1 else None for p in rng.choice(["positive", "negative"], size=60)]
    scores = binary_scores(gold, predicted)
    f1 = {}
    for label in ("positive", "negative"):
        tp = sum(g == label and p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(g != label and p == label for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == label and p != label for g, p in zip(gold, predicted, strict=True))
        precision, recall = tp / (tp + fp), tp / (tp + fn)
        f1[label] = 2 * precision * recall / (precision + recall)
        assert scores["per_label"][label]["f1"] == pytest.approx(f1[label], abs=1e-12)
        assert scores["per_label"][label]["precision"] == pytest.approx(precision, abs=1e-12)
    assert scores["macro_f1"] == pytest.approx((f1["positive"] + f1["negative"]) / 2, abs=1e-12)
    assert scores["accuracy"] == sum(g == p for g, p in zip(gold, predicted, strict=True)) / 60
    assert scores["unanswered"] == sum(p is None for p in predicted)
    counts = np.array(
        [
            [
                sum(g == a and (p == b if b else p is None) for g, p in zip(gold, predicted, strict=True))
                for a, b in (
                    ("positive", "positive"),
                    ("positive", "negative"),
                    ("negative", "positive"),
                    ("negative", "negative"),
                    ("positive", None),
                    ("negative", None),
                )
            ]
        ],
        dtype=float,
    )
    assert macro_f1_of_sums(counts)[0] == pytest.approx(scores["macro_f1"], abs=1e-12)
    never = binary_scores(["positive", "negative"], ["positive", "positive"])
    assert never["per_label"]["negative"]["f1"] == 0.0 and never["per_label"]["negative"]["precision"] is None


def test_alike_sets_are_the_maximal_sets_of_alike_locales() -> None:
    rng = np.random.default_rng(0)
    locales = ["en", "de", "it", "he", "zh"]
    for _ in range(50):
        p = {pair: float(rng.choice([0.001, 0.5])) for pair in combinations(locales, 2)}
        assert sorted(map(sorted, alike_sets(locales, p, 0.05))) == brute_force_alike(p)


def fake_predictions(seed: int) -> pl.DataFrame:
    """Three locales' predictions on 40 parallel sentences, correct with different rates."""
    rng = np.random.default_rng(seed)
    gold = ["positive"] * 20 + ["negative"] * 20
    rows = []
    for locale, rate in (("en", 0.95), ("de", 0.9), ("it", 0.5)):
        for i, label in enumerate(gold):
            right = rng.random() < rate
            other = "negative" if label == "positive" else "positive"
            rows.append(
                {
                    "sample_id": f"{locale}:{i}",
                    "parallel_id": f"sentiment-control:s{i}",
                    "locale": locale,
                    "label": label,
                    "pred_2way": label if right else other,
                }
            )
    return pl.DataFrame(rows)


def test_the_task_metrics_against_statsmodels() -> None:
    frame = fake_predictions(7)
    options = descriptor("sentiment-control").run_options(model="m", seed=0)
    ctx = ScoringContext(release=None, backend=None, options=options, locales=["en", "de", "it"])  # type: ignore[arg-type]
    metrics = SentimentControlTask(descriptor("sentiment-control")).metrics(ctx, frame).dump()
    raw = {}
    for a, b in combinations(["en", "de", "it"], 2):
        x = frame.filter(pl.col("locale") == a).sort("parallel_id")
        y = frame.filter(pl.col("locale") == b).sort("parallel_id")
        ra = (x["pred_2way"] == x["label"]).to_list()
        rb = (y["pred_2way"] == y["label"]).to_list()
        table = [
            [
                sum(p and q for p, q in zip(ra, rb, strict=True)),
                sum(p and not q for p, q in zip(ra, rb, strict=True)),
            ],
            [
                sum(q and not p for p, q in zip(ra, rb, strict=True)),
                sum(not p and not q for p, q in zip(ra, rb, strict=True)),
            ],
        ]
        discordant = table[0][1] + table[1][0]
        raw[f"{a}-{b}"] = float(sm_mcnemar(table, exact=discordant < 25, correction=True).pvalue)
        assert metrics["mcnemar"][f"{a}-{b}"]["p_value"] == pytest.approx(raw[f"{a}-{b}"], abs=1e-12)
    adjusted = multipletests(list(raw.values()), method="holm")[1]
    for key, p in zip(raw, adjusted, strict=True):
        assert metrics["mcnemar"][key]["p_holm"] == pytest.approx(p, abs=1e-12)
    for locale in ("en", "de", "it"):
        part = frame.filter(pl.col("locale") == locale)
        entry = metrics["per_locale"][locale]
        assert entry["accuracy"] == (part["pred_2way"] == part["label"]).mean()
        assert (
            entry["n_units"] == 40
            and entry["accuracy_ci_low"] <= entry["accuracy"] <= entry["accuracy_ci_high"]
        )
    p_holm = {tuple(k.split("-")): v["p_holm"] for k, v in metrics["mcnemar"].items()}
    assert sorted(map(sorted, metrics["alike"])) == brute_force_alike(p_holm)
    assert ["de", "en"] in map(sorted, metrics["alike"]) and ["it"] in metrics["alike"]

"""Fine-tuning end to end on CPU (Levy et al. 2023's phases 1 and 3): synthetic labelled data in
three languages and three formats is checked, a tiny BERT is fine-tuned monolingually and
multilingually with two seeds by `polyprobe eval study`, every model is scored on the control set
and the sentiment suite, and the comparison report is written. The figures are checked against
computations written here from the definitions: accuracy from the predictions, McNemar and Holm
with statsmodels, MCM and VBCM and their mono → multi changes with plain loops. The same seed gives
the same weights; an interrupted fine-tuning resumes; bad data is refused with file, line and
field, and nothing is written."""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests

from evaluator.finetune import train as train_module
from evaluator.finetune.data import sources_from_file
from tests.support.finetune_fixtures import base_model, write_data, write_study_catalog
from toolkit.cli import main
from toolkit.core.project import Project
from toolkit.release.build import BuildOptions, build_release

SEEDS = (0, 1)
LANGUAGES = ("en", "de", "it")
TRAINING = {"learning_rate": 5.0e-3, "max_steps": 4, "eval_steps": 2, "batch_size": 8, "device": "cpu"}
DATA_FILE = """\
en: {train: en.csv}
de: {train: dataset_de_train.json, text: review_body, rating: stars, language: language}
it: {train: it.parquet}
"""


@dataclass
class Chain:
    root: Path
    base: Path
    data: Path
    out: Path
    code: int
    seconds: float
    rerun_code: int
    rerun_seconds: float


def run_cli(*args: str) -> int:
    return main(list(args))


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Chain:
    root = tmp_path_factory.mktemp("finetune-chain")
    base = base_model(root / "base")
    catalog = write_study_catalog(root / "catalog")
    release = build_release(
        Project.at(catalog), BuildOptions(version="0.1.0-preview.1", preview=True, dist=catalog / "dist")
    )
    write_data(root / "data", per_label=12)
    (root / "data" / "data.yaml").write_text(DATA_FILE, encoding="utf-8")
    study = {
        "release": str(release),
        "data": "data/data.yaml",
        "base_models": [{"name": "tiny", "model": str(base)}],
        "languages": list(LANGUAGES),
        "seeds": list(SEEDS),
        "training": TRAINING,
        "evaluation": {"device": "cpu"},
    }
    (root / "study.yaml").write_text(yaml.safe_dump(study), encoding="utf-8")
    out = root / "study"
    started = time.monotonic()
    code = run_cli("eval", "study", str(root / "study.yaml"), "--out", str(out))
    seconds = time.monotonic() - started
    started = time.monotonic()
    rerun = run_cli("eval", "study", str(root / "study.yaml"), "--out", str(out))
    print(f"\nthe study: {seconds:.1f} s; run again (everything skipped): {time.monotonic() - started:.1f} s")
    return Chain(root, base, root / "data", out, code, seconds, rerun, time.monotonic() - started)


def models(chain: Chain) -> dict[str, dict[str, Any]]:
    marker = json.loads((chain.out / "study.json").read_text(encoding="utf-8"))
    return {m["label"]: m for m in marker["models"]}


def card(chain: Chain, name: str) -> dict[str, Any]:
    return json.loads((chain.out / "models" / "tiny" / name / "finetune.json").read_text(encoding="utf-8"))


def predictions(chain: Chain, model: str, task: str) -> pl.DataFrame:
    folder = chain.out / "eval" / "jobs" / f"tiny.{model}.{task}.s0"
    return pl.read_parquet(folder / "predictions.parquet").with_columns(
        pl.col(c).cast(pl.String) for c in ("locale", "label", "attribute", "variant")
    )


def comparison(chain: Chain) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((chain.out / "report" / "comparison.json").read_text(encoding="utf-8"))
    return data


# ------------------------------------------------------------------------------------ the chain


def test_the_study_fine_tunes_scores_and_reports(chain: Chain) -> None:
    assert chain.code == 0
    names = [f"mono-{loc}-s{s}" for loc in LANGUAGES for s in SEEDS] + [f"multi-s{s}" for s in SEEDS]
    assert sorted(models(chain)) == sorted(f"tiny.{n}" for n in names)
    for name in names:
        folder = chain.out / "models" / "tiny" / name
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        assert config["id2label"] == {"0": "negative", "1": "positive"}
        info = card(chain, name)
        assert info["settings"]["learning_rate"] == 5.0e-3 and info["training"]["steps"] == 4
        assert info["base_model"]["revision"].startswith("sha256:")
        assert info["data"]["counts"][info["languages"][0]]["train"]["positive"] > 0
        assert "# " + name in (folder / "README.md").read_text(encoding="utf-8")
    assert card(chain, "multi-s0")["languages"] == list(LANGUAGES)
    # the German ratings' neutral 3 is counted, not trained on
    assert card(chain, "mono-de-s0")["data"]["files"]["de"][0]["neutral"] == 1
    jobs = sorted(p.name for p in (chain.out / "eval" / "jobs").iterdir())
    assert len(jobs) == 2 * len(names)
    run = json.loads((chain.out / "eval" / "jobs" / "tiny.mono-de-s1.sentiment.s0" / "run.json").read_text())
    assert run["locales"] == ["de"] and run["model"]["kind"] == "classifier"
    multi = json.loads(
        (chain.out / "eval" / "jobs" / "tiny.multi-s0.sentiment-control.s0" / "run.json").read_text()
    )
    assert sorted(multi["locales"]) == sorted(LANGUAGES)
    for name in ("report.html", "summary.md", "comparison.json"):
        assert (chain.out / "report" / name).is_file()
    summary = (chain.out / "report" / "summary.md").read_text(encoding="utf-8")
    assert (
        "MCM: monolingual vs multilingual fine-tuning" in summary and "Locales that perform alike" in summary
    )
    plots = sorted(p.name for p in (chain.out / "report" / "plots").glob("*.png"))
    assert plots == ["study-tiny-p-positive.png", "study-tiny-unbalanced-mcm-delta.png"]
    merged = sorted(p.name for p in (chain.out / "merged").iterdir())
    assert "tiny.multi.sentiment-control" in merged and "tiny.mono-en.sentiment" in merged


def test_a_rerun_skips_what_finished(chain: Chain) -> None:
    assert chain.rerun_code == 0
    assert {m["status"] for m in models(chain).values()} == {"skipped"}
    summary = json.loads((chain.out / "eval" / "summary.json").read_text(encoding="utf-8"))
    assert {job["status"] for job in summary["jobs"]} == {"skipped"}


def test_the_same_seed_gives_the_same_weights(chain: Chain, tmp_path: Path) -> None:
    """`polyprobe finetune` on its own, on the study's data and settings: the CPU run is
    deterministic, so seed 0 gives exactly the study's mono-en-s0 weights, and seed 1 others."""
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TRAINING.items()]
    code = run_cli(
        "finetune",
        "--data-file",
        str(chain.data / "data.yaml"),
        "--base",
        str(chain.base),
        "--languages",
        "en",
        "--mode",
        "mono",
        "--seeds",
        "0,1",
        "--out",
        str(tmp_path / "models"),
        *flags,
    )
    assert code == 0
    again = {
        s: json.loads((tmp_path / "models" / f"mono-en-s{s}" / "finetune.json").read_text()) for s in SEEDS
    }
    assert again[0]["weights_sha256"] == card(chain, "mono-en-s0")["weights_sha256"]
    assert again[1]["weights_sha256"] == card(chain, "mono-en-s1")["weights_sha256"]
    assert again[0]["weights_sha256"] != again[1]["weights_sha256"]
    assert again[0]["data"]["sha256"] == card(chain, "mono-en-s0")["data"]["sha256"]


# ------------------------------------------------------------------------------------ phase 1 figures


def mcnemar_reference(a: pl.DataFrame, b: pl.DataFrame) -> tuple[int, int, float]:
    """statsmodels' McNemar on the paired correctness of two locales' predictions (exact binomial
    below 25 discordant pairs, else χ² with continuity correction)."""
    joined = a.select("parallel_id", "label", pl.col("pred_2way").alias("pa")).join(
        b.select("parallel_id", pl.col("pred_2way").alias("pb")), on="parallel_id"
    )
    right_a = [p == g for p, g in zip(joined["pa"], joined["label"], strict=True)]
    right_b = [p == g for p, g in zip(joined["pb"], joined["label"], strict=True)]
    table = [[0, 0], [0, 0]]
    for x, y in zip(right_a, right_b, strict=True):
        table[0 if x else 1][0 if y else 1] += 1
    discordant = table[0][1] + table[1][0]
    result = sm_mcnemar(table, exact=discordant < 25, correction=True)
    return table[0][1], table[1][0], float(result.pvalue)


def test_task_performance_against_statsmodels(chain: Chain) -> None:
    numbers = comparison(chain)["phase1"]
    for seed in SEEDS:
        # the multilingual model's own run: accuracy by counting, McNemar and Holm from statsmodels
        frame = predictions(chain, f"multi-s{seed}", "sentiment-control")
        metrics = json.loads(
            (
                chain.out / "eval" / "jobs" / f"tiny.multi-s{seed}.sentiment-control.s0" / "metrics.json"
            ).read_text()
        )["metrics"]
        for loc in LANGUAGES:
            part = frame.filter(pl.col("locale") == loc)
            right = sum(p == g for p, g in zip(part["pred_2way"], part["label"], strict=True))
            assert metrics["per_locale"][loc]["accuracy"] == right / part.height
            assert numbers["tiny.unbalanced.multi.performance"][loc]["accuracy"][seed] == right / part.height
        pairs = list(combinations(["en", "de", "it"], 2))
        raw = []
        for a, b in pairs:
            key = f"{a}-{b}" if f"{a}-{b}" in metrics["mcnemar"] else f"{b}-{a}"
            x, y = (a, b) if key == f"{a}-{b}" else (b, a)
            only_a, only_b, p = mcnemar_reference(
                frame.filter(pl.col("locale") == x), frame.filter(pl.col("locale") == y)
            )
            test = metrics["mcnemar"][key]
            assert (test["b"], test["c"]) == (only_a, only_b)
            assert test["p_value"] == pytest.approx(p, abs=1e-12)
            raw.append((key, p))
        holm = multipletests([p for _, p in raw], method="holm")[1]
        for (key, _), adjusted in zip(raw, holm, strict=True):
            assert metrics["mcnemar"][key]["p_holm"] == pytest.approx(adjusted, abs=1e-12)
        # the monolingual models compared on the same sentences, each in its own language
        mono = {loc: predictions(chain, f"mono-{loc}-s{seed}", "sentiment-control") for loc in LANGUAGES}
        tests = numbers["tiny.unbalanced.mono.mcnemar"][str(seed)]
        raw = []
        for key, test in tests.items():
            a, b = key.split("-")
            only_a, only_b, p = mcnemar_reference(mono[a], mono[b])
            assert (test["b"], test["c"]) == (only_a, only_b)
            assert test["p_value"] == pytest.approx(p, abs=1e-12)
            raw.append(p)
        for test, adjusted in zip(tests.values(), multipletests(raw, method="holm")[1], strict=True):
            assert test["p_holm"] == pytest.approx(adjusted, abs=1e-12)
        alike = numbers["tiny.unbalanced.mono.alike"][str(seed)]
        assert sorted(map(sorted, alike)) == brute_force_alike(
            {tuple(k.split("-")): v["p_holm"] for k, v in tests.items()}
        )


def brute_force_alike(p_holm: dict[tuple[str, ...], float]) -> list[list[str]]:
    """Every set of locales of which all pairs have p ≥ 0.05, keeping the maximal ones."""
    locales = sorted({loc for pair in p_holm for loc in pair})

    def alike(a: str, b: str) -> bool:
        return p_holm.get((a, b), p_holm.get((b, a), 0.0)) >= 0.05

    sets = [
        set(c)
        for n in range(1, len(locales) + 1)
        for c in combinations(locales, n)
        if all(alike(a, b) for a, b in combinations(c, 2))
    ]
    return sorted(sorted(s) for s in sets if not any(s < t for t in sets))


# ------------------------------------------------------------------------------------ phase 3 figures


def mcm_by_hand(rows: list[dict[str, Any]], attribute: str) -> float:
    """MCM from its definition: the mean over template instances (template and variant; the
    template alone for gender) with two or more groups of the population standard deviation of
    P(positive) over the groups."""
    instances: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for row in rows:
        key = (row["template"],) if attribute == "gender" else (row["template"], row["variant"])
        instances[key].append(row["p_pos"])
    spreads = [statistics.pstdev(v) for v in instances.values() if len(v) >= 2]
    return sum(spreads) / len(spreads)


def vbcm_by_hand(rows: list[dict[str, Any]], attribute: str, group: str) -> float:
    instances: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    for row in rows:
        key = (row["template"],) if attribute == "gender" else (row["template"], row["variant"])
        instances[key][row["group"]] = row["p_pos"]
    gaps = [
        scores[group] - sum(scores.values()) / len(scores)
        for scores in instances.values()
        if group in scores and len(scores) >= 2
    ]
    return sum(gaps) / len(gaps)


def test_mono_vs_multi_changes_against_the_definition(chain: Chain) -> None:
    numbers = comparison(chain)["phase3"]
    assert sorted(numbers) == sorted(
        f"tiny.unbalanced.{loc}.{a}" for loc in LANGUAGES for a in ("gender", "religion")
    )
    for key, change in numbers.items():
        _, _, loc, attribute = key.split(".")
        sides: dict[str, list[list[dict[str, Any]]]] = {"mono": [], "multi": []}
        for seed in SEEDS:
            for side, model in (("mono", f"mono-{loc}-s{seed}"), ("multi", f"multi-s{seed}")):
                frame = predictions(chain, model, "sentiment").filter(
                    (pl.col("locale") == loc) & (pl.col("attribute") == attribute)
                )
                sides[side].append(frame.to_dicts())
        mono = sum(mcm_by_hand(rows, attribute) for rows in sides["mono"]) / len(SEEDS)
        multi = sum(mcm_by_hand(rows, attribute) for rows in sides["multi"]) / len(SEEDS)
        assert change["mcm"]["mono"] == pytest.approx(mono, rel=1e-9, abs=1e-15)
        assert change["mcm"]["multi"] == pytest.approx(multi, rel=1e-9, abs=1e-15)
        assert change["mcm"]["delta"] == pytest.approx(multi - mono, rel=1e-6, abs=1e-15)
        low, high = change["mcm"]["delta_ci_low"], change["mcm"]["delta_ci_high"]
        assert low is not None and high is not None and low <= high
        for group, g in change["vbcm"].items():
            before = sum(vbcm_by_hand(rows, attribute, group) for rows in sides["mono"]) / len(SEEDS)
            after = sum(vbcm_by_hand(rows, attribute, group) for rows in sides["multi"]) / len(SEEDS)
            assert g["delta"] == pytest.approx(after - before, rel=1e-6, abs=1e-15)
        # and each run's own MCM (the sentiment task's metrics) agrees with the seed's
        metrics = json.loads(
            (chain.out / "eval" / "jobs" / f"tiny.mono-{loc}-s0.sentiment.s0" / "metrics.json").read_text()
        )["metrics"]
        own = metrics["per_locale"][loc]["attributes"][attribute]["mcm"]
        assert own == pytest.approx(mcm_by_hand(sides["mono"][0], attribute), rel=1e-9, abs=1e-15)
    # the report shows the change with its direction
    summary = (chain.out / "report" / "summary.md").read_text(encoding="utf-8")
    assert "▲" in summary or "▼" in summary


# ------------------------------------------------------------------------------------ resuming


def test_an_interrupted_fine_tuning_resumes_to_the_same_weights(
    chain: Chain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.finetune.data import load_training_data
    from evaluator.finetune.plan import FinetuneJob, TrainSettings
    from evaluator.finetune.train import finetune

    data = load_training_data([s for s in sources_from_file(chain.data / "data.yaml") if s.locale == "it"])
    job = FinetuneJob("mono-it-s0", str(chain.base), "mono", ("it",), 0, False, TrainSettings(**TRAINING))
    whole = finetune(job, data, tmp_path / "whole")
    original = train_module._Progress.on_step_end

    def interrupt(self: Any, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        original(self, args, state, control, **kwargs)
        if state.global_step == 3:  # after the checkpoint of step 2
            raise KeyboardInterrupt

    monkeypatch.setattr(train_module._Progress, "on_step_end", interrupt)
    with pytest.raises(KeyboardInterrupt):
        finetune(job, data, tmp_path / "resumed")
    assert not (tmp_path / "resumed").exists()  # nothing half-written
    assert (tmp_path / ".resumed.checkpoints" / "checkpoint-2").is_dir()
    monkeypatch.setattr(train_module._Progress, "on_step_end", original)
    resumed = finetune(job, data, tmp_path / "resumed")
    assert resumed.card["training"]["resumed"] is True
    assert not (tmp_path / ".resumed.checkpoints").exists()
    assert resumed.weights_sha256 == whole.weights_sha256


# ------------------------------------------------------------------------------------ bad data


def check(*args: str) -> int:
    return run_cli("finetune", "--check", *args)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.bad_input
def test_a_missing_column_is_refused_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write(tmp_path / "en.csv", "sentence,label\nGood.,positive\nBad.,negative\n")
    jsonl = write(tmp_path / "de.jsonl", '{"text": "Gut.", "label": "positive"}\n{"text": "Schlecht."}\n')
    out = tmp_path / "models"
    code = run_cli(
        "finetune", "--data", f"en={csv}", "--data", f"de={jsonl}", "--base", "x", "--out", str(out)
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{csv}: line 1 text: no such column (columns: sentence, label)" in err
    assert f"{jsonl}: line 2 label: missing" in err
    assert "nothing was trained or written" in err
    assert not out.exists()


@pytest.mark.bad_input
def test_one_label_only_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = write(tmp_path / "en.csv", "text,label\nGood.,positive\nFine.,pos\nGreat.,1\n")
    assert check("--data", f"en={csv}") == 2
    err = capsys.readouterr().err
    assert (
        f"{csv}: (file) label: language en has only positive examples (3); a classifier needs both labels"
        in err
    )


@pytest.mark.bad_input
def test_empty_texts_are_refused_with_their_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = write(
        tmp_path / "en.csv", 'text,label\nGood.,positive\n"  ",negative\n"two\nlines",negative\n,positive\n'
    )
    assert check("--data", f"en={csv}") == 2
    err = capsys.readouterr().err
    assert f"{csv}: line 3 text: empty text" in err
    assert f"{csv}: line 6 text: empty text" in err  # the quoted newline makes line 4-5 one record
    assert "line 4" not in err


@pytest.mark.bad_input
def test_a_language_without_data_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    en = write(tmp_path / "en.csv", "text,label\nGood.,positive\nBad.,negative\n")
    de = write(tmp_path / "de.jsonl", '{"review": "Naja.", "stars": 3}\n')
    header_only = write(tmp_path / "it.csv", "text,label\n")
    assert (
        check(
            "--data", f"en={en}", "--data", f"de={de}", "--text-column", "review", "--rating-column", "stars"
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"{en}: line 1 review, stars: no such column" in err
    assert check("--data", f"en={en}", "--data", f"it={header_only}") == 2
    assert f"{header_only}: (file) text: language it has no usable rows" in capsys.readouterr().err
    data_file = write(
        tmp_path / "data.yaml", "en: {train: en.csv}\nde: {train: de.jsonl, text: review, rating: stars}\n"
    )
    assert run_cli("finetune", "--check", "--data-file", str(data_file)) == 2
    assert f"{de}: (file) review: language de has no usable rows" in capsys.readouterr().err


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        ("text,label\nGood.,positive\nBad.,maybe\n", [], "line 3 label: 'maybe' is not a label"),
        (
            "text,stars\nGood.,5\nBad.,9\n",
            ["--rating-column", "stars"],
            "line 3 stars: '9' is not a star rating",
        ),
        (
            "text,stars\nGood.,5\nBad.,one\n",
            ["--rating-column", "stars"],
            "line 3 stars: 'one' is not a star rating",
        ),
        (
            "text,label,lang\nGood.,positive,en\nGut.,negative,de\n",
            ["--language-column", "lang"],
            "line 3 lang: 'de': this file is given for en",
        ),
        ('text,label\n"unclosed,positive\n', [], "line 2: not CSV"),
        ("text,label\nGood.,positive,extra\n", [], "line 2: 3 fields where the header has 2"),
    ],
)
def test_bad_values_are_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, options: list[str], message: str
) -> None:
    csv = write(tmp_path / "en.csv", content)
    assert check("--data", f"en={csv}", *options) == 2
    assert f"{csv}: {message}" in capsys.readouterr().err


@pytest.mark.bad_input
def test_undecodable_and_shared_files_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = tmp_path / "en.csv"
    latin.write_bytes("text,label\nGood.,positive\nCafé,negative\n".encode("latin-1"))
    assert check("--data", f"en={latin}") == 2
    assert f"{latin}: line 3: not UTF-8" in capsys.readouterr().err
    same = write(tmp_path / "same.csv", "text,label\nGood.,positive\nBad.,negative\n")
    assert check("--data", f"en={same}", "--data", f"de={same}") == 2
    assert "the same data is given for en and de" in capsys.readouterr().err


def test_repeated_texts_are_counted_not_trained_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = "text,label\nGood.,positive\nGood.,positive\nOK.,positive\nOK.,negative\nBad.,negative\nAwful.,negative\n"
    csv = write(tmp_path / "en.csv", rows)
    assert check("--data", f"en={csv}", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    files = report["languages"]["en"]["files"][0]
    assert (files["rows"], files["kept"], files["duplicates"], files["conflicting"]) == (6, 3, 1, 2)
    counts = report["languages"]["en"]["counts"]
    assert counts["train"]["positive"] + counts["validation"]["positive"] == 1
    assert counts["train"]["negative"] + counts["validation"]["negative"] == 2


def test_balancing_gives_every_language_the_same_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = write_data(tmp_path, per_label=12)
    extra = write(
        tmp_path / "en-more.csv", "text,label\n" + "".join(f"Extra {i} good.,positive\n" for i in range(7))
    )
    args = ["--data", f"en={files['en']}", "--data", f"en={extra}", "--data", f"it={files['it']}", "--json"]
    assert check(*args) == 0
    plain = json.loads(capsys.readouterr().out)["languages"]
    assert plain["en"]["counts"]["train"]["positive"] > plain["it"]["counts"]["train"]["positive"]
    assert check(*args, "--balance") == 0
    balanced = json.loads(capsys.readouterr().out)
    for split in ("train", "validation"):
        counts = {(loc, label) for loc in ("en", "it") for label in ("positive", "negative")}
        values = {balanced["languages"][loc]["counts"][split][label] for loc, label in counts}
        assert len(values) == 1, (split, balanced["languages"])
    assert balanced["languages"]["en"]["left_out_by_balancing"]["train positive"] > 0
    assert check(*args, "--balance") == 0
    assert json.loads(capsys.readouterr().out) == balanced  # seeded


def test_a_datasets_folder_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    datasets = pytest.importorskip("datasets")
    rows = {"text": ["Good.", "Bad.", "Great.", "Awful."], "label": [1, 0, 1, 0]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "en"))
    assert check("--data", f"en={tmp_path / 'en'}", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["languages"]["en"]["files"][0]["kept"] == 4
    datasets.DatasetDict({"train": datasets.Dataset.from_dict(rows)}).save_to_disk(str(tmp_path / "dict"))
    assert check("--data", f"en={tmp_path / 'dict'}") == 2
    assert "holds several splits (train): give one split's folder" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ Ray
# (the Ray executor runs work items: tests/evaluator/sweep/test_sweep.py, on the sweep tests' local Ray)


def test_a_fine_tuning_on_a_remote_worker_ships_its_model_back(chain: Chain, tmp_path: Path) -> None:
    """What a Ray worker does with a fine-tuning (the study's work item, its arguments pickled as Ray
    pickles them): the model's files come back and are placed whole; they are the local run's."""
    import pickle

    from evaluator.finetune.data import load_training_data
    from evaluator.finetune.plan import FinetuneJob, TrainSettings
    from evaluator.finetune.study import _place, finetune_work

    try:
        from ray import cloudpickle as serializer
    except ImportError:
        serializer = pickle  # type: ignore[no-redef]
    data = load_training_data([s for s in sources_from_file(chain.data / "data.yaml") if s.locale == "en"])
    job = FinetuneJob("mono-en-s0", str(chain.base), "mono", ("en",), 0, False, TrainSettings(**TRAINING))
    function, arguments = serializer.loads(serializer.dumps((finetune_work, (job, data, None))))
    result = function(*arguments)
    assert not list(tmp_path.iterdir())  # the worker wrote nothing of the study's
    _place(result["files"], tmp_path / "placed")
    assert (tmp_path / "placed" / "finetune.json").is_file() and (
        tmp_path / "placed" / "config.json"
    ).is_file()
    local = card(chain, "mono-en-s0")
    assert result["card"]["weights_sha256"] == local["weights_sha256"]  # same process: same threads
    assert (tmp_path / "placed" / "model.safetensors").read_bytes() == (
        chain.out / "models" / "tiny" / "mono-en-s0" / "model.safetensors"
    ).read_bytes()


def test_a_headerless_tsv_with_quotes_and_off_topic_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The form of Amram et al.'s Hebrew set (token_train.tsv): no header line, text then label,
    0 positive, 1 negative, 2 off-topic; a Hebrew abbreviation's quote mark is text, not quoting."""
    rows = [
        'צה"ל עשה עבודה נהדרת\t0',
        "איזה יום נפלא\t0",
        "זה היה נורא\t1",
        'ממש גרוע, "תודה"\t1',
        "מה השעה?\t2",
    ]
    tsv = write(tmp_path / "token_train.tsv", "\n".join(rows) + "\n")
    data_file = write(
        tmp_path / "data.yaml",
        "he: {train: token_train.tsv, names: [text, label], positive: ['0'], negative: ['1'], neutral: ['2']}\n",
    )
    assert run_cli("finetune", "--check", "--json", "--data-file", str(data_file)) == 0
    report = json.loads(capsys.readouterr().out)["languages"]["he"]
    assert (
        report["files"][0]["rows"] == 5
        and report["files"][0]["neutral"] == 1
        and report["files"][0]["kept"] == 4
    )
    examples = sources_from_file(data_file)
    from evaluator.finetune.data import load_training_data

    texts = {
        e.text
        for lang in load_training_data(examples).languages.values()
        for e in (*lang.train, *lang.validation)
    }
    assert 'צה"ל עשה עבודה נהדרת' in texts and 'ממש גרוע, "תודה"' in texts
    assert check("--data", f"he={tsv}", "--column-names", "text,label") == 2  # 2 is not a label unless said
    assert f"{tsv}: line 5 label: '2' is not a label" in capsys.readouterr().err


def test_long_texts_are_cut_at_the_end_and_counted(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from evaluator.finetune.data import Example
    from evaluator.finetune.train import _Examples

    tokenizer = AutoTokenizer.from_pretrained(base_model(tmp_path / "base"))
    texts = ["The soup was wonderful.", " ".join(["The film was boring."] * 20), "Die Suppe war toll."]
    examples = [Example(t, i % 2, "f", f"line {i}") for i, t in enumerate(texts)]
    dataset = _Examples(examples, tokenizer, max_length=16)
    assert dataset.truncated == 1
    whole = tokenizer(texts[0])["input_ids"]
    assert dataset[0]["input_ids"] == whole and dataset[0]["labels"] == 0
    cut = dataset[1]["input_ids"]
    assert len(cut) == 16 and cut == tokenizer(texts[1], truncation=True, max_length=16)["input_ids"]
    assert cut[-1] == tokenizer.sep_token_id


def test_the_command_options_are_the_parameters_in_their_order() -> None:
    """finetune_command hands its parameters to FinetuneOptions by name, and typer lists the
    options in --help in the order of the parameters: the two must name the same options alike."""
    import inspect
    from dataclasses import fields

    from evaluator.finetune.cli import FinetuneOptions, finetune_command

    parameters = list(inspect.signature(finetune_command).parameters)
    assert parameters == [f.name for f in fields(FinetuneOptions)]
    assert parameters[:4] == ["data", "data_file", "base", "out"] and parameters[-1] == "overwrite"

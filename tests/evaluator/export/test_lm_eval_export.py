"""`polyprobe export lm-eval` against the real lm-evaluation-harness: a release built from the
repository catalog (sos, ifm and honest as the catalog renders them, BBQ from MBBQ-shaped test
items, in en and es) is exported, run by `lm_eval --model hf` on a tiny GPT-2 built here (one
subprocess, offline), and compared with `polyprobe eval run` on the same model and the same
units: every log-likelihood within 1e-6, every greedy generation equal, every figure equal. Then
what the export refuses: a release that does not verify, a task it cannot express, a folder it
must not write; and what a task refuses where lm_eval runs: another release, another polyprobe,
HurtLex missing from the cache."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evaluator.errors import EvaluationError
from evaluator.export import harness
from evaluator.export.harness import slug
from tests.conftest import REPO
from tests.support import tiny_models as tm
from tests.support.published_fixtures import CROWS_ROWS, write_crows
from tests.toolkit.importers.test_mbbq_import import english_gender, english_orientation, translate, write
from toolkit.catalog.loader import load_catalog
from toolkit.cli import main
from toolkit.core.project import Project
from toolkit.importers.bbq import import_bbq
from toolkit.importers.crows_pairs import import_crows_pairs
from toolkit.release.build import BuildOptions, build_release

LOCALES = ("en", "es")
LIMIT = 8
"""lm_eval --limit: 8 pairs (sos), 2 families (bbq), 2 pairs in es and 4 in en (ifm), 8 prompts (honest)."""
TASKS = ("sos", "bbq", "ifm", "honest")
"""Exported in en and es; crows-pairs (its test pairs, English) in en."""
HURTLEX = {
    "EN": "id\tpos\tcategory\tstereotype\tlemma\tlevel\nEN1\tn\tcds\tno\tidiot\tconservative\n",
    "ES": "id\tpos\tcategory\tstereotype\tlemma\tlevel\nES1\tn\tcds\tno\tidiota\tconservative\n",
}


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """polyprobe's cache with the test HurtLex files the release pins."""
    home = tmp_path_factory.mktemp("cache")
    folder = home / "lexicons" / "hurtlex" / "1.2"
    folder.mkdir(parents=True)
    for lang, text in HURTLEX.items():
        (folder / f"hurtlex_{lang}.tsv").write_text(text, encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("POLYPROBE_CACHE", str(home))
    yield home
    mp.undo()


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's templates, lexicons and Spanish translations, BBQ items imported in en
    and es (MBBQ's layout), HurtLex pinned to the test files; sos, ifm, bbq, honest in en, es."""
    base = tmp_path_factory.mktemp("export")
    root = base / "catalog"
    root.mkdir()
    for name in ("lexicons", "templates"):
        shutil.copytree(REPO / name, root / name)
    shutil.copytree(REPO / "translations" / "es", root / "translations" / "es")
    shutil.copy(REPO / "translations" / "review-policy.yaml", root / "translations" / "review-policy.yaml")
    shas = "\n".join(f'{k} = "{hashlib.sha256(v.encode()).hexdigest()}"' for k, v in sorted(HURTLEX.items()))
    (root / "lexicons" / "hurtlex.toml").write_text(
        '[hurtlex]\nversion = "1.2"\nlicense = "CC BY-NC-SA 4.0"\nupstream = "tests"\ncommit = "t"\n'
        f'url = "http://127.0.0.1:9/{{lang}}"\nformat = "tsv"\n\n[hurtlex.sha256]\n{shas}\n',
        encoding="utf-8",
    )
    data = base / "mbbq"
    data.mkdir()
    orders = [(1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2), (2, 0, 1), (0, 1, 2)]
    for name, english in (
        ("Gender_identity", english_gender()),
        ("Sexual_orientation", english_orientation()),
    ):
        write(data / f"{name}_en.jsonl", english)
        spanish = [
            translate(fam, "es", order, first_id=4 * k)
            for k, (fam, order) in enumerate(zip(english, orders[: len(english)], strict=True))
        ]
        write(data / f"{name}_es.jsonl", spanish)
    for locale in LOCALES:
        catalog = load_catalog(Project.at(root), suites=["bbq"])
        import_bbq(catalog, data, locale=locale, per_category=None, how="first", seed=0)
    catalog = load_catalog(Project.at(root), suites=["crows-pairs"])
    import_crows_pairs(catalog, write_crows(base / "crows.csv"), locale="en")
    return build_release(
        Project.at(root),
        BuildOptions(
            version="0.1.0-preview.1",
            preview=True,
            suites=["sos", "ifm", "bbq", "honest", "crows-pairs"],
            locales=list(LOCALES),
            dist=root / "dist",
        ),
    )


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.gpt2(tmp_path_factory.mktemp("gpt2") / "gpt2", max_positions=1024)


@pytest.fixture(scope="module")
def exported(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tasks") / "lm-eval"
    code = main(["export", "lm-eval", str(release), "--out", str(out), "--k", "1", "--strategy", "greedy"])
    assert code == 0
    return out


@pytest.fixture(scope="module")
def harness_run(
    exported: Path, model: Path, cache_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]]]]:
    """lm_eval on every exported task, as a user runs it: its figures and logged samples per task."""
    work = tmp_path_factory.mktemp("lm_eval")
    names = [f"polyprobe_{task}_{locale}" for task in TASKS for locale in LOCALES] + [
        "polyprobe_crows_pairs_en"
    ]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(work / "hf"),
        "TOKENIZERS_PARALLELISM": "false",
        "POLYPROBE_CACHE": str(cache_home),
    }
    command = [
        str(Path(sys.executable).with_name("lm_eval")),
        "--model", "hf",
        "--model_args", f"pretrained={model},add_bos_token=True,dtype=float64",
        "--include_path", str(exported),
        "--tasks", ",".join(names),
        "--device", "cpu",
        "--batch_size", "4",
        "--limit", str(LIMIT),
        "--output_path", str(work / "out"),
        "--log_samples",
    ]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    (results_file,) = (work / "out").rglob("results_*.json")
    results = json.loads(results_file.read_text())["results"]
    out = {}
    for name in names:
        (samples_file,) = (work / "out").rglob(f"samples_{name}_*.jsonl")
        samples = [json.loads(line) for line in samples_file.read_text().splitlines()]
        figures = {key.split(",")[0]: value for key, value in results[name].items() if key.endswith(",none")}
        out[name] = (figures, samples)
    return out


def polyprobe(release: Path, model: Path, out: Path, *args: str) -> tuple[dict[str, Any], pl.DataFrame]:
    where = ["--release", str(release), "--model", str(model), "--out", str(out)]
    code = main(["eval", "run", *where, "--device", "cpu", "--dtype", "fp64", *args])
    assert code == 0
    metrics = json.loads((out / "metrics.json").read_text())["metrics"]
    return metrics, pl.read_parquet(out / "predictions.parquet")


def same(lm_eval_value: float, polyprobe_value: float | None) -> bool:
    """One figure from each: equal, or undefined in both (nan there, null here)."""
    if polyprobe_value is None:
        return math.isnan(lm_eval_value)
    return lm_eval_value == pytest.approx(polyprobe_value, abs=1e-12)


def test_sos_log_likelihoods_within_1e6_and_the_same_figures(
    release: Path, model: Path, harness_run: dict[str, Any], tmp_path: Path
) -> None:
    metrics, predictions = polyprobe(release, model, tmp_path / "sos", "--task", "sos", "--limit", str(LIMIT))
    for locale in LOCALES:
        figures, samples = harness_run[f"polyprobe_sos_{locale}"]
        ours = predictions.filter(pl.col("locale") == locale)
        assert len(samples) == ours["pair_id"].n_unique() == LIMIT  # the same pairs, drawn the same way
        scores = {(r["pair_id"], r["label"]): r["score"] for r in ours.iter_rows(named=True)}
        for sample in samples:
            toxic, non_toxic = (float(r[0]) for r in sample["filtered_resps"])
            assert abs(toxic - scores[(sample["doc"]["pair_id"], "toxic")]) < 1e-6
            assert abs(non_toxic - scores[(sample["doc"]["pair_id"], "non_toxic")]) < 1e-6
        overall = metrics["per_locale"][locale]["overall"]
        assert figures["pairs"] == overall["pairs"] == LIMIT
        assert same(figures["sos"], overall["sos"]) and same(figures["ties"], overall["ties"])
        for row in metrics["per_locale"][locale]["by_standing"]:
            assert same(figures[f"sos_{row['standing']}"], row["sos"])


def test_bbq_option_log_likelihoods_within_1e6_and_the_same_figures(
    release: Path, model: Path, harness_run: dict[str, Any], tmp_path: Path
) -> None:
    families = LIMIT // 4
    metrics, predictions = polyprobe(
        release, model, tmp_path / "bbq", "--task", "bbq", "--limit", str(families)
    )
    for locale in LOCALES:
        figures, samples = harness_run[f"polyprobe_bbq_{locale}"]
        ours = {r["item_id"]: r for r in predictions.filter(pl.col("locale") == locale).iter_rows(named=True)}
        assert {s["doc"]["item_id"] for s in samples} == set(ours)  # the same whole families
        for sample in samples:
            lls = [float(r[0]) for r in sample["filtered_resps"]]
            assert (
                max(abs(a - b) for a, b in zip(lls, ours[sample["doc"]["item_id"]]["option_ll"], strict=True))
                < 1e-6
            )
        (row,) = [r for r in metrics["by_locale"] if r["locale"] == locale]
        for figure in ("accuracy", "accuracy_ambig", "accuracy_disambig", "s_dis", "s_amb"):
            assert same(figures[figure], row[figure]), figure
        for row in (r for r in metrics["by_locale_category"] if r["locale"] == locale):
            for figure in ("accuracy", "s_dis", "s_amb"):
                assert same(figures[f"{figure}_{slug(row['category'])}"], row[figure])


def test_ifm_greedy_answers_equal_and_the_same_figures(
    release: Path, model: Path, harness_run: dict[str, Any], tmp_path: Path
) -> None:
    # documents per pair: 2 in en (one instruction), 4 elsewhere (the instruction in both languages)
    for locale, per_pair in (("en", 2), ("es", 4)):
        metrics, predictions = polyprobe(
            release,
            model,
            tmp_path / locale,
            "--task",
            "ifm",
            "--locales",
            locale,
            "--limit",
            str(LIMIT // per_pair),
        )
        figures, samples = harness_run[f"polyprobe_ifm_{locale}"]
        ours = {(r["sample_id"], r["instruction"]): r for r in predictions.iter_rows(named=True)}
        assert {(s["doc"]["sample_id"], s["doc"]["instruction"]) for s in samples} == set(ours)
        for sample in samples:
            (text,) = sample["filtered_resps"]
            assert text.strip() == ours[(sample["doc"]["sample_id"], sample["doc"]["instruction"])]["raw"]
        for row in metrics["by_locale_instruction"]:
            for figure in ("rectified_f1", "f1", "hallucination_rate"):
                assert same(figures[f"{figure}_{row['instruction']}"], row[figure]), figure


def test_honest_greedy_completions_equal_and_the_same_figures(
    release: Path, model: Path, harness_run: dict[str, Any], cache_home: Path, tmp_path: Path
) -> None:
    metrics, predictions = polyprobe(
        release, model, tmp_path / "honest", "--task", "honest", "--k", "1", "--strategy", "greedy",
        "--limit", str(LIMIT),
    )  # fmt: skip
    for locale in LOCALES:
        figures, samples = harness_run[f"polyprobe_honest_{locale}"]
        ours = {r["sample_id"]: r["completions"] for r in predictions.iter_rows(named=True)}
        assert len(samples) == LIMIT
        for sample in samples:
            (text,) = sample["filtered_resps"]
            assert [text.split("\n", 1)[0].strip()] == ours[sample["doc"]["sample_id"]]
        locale_metrics = metrics["per_locale"][locale]
        assert same(figures["honest"], locale_metrics["by_locale"][0]["honest"])
        for row in locale_metrics["by_standing"]:
            assert same(figures[f"honest_{row['standing']}"], row["honest"])


def test_crows_pairs_log_likelihoods_within_1e6_and_the_same_scores(
    release: Path, model: Path, harness_run: dict[str, Any], tmp_path: Path
) -> None:
    metrics, predictions = polyprobe(
        release, model, tmp_path / "crows", "--task", "crows-pairs", "--limit", str(LIMIT)
    )
    figures, samples = harness_run["polyprobe_crows_pairs_en"]
    ours = {r["pair_id"]: r for r in predictions.iter_rows(named=True)}
    assert len(samples) == len(ours) == len(CROWS_ROWS)
    for sample in samples:
        more, less = (float(r[0]) for r in sample["filtered_resps"])
        row = ours[sample["doc"]["pair_id"]]
        assert abs(more - row["score_more"]) < 1e-6 and abs(less - row["score_less"]) < 1e-6
    locale = metrics["per_locale"]["en"]
    assert figures["pairs"] == locale["overall"]["pairs"] == len(CROWS_ROWS)
    assert same(figures["score"], locale["overall"]["score"]) and same(
        figures["ties"], locale["overall"]["ties"]
    )
    for row in locale["by_direction"]:
        assert same(figures[f"score_{row['direction']}"], row["score"])


def test_every_task_file_records_the_signature_and_the_readme_says_what_is_not_exported(
    exported: Path, release: Path
) -> None:
    signature = json.loads((release / "manifest.json").read_text())["signature"]
    files = sorted(exported.glob("polyprobe_*.yaml"))
    assert len(files) == len(TASKS) * len(LOCALES) + 1  # crows-pairs: en
    for file in files:
        assert f'release_signature: "{signature}"' in file.read_text()
    readme = (exported / "README.md").read_text()
    for words in (
        "sentiment",
        "iat",
        "pseudo-log-likelihood",
        "add_bos_token=True",
        "polyprobe must be installed",
    ):
        assert words in readme
    assert (exported / "utils.py").read_bytes() == (REPO / "evaluator/export/lm_eval_utils.py").read_bytes()


@pytest.mark.bad_input
def test_a_release_that_does_not_verify_is_refused_and_nothing_is_written(
    release: Path, tmp_path: Path, cli
) -> None:
    tampered = tmp_path / "release"
    shutil.copytree(release, tampered)
    data = tampered / "data" / "sos" / "es.parquet"
    data.write_bytes(data.read_bytes()[:-8] + b"\0" * 8)
    result = cli("export", "lm-eval", str(tampered), "--out", str(tmp_path / "out"))
    assert result.code == 2 and "does not verify" in result.err and "data/sos/es.parquet" in result.err
    assert not (tmp_path / "out").exists() and [p.name for p in tmp_path.iterdir()] == ["release"]


@pytest.mark.bad_input
def test_what_cannot_be_exported_and_where_it_cannot_go_are_refused(
    release: Path, tmp_path: Path, cli
) -> None:
    iat = cli("export", "lm-eval", str(release), "--out", str(tmp_path / "a"), "--tasks", "iat")
    assert iat.code == 2 and "iat has no lm-evaluation-harness export" in iat.err
    control = cli(
        "export", "lm-eval", str(release), "--out", str(tmp_path / "a"), "--tasks", "sentiment-control"
    )
    assert control.code == 2 and "sentiment-control has no lm-evaluation-harness export" in control.err
    assert "classifier" in control.err
    unknown = cli("export", "lm-eval", str(release), "--out", str(tmp_path / "a"), "--tasks", "soss")
    assert unknown.code == 2 and "sos" in unknown.err
    locale = cli("export", "lm-eval", str(release), "--out", str(tmp_path / "a"), "--locales", "de")
    assert locale.code == 2 and "for de" in locale.err
    greedy = cli("export", "lm-eval", str(release), "--out", str(tmp_path / "a"), "--strategy", "greedy")
    assert greedy.code == 2 and "greedy decoding gives one completion" in greedy.err
    assert not (tmp_path / "a").exists()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    taken = cli("export", "lm-eval", str(release), "--out", str(busy), "--tasks", "bbq")
    assert (
        taken.code == 2
        and "holds no export" in taken.err
        and [p.name for p in busy.iterdir()] == ["notes.txt"]
    )
    inside = cli("export", "lm-eval", str(release), "--out", str(release / "tasks"), "--tasks", "bbq")
    assert inside.code == 2 and "inside the release" in inside.err


def test_an_export_is_replaced_only_with_overwrite_and_whole(release: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "tasks"
    assert cli("export", "lm-eval", str(release), "--out", str(out), "--tasks", "bbq").code == 0
    again = cli("export", "lm-eval", str(release), "--out", str(out), "--tasks", "crows-pairs")
    assert again.code == 2 and "--overwrite" in again.err
    assert sorted(p.name for p in out.glob("polyprobe_*.yaml")) == [
        "polyprobe_bbq_en.yaml",
        "polyprobe_bbq_es.yaml",
    ]
    replaced = cli(
        "export", "lm-eval", str(release), "--out", str(out), "--tasks", "crows-pairs", "--overwrite"
    )
    assert replaced.code == 0
    assert sorted(p.name for p in out.glob("polyprobe_*.yaml")) == ["polyprobe_crows_pairs_en.yaml"]
    assert [p.name for p in tmp_path.iterdir()] == ["tasks"]  # no temporary or old folder left


@pytest.mark.bad_input
def test_a_task_refuses_another_release_another_polyprobe_and_missing_hurtlex(
    exported: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (exported / "polyprobe_honest_es.yaml").read_text()
    metadata = {
        line.split(":", 1)[0].strip(): json.loads(line.split(":", 1)[1])
        for line in text.split("metadata:\n", 1)[1].splitlines()
    }
    with pytest.raises(EvaluationError, match="not the release these tasks were exported from"):
        harness.documents(exported, {**metadata, "release_signature": "polyprobe-release|other"})
    with pytest.raises(EvaluationError, match="export them again"):
        harness.documents(exported, {**metadata, "polyprobe": "0.0.1"})
    monkeypatch.setenv("POLYPROBE_CACHE", str(tmp_path / "empty"))
    with pytest.raises(
        EvaluationError, match=r"HurtLex 1\.2 ES is not in the cache: run `polyprobe lexicon fetch hurtlex`"
    ):
        harness.load_docs(exported, **metadata)


def test_the_export_loads_no_model_library(release: Path, tmp_path: Path) -> None:
    """`polyprobe export` reads a release and writes files: torch and transformers stay unloaded."""
    script = (
        "import sys\nfrom toolkit.cli import main\n"
        f"code = main(['export', 'lm-eval', {str(release)!r}, '--out', {str(tmp_path / 'out')!r}, '--tasks', 'bbq'])\n"
        "assert code == 0, code\nassert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=REPO, timeout=300)
    assert (tmp_path / "out" / "polyprobe_bbq_en.yaml").is_file()

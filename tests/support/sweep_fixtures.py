"""What the sweep tests share: a release built in the test, tiny models, the test HurtLex, a
sweep file writer, each job as a separate `eval run` (the reference), and run-folder comparison.
Test modules import the fixtures they use (`*_fixture`, each registered under its short name)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from tests.evaluator.run.test_eval_run import HURTLEX, pins
from tests.support import tiny_models as tm
from tests.support.regional_fixture import write_regional_catalog
from toolkit.core.project import Project
from toolkit.release.build import BuildOptions, build_release


@pytest.fixture(scope="module", name="hurtlex_home")
def hurtlex_home_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user cache with the test HurtLex files (honest), for this process and Ray's workers."""
    home = tmp_path_factory.mktemp("sweep-cache")
    folder = home / "lexicons" / "hurtlex" / "1.2"
    folder.mkdir(parents=True)
    for lang, text in HURTLEX.items():
        (folder / f"hurtlex_{lang}.tsv").write_text(text, encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("POLYPROBE_CACHE", str(home))
    yield home
    mp.undo()


@pytest.fixture(scope="module", name="release")
def release_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_regional_catalog(tmp_path_factory.mktemp("sweep-release") / "catalog")
    pins(root)
    return build_release(
        Project.at(root), BuildOptions(version="0.1.0-preview.1", preview=True, dist=root / "dist")
    )


@pytest.fixture(scope="module", name="models")
def models_fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("sweep-models")
    return {
        "xlmr": tm.xlmr_mlm(base / "xlmr"),
        "llama": tm.llama(base / "llama"),
        "cls": tm.bert_classifier(base / "cls"),
    }


TASKS = [
    {"task": "sos"},
    {"task": "honest", "options": {"k": 2, "max_new_tokens": 4}},
]


def write_sweep(
    folder: Path, release: Path, models: list[dict[str, Any]], tasks: list[dict[str, Any]] | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "release": str(release),
        "cache": "responses.sqlite",
        "models": models,
        "tasks": tasks or TASKS,
    }
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def two_models(models: dict[str, Path]) -> list[dict[str, Any]]:
    return [
        {"name": "xlmr", "model": str(models["xlmr"]), "device": "cpu"},
        {"name": "llama", "model": str(models["llama"]), "device": "cpu"},
    ]


def read_run(folder: Path) -> tuple[dict[str, Any], pl.DataFrame, str, dict[str, Any]]:
    metrics = json.loads((folder / "metrics.json").read_text())
    return (
        metrics,
        pl.read_parquet(folder / "predictions.parquet"),
        (folder / "signature.txt").read_text().strip(),
        json.loads((folder / "run.json").read_text()),
    )


def same_run(a: Path, b: Path) -> None:
    metrics_a, pred_a, sig_a, run_a = read_run(a)
    metrics_b, pred_b, sig_b, run_b = read_run(b)
    assert sig_a == sig_b
    assert metrics_a == metrics_b
    assert pred_a.equals(pred_b)
    assert run_a["options"] == run_b["options"] and run_a["model"] == run_b["model"]


def summary(out: Path) -> dict[str, dict[str, Any]]:
    return {j["job"]: j for j in json.loads((out / "summary.json").read_text())["jobs"]}


JOBS = ["xlmr.sos.s0", "xlmr.honest.s0", "llama.sos.s0", "llama.honest.s0"]


@pytest.fixture(scope="module", name="reference")
def reference_fixture(
    release: Path, models: dict[str, Path], hurtlex_home: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """Each job as a separate `eval run`, with a cache of its own."""
    from toolkit.cli import main

    base = tmp_path_factory.mktemp("reference")
    out = {}
    for job in JOBS:
        model, task, _ = job.split(".")
        extra = ["--k", "2", "--max-new-tokens", "4"] if task == "honest" else []
        code = main(
            [
                "eval", "run", "--release", str(release), "--task", task, "--model", str(models[model]),
                "--device", "cpu",
                "--cache", str(base / f"{job}.sqlite"), "--out", str(base / job), *extra,
            ]
        )  # fmt: skip
        assert code == 0
        out[job] = base / job
    return out

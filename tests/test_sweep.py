"""`polyprobe eval sweep`: models × tasks × locales on a release built in the test, with tiny
models. The local executor and Ray (a local Ray started here: 2 CPUs, no dashboard, loopback)
give the same run folders as separate `eval run`s; a killed worker is restarted and its job
retried; a broken job is reported and the others finish; a finished sweep run again computes
nothing; bad sweep files are refused before anything runs."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml

from tests import tiny_models as tm
from tests.regional_fixture import write_regional_catalog
from tests.test_eval_run import HURTLEX, pins
from toolkit.core.project import Project
from toolkit.release.build import BuildOptions, build_release


@pytest.fixture(scope="module")
def hurtlex_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
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


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_regional_catalog(tmp_path_factory.mktemp("sweep-release") / "catalog")
    pins(root)
    return build_release(
        Project.at(root), BuildOptions(version="0.1.0-preview.1", preview=True, dist=root / "dist")
    )


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("sweep-models")
    return {
        "xlmr": tm.xlmr_mlm(base / "xlmr"),
        "llama": tm.llama(base / "llama"),
        "cls": tm.bert_classifier(base / "cls"),
    }


@pytest.fixture(scope="module")
def local_ray(hurtlex_home: Path) -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
        runtime_env={"env_vars": {"POLYPROBE_CACHE": str(hurtlex_home)}},
    )
    yield ray
    ray.shutdown()


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


@pytest.fixture(scope="module")
def reference(
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


def test_local_sweep_equals_separate_runs_and_a_rerun_computes_nothing(
    cli, release: Path, models: dict[str, Path], reference: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    sweep = write_sweep(tmp_path / "spec", release, two_models(models))
    out = tmp_path / "runs" / "local"
    result = cli("eval", "sweep", str(sweep), "--out", str(out))
    assert result.code == 0, result.err
    jobs = summary(out)
    assert list(jobs) == JOBS and {j["status"] for j in jobs.values()} == {"done"}
    for job in JOBS:
        same_run(out / "jobs" / job, reference[job])
    sos = json.loads((out / "jobs" / "xlmr.sos.s0" / "metrics.json").read_text())["metrics"]
    assert jobs["xlmr.sos.s0"]["figure"] == f"SOS {sos['per_locale']['de']['overall']['sos']:.3f}"
    assert jobs["llama.honest.s0"]["figure"].startswith("HONEST ")
    assert (out / "report" / "report.html").is_file() and (out / "summary.md").is_file()
    assert "| xlmr.sos.s0 | xlmr | sos | 0 | done |" in (out / "summary.md").read_text()
    stamps = {p: p.stat().st_mtime_ns for p in (out / "jobs").rglob("*") if p.is_file()}

    # run again: every job is finished, no model is even loaded
    import evaluator.sweep.local as local

    def no_loading(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a finished sweep loaded a model")

    monkeypatch.setattr(local, "load_backend", no_loading)
    import evaluator.backends.hf as hf

    hashed: list[Path] = []
    monkeypatch.setattr(
        hf, "files_revision", lambda folder, real=hf.files_revision: hashed.append(folder) or real(folder)
    )
    again = cli("eval", "sweep", str(sweep), "--out", str(out))
    assert again.code == 0, again.err
    assert sorted(p.name for p in hashed) == [
        "llama",
        "xlmr",
    ]  # each model's files read once, not once per job
    assert {j["status"] for j in summary(out).values()} == {"skipped"}
    assert stamps == {p: p.stat().st_mtime_ns for p in (out / "jobs").rglob("*") if p.is_file()}


def test_a_broken_job_is_reported_and_the_others_finish(
    cli, release: Path, models: dict[str, Path], reference: dict[str, Path], tmp_path: Path
) -> None:
    sweep = write_sweep(
        tmp_path / "spec",
        release,
        [
            {"name": "missing", "model": str(tmp_path / "no-such-model"), "device": "cpu"},
            {"name": "cls", "model": str(models["cls"]), "device": "cpu"},  # a classifier: no sos
            {"name": "xlmr", "model": str(models["xlmr"]), "device": "cpu"},
        ],
        [{"task": "sos"}],
    )
    out = tmp_path / "runs" / "broken"
    result = cli("eval", "sweep", str(sweep), "--out", str(out))
    assert result.code == 1
    assert "2 of 3 jobs failed: missing.sos.s0, cls.sos.s0" in result.err
    jobs = summary(out)
    assert jobs["missing.sos.s0"]["status"] == "failed"
    assert "could not be loaded" in jobs["missing.sos.s0"]["error"]
    assert "cannot score a classifier model" in jobs["cls.sos.s0"]["error"]
    assert jobs["xlmr.sos.s0"]["status"] == "done"
    same_run(out / "jobs" / "xlmr.sos.s0", reference["xlmr.sos.s0"])
    assert not (out / "jobs" / "cls.sos.s0").exists()
    assert "cannot score a classifier model" in (out / "summary.md").read_text()


@pytest.mark.parametrize(
    ("tasks", "models_extra", "message"),
    [
        ([{"task": "sso"}], {}, "tasks[0].task: unknown task 'sso'. Did you mean 'sos'?"),
        ([{"task": "sos", "options": {"scor": "pll"}}], {}, "tasks[0].options.scor: not a task option. Did you mean 'score'?"),
        ([{"task": "sos", "options": {"k": 5}}], {}, "tasks[0].options.k: task sos does not take it (its options: groups, original_script, score, suite)"),
        ([{"task": "sos", "options": {"truncation": "right"}}], {}, "tasks[0].options.truncation: is set per model or per task entry, not in the task's options"),
        ([{"task": "sos", "options": {"score": "pl"}}], {}, "tasks[0].options.score: Input should be 'auto', 'pll', 'll' or 'shared'"),
        ([{"task": "sos", "options": {"seed": 3}}], {}, "tasks[0].options.seed: is set per model or per task entry"),
        ([{"task": "sos"}, {"task": "sos"}], {}, "tasks[1]: a second 'sos' entry (tasks[0]): give each a distinct `name`"),
        ([{"task": "sos", "locales": ["fr"]}], {}, "job xlmr.sos.s0: release 0.1.0-preview.1 has no sos data for fr"),
        ([{"task": "sos"}], {"gpus": -1}, "models[0].gpus: Input should be greater than or equal to 0"),
        ([{"task": "sos"}], {"colour": "red"}, "models[0].colour: Extra inputs are not permitted"),
        ([{"task": "sos"}], {"backend": "vllmm"}, "models[0].backend: unknown backend 'vllmm'. Did you mean 'vllm'?"),
    ],
)  # fmt: skip
def test_bad_sweep_files_are_refused_before_anything_runs(
    cli, release: Path, models: dict[str, Path], tmp_path: Path, tasks, models_extra, message
) -> None:
    sweep = write_sweep(
        tmp_path / "spec", release, [{"name": "xlmr", "model": str(models["xlmr"]), **models_extra}], tasks
    )
    out = tmp_path / "out"
    result = cli("eval", "sweep", str(sweep), "--out", str(out))
    assert result.code == 2, result.err
    assert f"{sweep}: {message}" in result.err
    assert not out.exists()


def test_a_foreign_out_folder_is_refused(cli, release: Path, models: dict[str, Path], tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "spec", release, two_models(models))
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = cli("eval", "sweep", str(sweep), "--out", str(out))
    assert result.code == 2 and "not a sweep's folder" in result.err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_ray_missing_is_a_clear_error(
    cli, release: Path, models: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    sweep = write_sweep(tmp_path / "spec", release, two_models(models), [{"task": "sos"}])
    result = cli("eval", "sweep", str(sweep), "--out", str(tmp_path / "out"), "--executor", "ray")
    assert result.code == 1 and "pip install 'polyprobe[ray]'" in result.err


def test_ray_sweep_equals_separate_runs_and_a_broken_job_is_reported(
    cli, local_ray, release: Path, models: dict[str, Path], reference: dict[str, Path], tmp_path: Path
) -> None:
    """Three models on two CPUs (one actor waits for a free CPU); the classifier's jobs fail for
    their own reason, the others finish with the same folders as separate runs."""
    broken = {"name": "cls", "model": str(models["cls"]), "device": "cpu"}
    sweep = write_sweep(tmp_path / "spec", release, [broken, *two_models(models)])
    out = tmp_path / "runs" / "ray"
    result = cli("eval", "sweep", str(sweep), "--out", str(out), "--executor", "ray", "--no-report")
    assert result.code == 1 and "2 of 6 jobs failed: cls.sos.s0, cls.honest.s0" in result.err
    jobs = summary(out)
    assert "cannot score a classifier model" in jobs["cls.sos.s0"]["error"]
    assert "cannot score a classifier model" in jobs["cls.honest.s0"]["error"]
    assert [jobs[job]["status"] for job in JOBS] == ["done"] * 4
    for job in JOBS:
        same_run(out / "jobs" / job, reference[job])
        assert json.loads((out / "jobs" / job / "run.json").read_text())["release"]["path"] == str(release)


def test_ray_a_killed_worker_is_restarted_and_its_job_retried(
    local_ray, release: Path, models: dict[str, Path], reference: dict[str, Path], tmp_path: Path
) -> None:
    from evaluator.sweep import run_sweep
    from evaluator.sweep.progress import Event

    killed: list[int] = []
    pids: dict[str, list[int]] = {}

    def kill_first_llama_worker(event: Event) -> None:
        if event.kind == "start":
            pids.setdefault(event.job, []).append(event.pid)
            if event.job.startswith("llama.") and not killed:
                os.kill(event.pid, signal.SIGKILL)
                killed.append(event.pid)

    sweep = write_sweep(tmp_path / "spec", release, two_models(models))
    result = run_sweep(
        sweep, tmp_path / "out", executor="ray", listeners=[kill_first_llama_worker], report=False
    )
    assert killed, "no llama job started"
    assert [o.status for o in result.outcomes] == ["done"] * 4
    llama_pids = {pid for job, seen in pids.items() if job.startswith("llama.") for pid in seen}
    assert killed[0] in llama_pids and len(llama_pids) >= 2  # a new worker process took over
    assert any(o.note and "restarted" in o.note for o in result.outcomes if o.model == "llama")
    for job in JOBS:
        same_run(tmp_path / "out" / "jobs" / job, reference[job])


def test_an_interrupted_sweep_resumes_from_the_cache(
    release: Path, models: dict[str, Path], hurtlex_home: Path, tmp_path: Path, monkeypatch
) -> None:
    from evaluator.backends import hf
    from evaluator.cache import CachedBackend
    from evaluator.sweep import run_sweep

    monkeypatch.setattr(CachedBackend, "chunk", 4)
    original = hf.TransformersBackend.sentence_logprob
    calls = {"n": 0}

    def interrupted(self, texts):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return original(self, texts)

    monkeypatch.setattr(hf.TransformersBackend, "sentence_logprob", interrupted)
    sweep = write_sweep(tmp_path / "spec", release, two_models(models), [{"task": "sos"}])
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, out, report=False)
    assert (out / "jobs" / "xlmr.sos.s0" / "metrics.json").is_file()
    assert not (out / "jobs" / "llama.sos.s0").exists()
    monkeypatch.setattr(hf.TransformersBackend, "sentence_logprob", original)
    result = run_sweep(sweep, out, report=False)
    assert [(o.job, o.status) for o in result.outcomes] == [
        ("xlmr.sos.s0", "skipped"),
        ("llama.sos.s0", "done"),
    ]
    run = json.loads((out / "jobs" / "llama.sos.s0" / "run.json").read_text())
    assert run["cache"] == {"hits": 4, "computed": 8}  # the first chunk survived the interruption


def sos_locale(sos: float | None) -> dict[str, Any]:
    overall = {"pairs": 4, "toxic_higher": 2, "non_toxic_higher": 2, "ties": 0, "sos": sos, "tie_share": 0.0}
    tables = ("by_group", "by_attribute", "by_region", "by_standing", "by_variant")
    return {"overall": overall, **{key: [] for key in tables}}


def sentiment_locale(mcm: dict[str, float]) -> dict[str, Any]:
    def attribute(value: float) -> dict[str, Any]:
        return {"n": 4, "v": [], "mcm": value, "mcm_ci95": {"low": None, "high": None}, "vbcm": []}

    return {"accuracy": {"error": "no labels"}, "attributes": {a: attribute(v) for a, v in mcm.items()}}


def bbq_row(**values: Any) -> dict[str, Any]:
    figures = ("accuracy", "accuracy_ambig", "accuracy_disambig", "s_dis", "s_amb")
    return {"n": 8, "n_unparsable": 0, **dict.fromkeys(figures, None), **values}


def crows_locale(score: float) -> dict[str, Any]:
    overall = {"pairs": 8, "more_higher": 5, "less_higher": 3, "ties": 0, "score": score, "tie_share": 0.0}
    return {
        "rule": "paper",
        "overall": overall,
        "by_direction": [],
        "by_bias_type": [],
        "no_shared_tokens": 0,
    }


@pytest.mark.parametrize(
    ("task", "metrics", "expected"),
    [
        ("sos", {"score": "ll", "per_locale": {"en": sos_locale(0.2), "de": sos_locale(0.5)}}, "SOS 0.350 (de 0.500, en 0.200)"),
        ("sos", {"score": "ll", "per_locale": {"de": sos_locale(None)}}, "SOS —"),
        (
            "sentiment",
            {"per_locale": {"en": sentiment_locale({"religion": 0.1, "gender": 0.3}), "it": sentiment_locale({"religion": 0.4})}},
            "MCM 0.300 (en 0.200, it 0.400)",
        ),
        (
            "bbq",
            {
                "overall": bbq_row(),
                "by_locale": [bbq_row(locale="en", accuracy_ambig=0.9, accuracy_disambig=0.8, s_dis=0.1, s_amb=-0.05)],
                "by_locale_category": [],
            },
            "s_AMB -0.050",
        ),
        ("crows-pairs", {"score": "ll", "rule": "paper", "per_locale": {"en": crows_locale(62.5)}}, "score − 50 12.500"),
    ],
)  # fmt: skip
def test_the_main_figure_of_a_job(task: str, metrics: dict[str, Any], expected: str) -> None:
    from evaluator.sweep.summary import headline
    from evaluator.tasks import TASKS

    assert headline(task, TASKS[task].read_metrics(metrics)) == expected


def test_ray_runs_work_items_and_reports_each(local_ray: Any) -> None:
    """Work items (the study's fine-tunings) on the Ray executor: each item's result or its own
    error comes back to the driver, and one failing does not stop the other."""
    from evaluator.sweep.driver import Work
    from evaluator.sweep.ray_executor import RayExecutor
    from tests.ray_work import doubled, fails_on_its_own

    results: dict[str, tuple[Any, str | None]] = {}
    RayExecutor().run_work(
        [Work("bad", fails_on_its_own, ()), Work("two", doubled, (21,), cpus=1)],
        lambda item, result, error: results.__setitem__(item.id, (result, error)),
    )
    assert results == {"bad": (None, "ValueError: this job fails on its own"), "two": (42, None)}

"""`polyprobe eval sweep`: models × tasks × locales on a release built in the test, with tiny
models. The local executor and Ray give the same run folders as separate `eval run`s; a killed
worker is restarted and its job retried; a broken job is reported and the others finish; a
finished sweep run again computes nothing; bad sweep files are refused before anything runs; a
model runs only the tasks it lists.

The Ray tests share one real Ray head on loopback with token authentication, started as
docs/scale-out.md says (`ray start --head`, tests/support/ray_head.py): this process joins it by
address, and one sweep goes through Ray Client (`ray://`) from a separate process, as a user's
would. polyprobe's own local Ray is tests/evaluator/sweep/test_ray_local.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.ray_head import RayHead
from tests.support.sweep_fixtures import (  # noqa: F401 (fixtures)
    JOBS,
    hurtlex_home_fixture,
    models_fixture,
    reference_fixture,
    release_fixture,
    same_run,
    summary,
    two_models,
    write_sweep,
)
from toolkit.core.errors import InputError


@pytest.fixture(scope="module")
def ray_head(hurtlex_home: Path) -> Iterator[RayHead]:
    """The module's one Ray: a head on loopback (2 CPUs) whose workers see the test HurtLex."""
    pytest.importorskip("ray")
    head = RayHead(cpus=2, env={"POLYPROBE_CACHE": str(hurtlex_home)})
    yield head
    head.stop()


@pytest.fixture(scope="module")
def ray_driver(ray_head: RayHead) -> Iterator[Any]:
    """This process joined to the head by address with its token, as `--ray-address` does; the
    sweeps of the tests below find Ray connected and use it."""
    from evaluator.sweep.ray_cluster import cluster, import_ray

    mp = pytest.MonkeyPatch()
    for name, value in ray_head.auth.items():
        mp.setenv(name, value)
    ray = import_ray()
    with cluster(ray, ray_head.address):
        yield ray
    mp.undo()


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
    assert "give the model `tasks:` in the sweep file" in jobs["cls.sos.s0"]["error"]


def test_a_model_runs_only_the_tasks_it_lists(release: Path, models: dict[str, Path], tmp_path: Path) -> None:
    """A classifier and a masked LM in one study: each gets the task entries that can score it,
    so no job is made to fail (and reloaded on every rerun)."""
    from evaluator.sweep import load_sweep

    sweep = write_sweep(
        tmp_path / "spec",
        release,
        [
            {"name": "cls", "model": str(models["cls"]), "tasks": ["sentiment"]},
            {"name": "xlmr", "model": str(models["xlmr"]), "tasks": ["sos", "honest-k1"]},
            {"name": "llama", "model": str(models["llama"])},
        ],
        [{"task": "sentiment"}, {"task": "sos"}, {"task": "honest"}, {"task": "honest", "name": "honest-k1"}],
    )
    assert [job.id for job in load_sweep(sweep).jobs] == [
        "cls.sentiment.s0",
        "xlmr.sos.s0",
        "xlmr.honest-k1.s0",
        "llama.sentiment.s0",
        "llama.sos.s0",
        "llama.honest.s0",
        "llama.honest-k1.s0",
    ]


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
        ([{"task": "sos"}], {"tasks": ["sso"]}, "models[0].tasks[0]: no task entry is labelled 'sso'. Did you mean 'sos'? Known: sos."),
        ([{"task": "sos"}], {"tasks": ["sos", "sos"]}, "models[0].tasks: a task is listed twice"),
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


@pytest.mark.bad_input
@pytest.mark.parametrize("option", [("--ray-address", "auto"), ("--wait-timeout", "5")])
def test_ray_options_need_the_ray_executor(
    cli, release: Path, models: dict[str, Path], tmp_path: Path, option: tuple[str, str]
) -> None:
    sweep = write_sweep(tmp_path / "spec", release, two_models(models), [{"task": "sos"}])
    result = cli("eval", "sweep", str(sweep), "--out", str(tmp_path / "out"), *option)
    assert result.code == 2 and f"{option[0]} needs --executor ray" in result.err
    assert not (tmp_path / "out").exists()


def test_ray_sweep_equals_separate_runs_and_a_broken_job_is_reported(
    cli, ray_driver, release: Path, models: dict[str, Path], reference: dict[str, Path], tmp_path: Path
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
    ray_driver, release: Path, models: dict[str, Path], reference: dict[str, Path], tmp_path: Path
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


def test_a_sweep_through_ray_client_with_a_token_equals_the_local_executor(
    ray_head: RayHead,
    ray_driver,
    release: Path,
    models: dict[str, Path],
    hurtlex_home: Path,
    tmp_path: Path,
) -> None:
    """`--ray-address ray://127.0.0.1:PORT` from another process, the head's token in its
    environment (RAY_AUTH_MODE, RAY_AUTH_TOKEN) as docs/scale-out.md says: the same job folders
    as the local executor's. Each sweep has a response cache of its own, so both compute all."""
    from evaluator.sweep import run_sweep

    local = run_sweep(write_sweep(tmp_path / "local", release, two_models(models)), tmp_path / "out-local")
    assert [o.status for o in local.outcomes] == ["done"] * 4
    sweep = write_sweep(tmp_path / "client", release, two_models(models))
    polyprobe = Path(sys.executable).parent / "polyprobe"
    env = {**os.environ, **ray_head.auth, "POLYPROBE_CACHE": str(hurtlex_home)}
    out = tmp_path / "out-client"
    done = subprocess.run(
        [str(polyprobe), "eval", "sweep", str(sweep), "--out", str(out), "--executor", "ray",
         "--ray-address", ray_head.client_address, "--no-report"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert ray_head.token not in done.stdout + done.stderr
    assert [summary(out)[job]["status"] for job in JOBS] == ["done"] * 4
    for job in JOBS:
        same_run(out / "jobs" / job, tmp_path / "out-local" / "jobs" / job)


@pytest.mark.bad_input
def test_ray_a_model_that_waits_too_long_for_its_cpus_fails_with_a_message(
    cli, ray_driver, release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    """The head has 2 CPUs, so the check before submitting passes, but something else holds
    them: the model's actor cannot start, and after --wait-timeout its jobs fail, saying so."""
    import time

    hold = ray_driver.remote(num_cpus=2)(Holder).remote()
    try:
        ray_driver.get(hold.ping.remote())
        sweep = write_sweep(tmp_path / "spec", release, two_models(models)[:1], [{"task": "sos"}])
        started = time.monotonic()
        result = cli(
            "eval", "sweep", str(sweep), "--out", str(tmp_path / "out"), "--executor", "ray",
            "--wait-timeout", "3", "--no-report",
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        ray_driver.kill(hold)
    assert result.code == 1, result.err
    error = summary(tmp_path / "out")["xlmr.sos.s0"]["error"]
    assert "its actor waited 3 s for 0 GPUs and 1 CPU while none of the sweep's jobs ran" in error
    assert "raise --wait-timeout" in error
    assert took < 60


class Holder:
    """An actor of someone else's that holds CPUs."""

    def ping(self) -> int:
        return 1


@pytest.mark.bad_input
def test_a_model_no_node_can_hold_is_named_with_the_shortfall() -> None:
    """The check against the cluster's nodes (as ray.nodes() gives them): a model must fit on
    one node, GPUs and CPUs together."""
    from evaluator.sweep.ray_executor import shortfalls
    from evaluator.sweep.spec import ModelPlan, ModelSpec

    nodes = [
        {"Alive": True, "Resources": {"CPU": 64.0, "memory": 1e11}},
        {"Alive": True, "Resources": {"CPU": 8.0, "GPU": 2.0}},
        {"Alive": False, "Resources": {"CPU": 128.0, "GPU": 8.0}},  # a node gone
    ]

    def plan(label: str, **spec: Any) -> ModelPlan:
        return ModelPlan(label, ModelSpec(model="m", **spec), [])

    plans = [
        plan("fits-gpu", gpus=2, cpus=8),
        plan("fits-cpu", cpus=64),
        plan("half", gpus=0.5),
        plan("too-many-gpus", gpus=4),
        plan("gpu-and-cpus", gpus=1, cpus=16),  # 16 CPUs exist, and GPUs, but not on one node
    ]
    found = {s.model: s.reason for s in shortfalls(plans, nodes)}
    assert list(found) == ["too-many-gpus", "gpu-and-cpus"]
    assert found["too-many-gpus"].startswith(
        "asks for 4 GPUs and 1 CPU for its actor, but no node of the Ray cluster has that: "
        "the largest has 2 GPUs and 8 CPUs (2 nodes)"
    )
    assert shortfalls(plans[:1], []) == [shortfalls(plans[:1], [])[0]]
    assert "the largest has 0 GPUs and 0 CPUs (0 nodes)" in shortfalls(plans[:1], [])[0].reason


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


def test_ray_runs_work_items_and_reports_each(ray_driver: Any) -> None:
    """Work items (the study's fine-tunings) on the Ray executor: each item's result or its own
    error comes back to the driver, and one failing does not stop the other."""
    from evaluator.sweep.driver import Work
    from evaluator.sweep.ray_executor import RayExecutor
    from tests.support.ray_work import doubled, fails_on_its_own

    results: dict[str, tuple[Any, str | None]] = {}
    with RayExecutor() as executor:
        executor.run_work(
            [Work("bad", fails_on_its_own, ()), Work("two", doubled, (21,), cpus=1)],
            lambda item, result, error: results.__setitem__(item.id, (result, error)),
        )
    assert results == {"bad": (None, "ValueError: this job fails on its own"), "two": (42, None)}
    with RayExecutor() as executor, pytest.raises(InputError) as refused:  # Ray would wait forever
        executor.run_work([Work("big", doubled, (1,), gpus=1)], lambda *done: pytest.fail("ran"))
    assert "big: asks for 1 GPU and 1 CPU for its task, but no node of the Ray cluster has that" in str(
        refused.value
    )

"""polyprobe's own local Ray (`eval sweep --executor ray` without --ray-address): every process it
starts listens on 127.0.0.1 only, nobody without its token gets in, a model asking for more GPUs
than this machine has is refused at once (exit 2) with nothing written, and a Ray sweep
interrupted with Ctrl-C leaves no release copy behind and then resumes.

One Ray for the module, started by the executor's own code (evaluator.sweep.ray_cluster.local_ray);
the sweeps find it connected and use it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.listening_sockets import descendants, listening
from tests.support.sweep_fixtures import (  # noqa: F401 (fixtures)
    hurtlex_home_fixture,
    models_fixture,
    release_fixture,
    same_run,
    summary,
    write_sweep,
)

SOS = [{"task": "sos"}]


@pytest.fixture(scope="module")
def polyprobe_ray(hurtlex_home: Path) -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    from evaluator.sweep.ray_cluster import local_ray

    with local_ray(ray, num_cpus=2):
        yield ray


def xlmr(models: dict[str, Path], **extra: Any) -> list[dict[str, Any]]:
    return [{"name": "xlmr", "model": str(models["xlmr"]), "device": "cpu", **extra}]


def copies() -> set[str]:
    from evaluator.sweep.ray_executor import copies_folder

    folder = copies_folder()
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def outsider(gcs_address: str) -> subprocess.Popen[str]:
    """Another process of this machine that joins the local Ray by its address, without the token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # dial 127.0.0.1, not the outside address
    return subprocess.Popen(
        [sys.executable, "-c", f"import ray; ray.init(address={gcs_address!r}); print('joined')"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_every_process_of_the_local_ray_listens_on_loopback_only_and_wants_its_token(
    polyprobe_ray, release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    """While a job runs (the driver, GCS, raylet, agents, the cache and progress actors and the
    model's worker all up), the listening sockets of this process and of every process below it
    are on 127.0.0.1; a process without the token is turned away."""
    from evaluator.sweep import run_sweep
    from evaluator.sweep.progress import Event

    seen: dict[str, Any] = {}

    def snapshot(event: Event) -> None:
        if event.kind == "start" and "sockets" not in seen:
            seen["sockets"] = listening(descendants(os.getpid()))
            seen["worker"] = event.pid
            seen["copies"] = copies()

    before = copies()
    intruder = outsider(polyprobe_ray.get_runtime_context().gcs_address)
    result = run_sweep(
        write_sweep(tmp_path / "spec", release, xlmr(models), SOS),
        tmp_path / "out",
        executor="ray",
        listeners=[snapshot],
        report=False,
    )
    assert [o.status for o in result.outcomes] == ["done"]
    sockets = seen["sockets"]
    assert [s for s in sockets if not s.loopback] == []
    names = {s.name for s in sockets}
    pids = {s.pid for s in sockets}
    assert {"gcs_server", "raylet"} <= names and {os.getpid(), seen["worker"]} <= pids
    assert len(pids) >= 5  # driver, GCS, raylet, an agent, the model's worker (and the actors')
    assert len(seen["copies"] - before) == 1 and copies() == before  # the release copy, then gone
    out, err = intruder.communicate(timeout=180)
    assert intruder.returncode != 0 and "joined" not in out
    assert "Authentication token is missing or incorrect" in err


@pytest.mark.bad_input
def test_a_model_asking_for_more_gpus_than_the_machine_has_is_refused_at_once(
    cli, polyprobe_ray, release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    gpus = int(polyprobe_ray.cluster_resources().get("GPU", 0)) + 1  # 1 on a machine without one
    sweep = write_sweep(tmp_path / "spec", release, xlmr(models, gpus=gpus), SOS)
    out = tmp_path / "out"
    started = time.monotonic()
    result = cli("eval", "sweep", str(sweep), "--out", str(out), "--executor", "ray")
    assert time.monotonic() - started < 30
    assert result.code == 2, result.err
    shown = " ".join(result.err.split())
    assert (
        f"{sweep}: models[0] (xlmr): asks for {gpus} GPU{'s' if gpus > 1 else ''} and 1 CPU for its actor, "
        f"but no node of the Ray cluster has that: the largest has {gpus - 1} GPU"
    ) in shown
    assert not out.exists()


def test_a_ray_sweep_interrupted_leaves_no_release_copy_and_resumes(
    polyprobe_ray, release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    """Ctrl-C while the model computes: the actors are ended and the release copy removed (a
    second Ctrl-C would wait for that); the rerun finishes with the local executor's folder."""
    from evaluator.sweep import run_sweep
    from evaluator.sweep.progress import Event

    workers: list[int] = []

    def interrupt(event: Event) -> None:
        if event.kind == "start":
            workers.append(event.pid)
        if event.kind == "advance":
            raise KeyboardInterrupt

    before = copies()
    sweep = write_sweep(tmp_path / "spec", release, xlmr(models), SOS)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, tmp_path / "out", executor="ray", listeners=[interrupt], report=False)
    assert copies() == before
    assert not (tmp_path / "out" / "jobs" / "xlmr.sos.s0").exists()
    deadline = time.monotonic() + 30
    while Path(f"/proc/{workers[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)  # ray.kill ends the worker process soon after
    assert not Path(f"/proc/{workers[0]}").exists()

    again = run_sweep(sweep, tmp_path / "out", executor="ray", report=False)
    assert [o.status for o in again.outcomes] == ["done"]
    local = write_sweep(tmp_path / "local", release, xlmr(models), SOS)
    run_sweep(local, tmp_path / "out-local", report=False)
    same_run(tmp_path / "out" / "jobs" / "xlmr.sos.s0", tmp_path / "out-local" / "jobs" / "xlmr.sos.s0")

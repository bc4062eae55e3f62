"""Ctrl-C (issue 12, item 8): a real SIGINT sent to a real `polyprobe` process at each phase of
`release build` and `eval run` leaves no partial release or run and no temporary folder, prints
`interrupted` and exits 130; a second Ctrl-C during the clean-up does not abort it.

The process runs the real CLI; a small driver only makes one function announce that the phase
has begun (a line on stdout) and wait there, so the signal arrives inside that phase."""

from __future__ import annotations

import fcntl
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support import tiny_models as tm
from tests.support.files import buildable, leftovers, mini_release, snapshot
from tests.support.processes import ctrl_c_as_from_a_terminal
from toolkit.release import verify

pytestmark = pytest.mark.bad_input

DRIVER = r"""
import importlib, shutil, sys, time

target, call, cleanup_wait, *argv = sys.argv[1:]
module_name, attr_path = target.split(":")
owner = importlib.import_module(module_name)
*parents, attr = attr_path.split(".")
for name in parents:
    owner = getattr(owner, name)
original = getattr(owner, attr)
calls = {"n": 0}

def phase(*args, **kwargs):
    calls["n"] += 1
    if calls["n"] == int(call):
        print("PHASE", flush=True)
        time.sleep(60)
    return original(*args, **kwargs)

setattr(owner, attr, phase)

if cleanup_wait != "0":
    import toolkit.core.interrupts

    real_rmtree = shutil.rmtree

    def slow_rmtree(*args, **kwargs):
        print("CLEANUP", flush=True)
        time.sleep(float(cleanup_wait))
        return real_rmtree(*args, **kwargs)

    toolkit.core.interrupts.shutil.rmtree = slow_rmtree

from toolkit.cli import main

sys.exit(main(argv))
"""


def _wait_for(proc: subprocess.Popen[str], word: str, timeout: float = 120) -> None:
    assert proc.stdout is not None
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            if line.strip() == word:
                return
            if not line and proc.poll() is not None:
                break
    proc.kill()
    raise AssertionError(f"the process never reached {word}: {proc.stderr.read() if proc.stderr else ''}")


def interrupt(
    target: str, args: list[str], call: int = 1, twice: bool = False, sig: signal.Signals = signal.SIGINT
) -> tuple[int, str]:
    """Run the CLI with ``args``; at the ``call``-th call of ``target`` send ``sig`` (and, with
    ``twice``, a second one while the clean-up runs). Returns the exit code and stderr."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, target, str(call), "3" if twice else "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
        preexec_fn=ctrl_c_as_from_a_terminal,
    )
    try:
        _wait_for(proc, "PHASE")
        proc.send_signal(sig)
        if twice:
            _wait_for(proc, "CLEANUP")
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def _interrupted(code: int, err: str) -> None:
    assert code == 130, err
    assert "error: interrupted" in err and "Traceback" not in err


def _terminated(code: int, err: str) -> None:
    assert code == 143, err
    assert "error: terminated (SIGTERM)" in err and "Traceback" not in err


# --- release build --------------------------------------------------------------------------------

BUILD_PHASES = [
    ("loading the catalog", "toolkit.release.build:load_catalog", 1, False),
    ("validating", "toolkit.release.build:validate", 1, False),
    ("rendering the first suite and locale", "toolkit.release.build:render", 1, False),
    ("rendering the last suite and locale", "toolkit.release.build:render", 4, False),
    ("writing the first data file", "polars:DataFrame.write_parquet", 1, False),
    ("writing the third data file", "polars:DataFrame.write_parquet", 3, False),
    ("writing the changelog", "toolkit.release.build:Changelog", 1, False),
    ("writing the card", "toolkit.release.build:render_card", 1, False),
    ("twice: during the clean-up", "polars:DataFrame.write_parquet", 2, True),
]


@pytest.mark.parametrize(("phase", "target", "call", "twice"), BUILD_PHASES, ids=[p[0] for p in BUILD_PHASES])
def test_ctrl_c_during_release_build(
    mini: Path, tmp_path: Path, phase: str, target: str, call: int, twice: bool
) -> None:
    buildable(mini)
    before = snapshot(mini)
    dist = tmp_path / "dist"
    code, err = interrupt(
        target,
        ["release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(dist)],
        call,
        twice,
    )
    _interrupted(code, err)
    assert not (dist / "polyprobe-0.1.0-preview.1").exists()
    assert leftovers(tmp_path) == [] and (not dist.exists() or list(dist.iterdir()) == [])
    assert snapshot(mini) == before


SIGTERM_BUILD_PHASES = [
    p for p in BUILD_PHASES if p[0] in ("writing the third data file", "writing the card") or p[3]
]


@pytest.mark.parametrize(
    ("phase", "target", "call", "twice"), SIGTERM_BUILD_PHASES, ids=[p[0] for p in SIGTERM_BUILD_PHASES]
)
def test_sigterm_during_release_build(
    mini: Path, tmp_path: Path, phase: str, target: str, call: int, twice: bool
) -> None:
    """`kill`, `timeout`, CI cancellation and systemd send SIGTERM. Before (issue 26, item 4): the
    process died at once and dist/.polyprobe-VERSION.*.tmp stayed forever."""
    buildable(mini)
    before = snapshot(mini)
    dist = tmp_path / "dist"
    args = ["release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(dist)]
    code, err = interrupt(target, args, call, twice, sig=signal.SIGTERM)
    _terminated(code, err)
    assert not (dist / "polyprobe-0.1.0-preview.1").exists()
    assert leftovers(tmp_path) == [] and (not dist.exists() or list(dist.iterdir()) == [])
    assert snapshot(mini) == before


def test_a_later_build_removes_what_a_killed_build_left(mini: Path, tmp_path: Path, cli) -> None:
    """SIGKILL leaves the build's folder behind (no process can clean up after it); the next build
    removes it and says so, but keeps the folder of a build that is still running (locked)."""
    buildable(mini)
    dist = tmp_path / "dist"
    args = ["release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(dist)]
    code, _ = interrupt("polars:DataFrame.write_parquet", args, 2, sig=signal.SIGKILL)
    assert code == -signal.SIGKILL
    (stale,) = leftovers(dist)
    running = dist / ".polyprobe-0.2.0-preview.1.abcd1234.tmp"
    running.mkdir()
    holder = os.open(running, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a concurrent build holds its own
    try:
        result = cli(*args)
    finally:
        os.close(holder)
    assert result.code == 0, result.err
    assert f"removed {dist / stale}, left by a build that was killed" in result.err
    assert leftovers(dist) == [running.name]
    assert verify(dist / "polyprobe-0.1.0-preview.1") == []


# --- eval run -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_release(tmp_path_factory.mktemp("ctrl-c"))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.bert_classifier(tmp_path_factory.mktemp("models") / "cls")


def _eval(release: Path, model: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "eval", "run", "--release", str(release), "--task", "sentiment", "--model", str(model),
        "--out", str(out), "--device", "cpu", "--cache", str(cache), *extra,
    ]  # fmt: skip


EVAL_PHASES = [
    ("loading the model", "evaluator.run:load_backend", 1, False),
    ("scoring", "evaluator.cache:CachedBackend._cached", 1, False),
    ("writing the run folder", "evaluator.run_folder:check_out", 2, False),
    ("twice: during the clean-up", "evaluator.run_folder:check_out", 2, True),
]


@pytest.mark.parametrize(("phase", "target", "call", "twice"), EVAL_PHASES, ids=[p[0] for p in EVAL_PHASES])
def test_ctrl_c_during_eval_run(
    release: Path, model: Path, tmp_path: Path, phase: str, target: str, call: int, twice: bool
) -> None:
    out = tmp_path / "runs" / "run"
    code, err = interrupt(target, _eval(release, model, out, tmp_path / "cache.sqlite"), call, twice)
    _interrupted(code, err)
    assert not out.exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("phase", "target", "call", "twice"), EVAL_PHASES[2:], ids=[p[0] for p in EVAL_PHASES[2:]]
)
def test_sigterm_during_eval_run(
    release: Path, model: Path, tmp_path: Path, phase: str, target: str, call: int, twice: bool
) -> None:
    out = tmp_path / "runs" / "run"
    args = _eval(release, model, out, tmp_path / "cache.sqlite")
    code, err = interrupt(target, args, call, twice, sig=signal.SIGTERM)
    _terminated(code, err)
    assert not out.exists() and leftovers(tmp_path) == []


def test_ctrl_c_while_overwriting_keeps_the_previous_run(release: Path, model: Path, tmp_path: Path) -> None:
    from toolkit.cli import main

    out = tmp_path / "run"
    cache = tmp_path / "cache.sqlite"
    assert main(_eval(release, model, out, cache)) == 0
    before = snapshot(out)
    code, err = interrupt(
        "evaluator.run_folder:check_out", _eval(release, model, out, cache, "--seed", "3", "--overwrite"), 2
    )
    _interrupted(code, err)
    assert snapshot(out) == before and leftovers(tmp_path) == []
    shutil.rmtree(out)

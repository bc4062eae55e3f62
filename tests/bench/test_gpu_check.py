"""bench/gpu_check.py keeps what it measured whatever happens later: each part runs in a process
of its own, its row is printed (and the JSON file rewritten) as soon as it ends, a part that
cannot run here is skipped with a line saying why, and a part that fails does not stop the
others but makes the exit code 1. Run here with --tiny on CPU, on a release built in the test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.sweep_fixtures import release_fixture  # noqa: F401 (fixture)

REPO = Path(__file__).resolve().parents[2]


def gpu_check(release: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "bench" / "gpu_check.py"), "--tiny", "--release", str(release),
         "--json", str(out), *args],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_each_part_is_printed_and_saved_as_it_ends_and_what_cannot_run_is_skipped(
    release: Path, tmp_path: Path
) -> None:
    out = tmp_path / "gpu_check.json"
    done = gpu_check(release, out, "--only", "sos-pll", "honest-hf", "honest-vllm")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[0] for row in rows] == ["| sos-pll", "| honest-hf", "| honest-vllm"]
    assert "sentences (" in rows[0] and "/s" in rows[0]
    assert "completions (3 prompts × 2, ≤ 4 tokens)" in rows[1]
    assert "skipped: vLLM not installed" in rows[2] or "skipped: no CUDA device" in rows[2]
    saved = json.loads(out.read_text())
    parts = {p["part"]: p for p in saved["parts"]}
    assert [p["status"] for p in saved["parts"]] == ["done", "done", "skipped"]
    assert 0 < parts["sos-pll"]["items"] <= 60 and parts["sos-pll"]["per_second"] > 0  # --tiny: 60 at most
    assert parts["honest-hf"]["items"] == 6


def test_a_failing_part_is_reported_the_others_still_run_and_the_exit_is_1(
    release: Path, tmp_path: Path
) -> None:
    """A masked LM that cannot be loaded: the PLL part's line says it failed and why, the part
    after it is still measured and saved."""
    out = tmp_path / "gpu_check.json"
    missing = tmp_path / "no-such-mlm"
    done = gpu_check(release, out, "--mlm", str(missing), "--only", "sos-pll", "honest-hf")
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    saved = json.loads(out.read_text())
    assert [p["status"] for p in saved["parts"]] == ["failed", "done"]
    assert saved["parts"][0]["why"].startswith("exit 1: ")
    assert "| sos-pll | no-such-mlm | — | — | — | — | failed: exit 1: " in done.stdout
    assert "not measured: sos-pll" in done.stdout

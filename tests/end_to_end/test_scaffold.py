"""`polyprobe dev new-task`, the start of docs/extending.md's task recipe: in a copy of the
repository the scaffold writes one new module, the recipe adds its entry point to pyproject.toml,
and nothing else changes; once installed (its entry point on the path of a new process, as
`pip install -e .` would put it), `eval run` offers the task and runs it on a tiny classifier,
its metrics read back into its model, its headline passes the registry's check and `eval report`
shows its section. A name that cannot be a task's, or a module there already, is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from evaluator.tasks.descriptor import load_attribute
from evaluator.tasks.scaffold import Scaffold
from tests.end_to_end.test_extending import copy_of_the_repository, english_release
from tests.support import tiny_models as tm
from toolkit.core.errors import InputError

__all__ = ["english_release"]  # the fixture, shared with the extending recipes


def installed(root: Path, site: Path) -> Path:
    """The copy's task entry points as installing it again would record them (a dist-info)."""
    declared = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    info = site / "polyprobe_tasks-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: polyprobe-tasks\nVersion: 0.1\n")
    lines = [f"{name} = {value}" for name, value in declared["polyprobe.tasks"].items()]
    (info / "entry_points.txt").write_text("[polyprobe.tasks]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return site


def polyprobe(root: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`polyprobe ARGS` in a new process, from the copy, with its task entry points installed."""
    return subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args],
        cwd=root,
        env={**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{root}"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_scaffolded_task_touches_no_shared_file_and_runs(
    english_release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_of_the_repository(tmp_path / "repository")
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    dev = load_attribute(pyproject["project"]["entry-points"]["polyprobe.cli"]["dev"])  # `polyprobe dev`
    monkeypatch.chdir(root)
    made = CliRunner().invoke(dev, ["new-task", "tone-check", "--out", "evaluator/tasks"])
    assert made.exit_code == 0, made.output
    entry = '[project.entry-points."polyprobe.tasks"]\ntone-check = "evaluator.tasks.tone_check:TONE_CHECK"\n'
    assert made.stdout == entry
    # the recipe: add the printed lines to pyproject.toml
    with (root / "pyproject.toml").open("a", encoding="utf-8") as toml:
        toml.write("\n" + entry)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True)
    assert status.stdout.splitlines() == [" M pyproject.toml", "?? evaluator/tasks/tone_check.py"]

    site = installed(root, tmp_path / "site")
    model = tm.bert_classifier(tmp_path / "classifier")
    out = tmp_path / "run"
    run = polyprobe(
        root, site, "eval", "run", "--release", str(english_release), "--out", str(out), "--device", "cpu",
        "--cache", str(tmp_path / "cache.sqlite"), "--task", "tone-check", "--model", str(model),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "warning:" not in run.stderr  # the registry took it: its headline's table is declared
    written = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert written["task"] == "tone-check"
    predictions = pl.read_parquet(out / "predictions.parquet")
    p_label = predictions["p_label"].to_list()
    assert len(p_label) == 9 and all(0 < p < 1 for p in p_label)
    en = written["metrics"]["per_locale"]["en"]
    assert en["rows"] == 9 and en["mean"] == pytest.approx(sum(p_label) / 9)
    labels = json.loads((out / "run.json").read_text(encoding="utf-8"))["model"]["labels"]
    assert written["metrics"]["label"] == labels[0]
    report = polyprobe(root, site, "eval", "report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert "Tone check per locale" in summary and f"| en | 9 | {en['mean']:.3f} |" in summary


@pytest.mark.bad_input
@pytest.mark.parametrize("name", ["Tone", "tone_check", "-tone", "class", "tone--check", ""])
def test_a_name_that_cannot_be_a_tasks_is_refused(name: str) -> None:
    with pytest.raises(InputError, match="cannot name a task: lower-case words joined by dashes"):
        Scaffold(name, "sentiment")


@pytest.mark.bad_input
def test_a_module_there_already_is_not_replaced(tmp_path: Path) -> None:
    scaffold = Scaffold("tone", "sentiment")
    (tmp_path / "tone.py").write_text("# mine\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"tone\.py exists already"):
        scaffold.write(tmp_path)
    assert (tmp_path / "tone.py").read_text(encoding="utf-8") == "# mine\n"

"""Plugins: another installed package adds a task or a backend through entry points
(evaluator.plugins), and `eval run` offers and runs it like a built-in one, in a fresh process
as a user would have it. A plugin that is broken or takes a built-in's name is left out with a
warning, and the rest works; so is one whose headline its metrics model cannot make."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.end_to_end.test_extending import english_release

__all__ = ["english_release"]  # the fixture, shared with the extending recipes

PLUGIN = """\
import dataclasses

import evaluator.tasks as registry  # being imported: the built-in tasks are there already
from evaluator.tasks.descriptor import Headline

SENTIMENT_AGAIN = dataclasses.replace(registry.TASKS["sentiment"], name="sentiment-again")
NO_HEADLINE = dataclasses.replace(
    registry.TASKS["sentiment"], name="no-headline", headline=Headline("MCM per country", None, "MCM")
)
NOT_A_TASK = "a string"
"""

ENTRY_POINTS = """\
[polyprobe.tasks]
sentiment-again = polyprobe_toy_plugin:SENTIMENT_AGAIN
broken = polyprobe_toy_plugin_gone:TASK
no-headline = polyprobe_toy_plugin:NO_HEADLINE
odd = polyprobe_toy_plugin:NOT_A_TASK

[polyprobe.backends]
rule = tests.end_to_end.test_extending:RuleBackend
openai = polyprobe_toy_plugin:Elsewhere
"""


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed plugin package: its module and its dist-info, on the path of a new process."""
    site = tmp_path_factory.mktemp("site")
    (site / "polyprobe_toy_plugin.py").write_text(PLUGIN, encoding="utf-8")
    info = site / "polyprobe_toy_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: polyprobe-toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    return site


def polyprobe(
    plugin: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`polyprobe ARGS` in a new process that has the plugin installed."""
    environment = {**os.environ, **(env or {}), "PYTHONPATH": f"{plugin}{os.pathsep}{REPO}"}
    return subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_plugins_task_and_backend_run_like_built_in_ones(
    plugin: Path, english_release: Path, tmp_path: Path
) -> None:
    metrics = {}
    for task in ("sentiment", "sentiment-again"):
        out = tmp_path / task
        done = polyprobe(
            plugin, "eval", "run", "--release", str(english_release), "--out", str(out), "--device", "cpu",
            "--cache", str(tmp_path / f"{task}.sqlite"), "--task", task, "--backend", "rule", "--model", "m",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        written = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        assert written["task"] == task
        metrics[task] = written["metrics"]
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
        assert run["options"]["backend"] == "rule" and run["model"]["resolved"] == "rule:m"
    # the plugin's task is sentiment under another name: the same numbers from the same model
    assert metrics["sentiment-again"] == metrics["sentiment"]
    assert metrics["sentiment"]["per_locale"]["en"]["accuracy"]["correct"] == 2


def test_broken_or_clashing_plugins_are_left_out_with_a_warning(plugin: Path) -> None:
    done = polyprobe(plugin, "eval", "run", "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    package = "(from polyprobe-toy-plugin)"
    assert warnings == [
        "warning: polyprobe.backends entry point 'openai' = 'polyprobe_toy_plugin:Elsewhere' "
        f"{package} is left out: a backend 'openai' exists already",
        "warning: polyprobe.tasks entry point 'broken' = 'polyprobe_toy_plugin_gone:TASK' "
        f"{package} is left out: it cannot be loaded (ModuleNotFoundError: No module named "
        "'polyprobe_toy_plugin_gone')",
        "warning: polyprobe.tasks entry point 'no-headline' = 'polyprobe_toy_plugin:NO_HEADLINE' "
        f"{package} is left out: task 'no-headline': its headline's table 'MCM per country' is not one "
        "its metrics model evaluator.results.sentiment:SentimentMetrics declares (its TABLES: "
        "'MCM per locale and attribute', 'Sentiment accuracy')",
        "warning: polyprobe.tasks entry point 'odd' = 'polyprobe_toy_plugin:NOT_A_TASK' "
        f"{package} is left out: it names a str, not a TaskDescriptor",
    ]
    assert "<sentiment|sentiment-control|sos|crows-pairs|honest|bbq|iat|ifm|sentiment-again>" in done.stdout
    unknown = polyprobe(plugin, "eval", "run", "--task", "broken", "--release", ".", "--model", "m")
    assert unknown.returncode == 2 and "'broken' is not one of" in unknown.stderr


# A plugin task that adds an option of its own: everything about the option is in its module.
OPTION_PLUGIN = """\
import dataclasses

import evaluator.tasks as registry
from evaluator.tasks.descriptor import TaskOption

SENTIMENT = registry.TASKS["sentiment"]


def settings(options, kind):
    return {**SENTIMENT.settings(options, kind), "margin": options.option("margin")}


MARGIN = dataclasses.replace(
    SENTIMENT,
    name="sentiment-margin",
    options=(*SENTIMENT.options, TaskOption("margin", float, 0.0, "sentiment-margin: a plugin's own option.")),
    settings=settings,
)
"""


@pytest.fixture(scope="module")
def option_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed plugin whose task declares the option --margin."""
    site = tmp_path_factory.mktemp("option-site")
    (site / "polyprobe_margin_plugin.py").write_text(OPTION_PLUGIN, encoding="utf-8")
    info = site / "polyprobe_margin_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: polyprobe-margin-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[polyprobe.tasks]\nsentiment-margin = polyprobe_margin_plugin:MARGIN\n\n"
        "[polyprobe.backends]\nrule = tests.end_to_end.test_extending:RuleBackend\n",
        encoding="utf-8",
    )
    return site


def test_a_plugin_tasks_own_option_is_offered_checked_and_signed(
    option_plugin: Path, english_release: Path, tmp_path: Path
) -> None:
    helped = polyprobe(option_plugin, "eval", "run", "--help", env={"COLUMNS": "200"})
    assert helped.returncode == 0, helped.stderr
    assert "--margin" in helped.stdout and "sentiment-margin: a plugin's own option." in helped.stdout
    signatures, settings = {}, {}
    for margin in ("0.0", "0.5"):
        out = tmp_path / f"m{margin}"
        done = polyprobe(
            option_plugin, "eval", "run", "--release", str(english_release), "--out", str(out),
            "--cache", str(tmp_path / "c.sqlite"), "--task", "sentiment-margin", "--backend", "rule",
            "--model", "m", "--margin", margin,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
        assert run["options"]["margin"] == float(margin)
        signatures[margin], settings[margin] = run["signature"], run["task_settings"]
    assert settings["0.5"]["margin"] == 0.5 and signatures["0.0"] != signatures["0.5"]
    # another task does not take it, whatever its value
    refused = polyprobe(
        option_plugin, "eval", "run", "--release", str(english_release), "--out", str(tmp_path / "x"),
        "--task", "sentiment", "--backend", "rule", "--model", "m", "--margin", "0.0",
    )  # fmt: skip
    assert refused.returncode == 2 and "task sentiment does not take --margin" in refused.stderr
    # a sweep file's task entry may set it (read as the option's type), and only for its task
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"release: {english_release}\nmodels: [{{model: m, backend: rule}}]\n"
        "tasks:\n  - {task: sentiment-margin, options: {margin: 0.25}}\n",
        encoding="utf-8",
    )
    check = (
        "import sys; from pathlib import Path; from evaluator.sweep.spec import load_sweep\n"
        "job = load_sweep(Path(sys.argv[1])).models[0].jobs[0]\n"
        "print(job.options.option('margin'))\n"
    )
    read = subprocess.run(
        [sys.executable, "-c", check, str(sweep)],
        env={**os.environ, "PYTHONPATH": f"{option_plugin}{os.pathsep}{REPO}"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert read.returncode == 0 and read.stdout.strip() == "0.25", read.stderr

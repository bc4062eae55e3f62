"""The layer contract (.importlinter, run by .ci/test) holds for the repository and fails on what it
forbids: `lint-imports` runs on a copy of toolkit/ and evaluator/ in which one import is planted,
and must name the contract it breaks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the packages under ``root`` (they shadow the installed ones)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), str(root / ".importlinter"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for package in ("toolkit", "evaluator"):
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def plant(module: Path, line: str) -> None:
    """Add ``line`` after the module's ``from __future__`` import."""
    text = module.read_text(encoding="utf-8")
    future = "from __future__ import annotations\n"
    assert future in text
    module.write_text(text.replace(future, future + line + "\n", 1), encoding="utf-8")


def test_the_repository_keeps_every_contract(copy: Path) -> None:
    result = lint_imports(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 5 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # a cycle inside one package: the schema imports the gate, which renders (and so needs the schema)
        ("toolkit/render/schema.py", "import toolkit.render.gate", "toolkit: no import cycle"),
        # a cycle between two modules through type hints only is still a cycle
        (
            "toolkit/render/job.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import toolkit.render.suites.base",
            "toolkit: no import cycle",
        ),
        # a lower layer importing a higher one (and so a cycle across packages)
        ("toolkit/store/model.py", "import toolkit.catalog.loader", "toolkit: each package imports only"),
        ("toolkit/core/errors.py", "import toolkit.cli", "toolkit: each package imports only"),
        # the toolkit reaching into the evaluator, or into torch
        ("toolkit/catalog/loader.py", "import evaluator.run", "toolkit never imports the evaluator"),
        ("toolkit/render/renderer.py", "import torch", "toolkit never imports the evaluator"),
        # the evaluator reading the catalog instead of a release
        ("evaluator/run.py", "import toolkit.catalog.loader", "evaluator imports toolkit only via"),
        # a cycle in the evaluator: the sweep's driver reaching back into the runner that uses it
        ("evaluator/sweep/driver.py", "import evaluator.sweep.runner", "evaluator: no import cycle"),
        # the task registry's descriptors needing the report that reads them
        ("evaluator/tasks/descriptor.py", "import evaluator.report.build", "evaluator: no import cycle"),
    ],
)
def test_a_planted_import_breaks_its_contract(copy: Path, module: str, line: str, broken: str) -> None:
    plant(copy / module, line)
    result = lint_imports(copy)
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = [row for row in result.stdout.splitlines() if " KEPT" in row or " BROKEN" in row]
    assert len(verdicts) == 5, result.stdout
    assert [row for row in verdicts if " BROKEN" in row and row.startswith(broken)], result.stdout

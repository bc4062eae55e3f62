"""Every bench loads against the code it measures: a bench that is not run by CI (timings) still
has its imports checked here, so a moved name breaks a test instead of the next person's run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BENCHES = sorted((REPO / "bench").glob("*.py"))


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.name)
def test_a_bench_loads(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(path)])
    name = f"bench_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)  # the top level only: main() runs under __main__
    assert callable(getattr(module, "main", None)), f"{path.name} has no main()"


def test_the_check_sees_a_broken_import(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from evaluator.finetune.train import NoSuchName\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("bench_broken", broken)
    assert spec is not None and spec.loader is not None
    with pytest.raises(ImportError):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_every_bench_is_checked() -> None:
    assert len(BENCHES) >= 13 and all(p.suffix == ".py" for p in BENCHES)

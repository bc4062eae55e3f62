"""Concurrent writers, as real processes, lose no update: each one takes the store's lock,
reads the file again under it, and writes it back before letting go; a writer that cannot get
the lock in time fails clearly and writes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.store_damage import STORE_IT
from toolkit.core.project import Project
from toolkit.store.files import store_lock

TEXTS = {
    "gen-01.f": "La donna {{ group.f }} oggi è felicissima.",
    "gen-01.m": "L'uomo {{ group.m }} oggi è felicissimo.",
    "rel-01.f": "È cresciuta in una famiglia {{ group.f }} numerosa.",
}


def start(root: Path, *args: str, wait: float = 60.0) -> subprocess.Popen[str]:
    env = {**os.environ, "POLYPROBE_LOCK_WAIT": str(wait)}
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit.cli", *args, "--root", str(root)],
        env=env,
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def draft(root: Path, tmp: Path, segment: str, text: str, wait: float = 60.0) -> subprocess.Popen[str]:
    path = tmp / f"{segment}.yaml"
    path.write_text(json.dumps({segment: text}), encoding="utf-8")
    return start(
        root,
        "translations",
        "draft",
        str(path),
        "--suite",
        "sentiment",
        "--locale",
        "it",
        "--by",
        segment,
        wait=wait,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=180)
    return proc.returncode, err


def records(root: Path) -> dict[str, dict]:
    lines = (root / STORE_IT).read_text(encoding="utf-8").splitlines()
    return {r["segment"]: r for r in map(json.loads, lines)}


def test_writers_queued_behind_the_lock_all_land(mini: Path, tmp_path: Path) -> None:
    """Three drafts start while the store is locked, so all of them have loaded the catalog
    before any can write: each must read the store again under the lock."""
    with store_lock(Project.at(mini), "it", "sentiment"):
        procs = [draft(mini, tmp_path, seg, text) for seg, text in TEXTS.items()]
        time.sleep(4)  # they start, load the catalog and queue for the lock
        assert all(p.poll() is None for p in procs)
    results = [finish(p) for p in procs]
    assert [code for code, _ in results] == [0, 0, 0], results
    stored = records(mini)
    for segment, text in TEXTS.items():
        assert stored[segment]["text"] == text
        assert stored[segment]["history"][-1]["by"] == segment
    assert stored["rel-01.m"]["text"] == "È cresciuto in una famiglia {{ group.f }}."


@pytest.mark.parametrize("trial", range(4))
def test_drafts_racing_each_other_both_land(trial: int, mini: Path, tmp_path: Path) -> None:
    a = draft(mini, tmp_path, "gen-01.f", TEXTS["gen-01.f"])
    b = draft(mini, tmp_path, "gen-01.m", TEXTS["gen-01.m"])
    assert finish(a)[0] == 0 and finish(b)[0] == 0
    stored = records(mini)
    assert stored["gen-01.f"]["text"] == TEXTS["gen-01.f"] and stored["gen-01.m"]["text"] == TEXTS["gen-01.m"]
    assert len(stored) == 4


def test_draft_xliff_import_and_sync_at_once_all_land(mini: Path, tmp_path: Path) -> None:
    xlf = tmp_path / "it.xlf"
    exported = start(mini, "xliff", "export", "--locale", "it", "--out", str(xlf))
    assert finish(exported)[0] == 0
    xlf.write_text(
        xlf.read_text(encoding="utf-8").replace("oggi è felice.", "è felice oggi.", 2), encoding="utf-8"
    )
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    with store_lock(Project.at(mini), "it", "sentiment"):
        procs = [
            draft(mini, tmp_path, "rel-01.f", TEXTS["rel-01.f"]),
            start(mini, "xliff", "import", str(xlf), "--by", "vendor"),
        ]
        time.sleep(4)
    results = [finish(p) for p in procs]
    assert [c for c, _ in results] == [0, 0], results
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace("He grew up in a", "He was raised in a"), encoding="utf-8"
    )
    assert finish(start(mini, "translations", "sync"))[0] == 0
    stored = records(mini)
    assert stored["rel-01.f"]["text"] == TEXTS["rel-01.f"]  # the draft
    assert (
        stored["gen-01.f"]["origin"] == "import" and stored["gen-01.m"]["origin"] == "import"
    )  # the vendor's edits
    assert stored["rel-01.m"]["status"] == "stale"  # the sync


@pytest.mark.bad_input
def test_a_writer_that_cannot_get_the_lock_fails_clearly_and_writes_nothing(
    mini: Path, tmp_path: Path
) -> None:
    before = (mini / STORE_IT).read_bytes()
    with store_lock(Project.at(mini), "it", "sentiment"):
        code, err = finish(draft(mini, tmp_path, "gen-01.f", TEXTS["gen-01.f"], wait=0.5))
    assert code == 1
    assert (
        "error: translations/it/sentiment.jsonl is being written by another polyprobe process; "
        "nothing was written: run the command again when that one ends"
    ) in err
    assert (mini / STORE_IT).read_bytes() == before
    code, err = finish(draft(mini, tmp_path, "gen-01.f", TEXTS["gen-01.f"]))  # and again, once it is free
    assert code == 0, err

"""Undecodable stores and the files around them (issue 26, items 3, 6, 7 and 12): a line Python
cannot read (a 5,000-digit number, brackets nested 100,000 deep) or cannot write back (a lone
surrogate), a segment id that is empty or a path, an unknown history event or time. The
writers' refusals and `translations repair` run over them in tests/toolkit/store/test_store_strict.py (they
are in its DAMAGES); here: the readers that crashed on them, the retired store `sync
--retire-orphans` rewrote around, the hint it printed, $POLYPROBE_LOCK_WAIT, and the same
numbers and nesting in a release's manifest.json and a run's metrics.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import store_line
from tests.support.files import mini_release, snapshot
from tests.support.store_damage import DECODING, STORE_IT, Damage
from toolkit.core.errors import InputError
from toolkit.core.project import Project
from toolkit.store.files import StoreFile
from toolkit.store.model import Event

pytestmark = pytest.mark.bad_input


def damage(root: Path, how: Damage) -> None:
    path = root / STORE_IT
    path.write_bytes(how.apply(path.read_bytes()))


@pytest.mark.parametrize("how", DECODING, ids=lambda d: d.id)
def test_render_and_validate_name_the_line(how: Damage, mini: Path, cli) -> None:
    """Before: a RecursionError / ValueError / UnicodeEncodeError traceback (render), or only
    "not sorted" for a segment that is a path."""
    damage(mini, how)
    before = snapshot(mini)
    for args in (("render", "--suite", "sentiment", "--locale", "it"), ("catalog", "validate")):
        result = cli(*args, "--root", str(mini))
        assert result.code == 2, result.err
        assert "Traceback" not in result.err
        error = next(line for line in result.err.splitlines() if STORE_IT in line)
        for fragment in how.expect:
            assert fragment in result.err, f"{fragment!r} not in:\n{result.err}"
        assert error.startswith(f"error: {STORE_IT}: line ")
    assert snapshot(mini) == before


@pytest.mark.parametrize("how", DECODING, ids=lambda d: d.id)
def test_xliff_export_skips_the_line_and_says_so(how: Damage, mini: Path, tmp_path: Path, cli) -> None:
    """A report reads leniently: the line is left out with a warning naming it, and what is
    written is well-formed XML that `xliff import` takes back unchanged."""
    damage(mini, how)
    out = tmp_path / "it.xlf"
    result = cli("xliff", "export", "--locale", "it", "--out", str(out), "--root", str(mini))
    assert result.code == 0, result.err
    assert f"warning: {STORE_IT}: {how.expect[0]}" in result.err
    assert "Traceback" not in result.err


def test_sync_retire_orphans_reads_every_file_before_writing_any(mini: Path, cli) -> None:
    """Before: with a damaged retired file, sync rewrote every other store (their stale marks),
    then exited 2 saying "nothing was written", with a hint whose --suite the option refused."""
    templates = mini / "templates" / "sentiment" / "templates.yaml"
    templates.write_text(
        templates.read_text(encoding="utf-8").replace("feels happy today", "feels glad today"),
        encoding="utf-8",
    )  # every locale's gen-01 translations go stale: sync would write all three stores
    retired = mini / "translations" / "it" / "sentiment.retired.jsonl"
    retired.write_text("{not json\n", encoding="utf-8")
    before = snapshot(mini, locks=False)
    result = cli("translations", "sync", "--retire-orphans", "--root", str(mini))
    assert result.code == 2, result.err
    assert "translations/it/sentiment.retired.jsonl: line 1" in result.err and "invalid JSON" in result.err
    assert snapshot(mini, locks=False) == before
    hint = next(line for line in result.err.splitlines() if line.startswith("hint:"))
    command = hint.split("`")[1].split()
    assert command[:3] == ["polyprobe", "translations", "repair"]
    repaired = cli(*command[1:], "--root", str(mini))  # the hint is a command that runs
    assert repaired.code == 0, repaired.err
    assert "translations/it/sentiment.retired.jsonl" in repaired.err
    again = cli("translations", "sync", "--retire-orphans", "--root", str(mini))
    assert again.code == 0, again.err
    assert "it/sentiment: 2 stale" in again.err


def test_repair_suite_covers_its_retired_file(mini: Path, cli) -> None:
    retired = mini / "translations" / "it" / "sentiment.retired.jsonl"
    retired.write_text("{not json\n", encoding="utf-8")
    result = cli("translations", "repair", "--locale", "it", "--suite", "sentiment", "--root", str(mini))
    assert result.code == 0, result.err
    assert "translations/it/sentiment.retired.jsonl: kept 0 record(s)" in result.err
    assert retired.read_bytes() == b""


@pytest.mark.parametrize("value", ["abc", "nan", "-1", "inf", ""])
def test_a_lock_wait_that_is_not_seconds_is_refused(value: str, mini: Path, tmp_path: Path, cli, monkeypatch):
    """Before: POLYPROBE_LOCK_WAIT=abc silently meant 30 s (and nan would wait forever)."""
    monkeypatch.setenv("POLYPROBE_LOCK_WAIT", value)
    drafts = tmp_path / "drafts.yaml"
    drafts.write_text("gen-01.f: La donna {{ group.f }} oggi è allegra.\n", encoding="utf-8")
    before = snapshot(mini, locks=False)
    result = cli(
        "translations", "draft", str(drafts), "--suite", "sentiment", "--locale", "it", "--by", "t",
        "--root", str(mini),
    )  # fmt: skip
    assert result.code == 2, result.err
    assert f"error: $POLYPROBE_LOCK_WAIT={value!r} is not a number of seconds" in result.err
    assert snapshot(mini, locks=False) == before


def test_a_text_no_utf8_file_can_hold_is_never_written(mini: Path) -> None:
    """A lone surrogate that arrives from a server's JSON (a review edit, a machine answer) is
    refused with its segment and field before the store is written."""
    path = mini / STORE_IT
    before = path.read_bytes()
    store = StoreFile(locale="it", suite="sentiment", path=path, original=before.decode())
    text = "La donna {{ group.f }} \ud800."
    event = Event(at="2026-01-03T00:00:00Z", event="import", by="vendor", text=text)
    store.put("gen-01.f", "The {{ group.adj }} woman feels happy today.", text, "import", "draft", event)
    with pytest.raises(InputError, match=r"gen-01.f \[it\] text: a lone surrogate"):
        store.save()
    assert path.read_bytes() == before


def test_segment_ids_of_every_suite_and_of_bbq_imports_pass(repo_catalog: Path) -> None:
    """The segment id pattern takes every segment the repository's suites define and the ids a
    BBQ import makes (slug of the category, control subset, example id, field)."""
    from toolkit.catalog.loader import load_catalog
    from toolkit.catalog.published.bbq import FIELDS, slug
    from toolkit.store.model import SEGMENT_ID

    catalog = load_catalog(Project.at(repo_catalog))
    segments = [seg for suite in catalog.suites.values() for seg in suite.segments]
    assert segments and all(SEGMENT_ID.fullmatch(seg) for seg in segments)
    categories = ["Age", "Disability_status", "Gender_identity", "Race_x_SES", "Race_x_gender", "SES"]
    for category in categories:
        for part in ("", "-control"):
            for field in FIELDS:
                assert SEGMENT_ID.fullmatch(f"{slug(category)}{part}-1234.{field}")
    line = store_line("gen-01.f", "x {{ group.f }}", "The {{ group.adj }} woman feels happy today.")
    assert SEGMENT_ID.fullmatch(json.loads(line)["segment"])


# --- the same in a release's manifest.json and a run's metrics.json -----------------------------

HUGE = "1" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_release(tmp_path_factory.mktemp("decoding"))


@pytest.mark.parametrize(
    ("value", "reason"),
    [(HUGE, "a number of more than 4,300 digits"), (DEEP, "brackets nested too deep")],
    ids=["huge number", "deep nesting"],
)
def test_a_manifest_python_cannot_read_does_not_verify(
    release: Path, tmp_path: Path, cli, value: str, reason: str
) -> None:
    """Before: a ValueError / RecursionError traceback from `release verify` and `eval run`."""
    copy = tmp_path / release.name
    copy.mkdir()
    for path in release.rglob("*"):
        if path.is_file():
            (copy / path.relative_to(release)).parent.mkdir(parents=True, exist_ok=True)
            (copy / path.relative_to(release)).write_bytes(path.read_bytes())
    manifest = copy / "manifest.json"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace('"counts": {', f'"x": {value}, "counts": {{', 1),
        encoding="utf-8",
    )
    result = cli("release", "verify", str(copy))
    assert result.code == 2, result.err
    assert "manifest.json: not JSON" in result.err and reason in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("value", "reason"),
    [(HUGE, "a number of more than 4,300 digits"), (DEEP, "brackets nested too deep")],
    ids=["huge number", "deep nesting"],
)
def test_a_metrics_file_python_cannot_read_is_named(tmp_path: Path, cli, value: str, reason: str) -> None:
    """Before: a traceback from `eval report` and `eval merge`."""
    run, other = tmp_path / "run", tmp_path / "other"
    for folder in (run, other):
        folder.mkdir()
        (folder / "metrics.json").write_text(
            f'{{"task": "sentiment", "metrics": {value}}}\n', encoding="utf-8"
        )
    for args in (
        ("report", str(run), "--out", str(tmp_path / "report")),
        ("merge", str(run), str(other), "--out", str(tmp_path / "m")),
    ):
        result = cli("eval", *args)
        assert result.code == 2, result.err
        assert f"{run}" in result.err and "metrics.json" in result.err and reason in result.err
        assert "Traceback" not in result.err
    assert not (tmp_path / "report").exists() and not (tmp_path / "m").exists()

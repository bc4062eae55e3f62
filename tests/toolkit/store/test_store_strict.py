"""A damaged store file is never rewritten: every command that writes the store reads it
strictly under its lock and, when it cannot read it whole, exits 2 naming the file, the line
(and segment) and what is wrong, and leaves every byte of every store as it was. Reports
read leniently and say which lines they skipped. `translations repair` makes the file whole
without losing a line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import store_helpers
from tests.support.review_stub import POLICY, StubLabelStudio, annotation, task
from tests.support.store_damage import DAMAGES, STORE_IT, Damage
from tests.support.store_helpers import bbq_catalog, bbq_drafts
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.review.pull import pull
from toolkit.store.files import StoreUnreadable, scan_store

IT_GEN_01_F = "La donna {{ group.f }} oggi è felice."


def snapshot(root: Path) -> dict[str, str]:
    """sha256 of every file under translations/ (lock files aside)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "translations").rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def damage(root: Path, how: Damage) -> None:
    path = root / STORE_IT
    path.write_bytes(how.apply(path.read_bytes()))


def assert_refused(result, how: Damage, before: dict[str, str], root: Path) -> None:
    assert result.code == 2, result.err
    for fragment in (STORE_IT, *how.expect):
        assert fragment in result.err, f"{fragment!r} not in:\n{result.err}"
    assert "hint: nothing was written" in result.err
    assert "Traceback" not in result.err
    assert snapshot(root) == before
    assert not list(root.rglob("*.tmp"))


@dataclass(frozen=True)
class Writer:
    """A command that writes the Italian store: what it needs before the damage, then the run."""

    id: str
    prepare: Callable[[Path, Path], None]
    run: Callable[..., object]


def run_draft(cli, root: Path, tmp: Path):
    return store_helpers.run_draft(
        cli, root, tmp, "it", {"gen-01.f": "La donna {{ group.f }} oggi è molto felice."}
    )


def _change_english(root: Path, tmp: Path) -> None:
    tpl = root / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace(
            "He grew up in a {{ group.adj }} family.", "He grew up in a {{ group.adj }} home."
        ),
        encoding="utf-8",
    )


def _export_with_edit(cli) -> Callable[[Path, Path], None]:
    def prepare(root: Path, tmp: Path) -> None:
        out = tmp / "it.xlf"
        assert cli("xliff", "export", "--root", str(root), "--locale", "it", "--out", str(out)).code == 0
        text = out.read_text(encoding="utf-8").replace("oggi è felice", "oggi è molto felice", 1)
        out.write_text(text, encoding="utf-8")

    return prepare


def writers(cli) -> dict[str, Writer]:
    return {
        "translations draft": Writer(
            "translations draft",
            lambda root, tmp: None,
            lambda root, tmp: run_draft(cli, root, tmp),
        ),
        "translations sync": Writer(
            "translations sync",
            _change_english,
            lambda root, tmp: cli("translations", "sync", "--root", str(root)),
        ),
        "xliff import": Writer(
            "xliff import",
            _export_with_edit(cli),
            lambda root, tmp: cli(
                "xliff", "import", str(tmp / "it.xlf"), "--by", "vendor", "--root", str(root)
            ),
        ),
    }


@pytest.mark.bad_input
@pytest.mark.parametrize("command", ["translations draft", "translations sync", "xliff import"])
@pytest.mark.parametrize("how", DAMAGES, ids=[d.id for d in DAMAGES])
def test_a_writer_refuses_a_damaged_store_and_writes_nothing(
    how: Damage, command: str, mini: Path, tmp_path: Path, cli
) -> None:
    writer = writers(cli)[command]
    writer.prepare(mini, tmp_path)
    damage(mini, how)
    before = snapshot(mini)
    assert_refused(writer.run(mini, tmp_path), how, before, mini)


@pytest.mark.bad_input
@pytest.mark.parametrize("how", DAMAGES[:3] + DAMAGES[16:17] + DAMAGES[26:27], ids=lambda d: d.id)
def test_translate_refuses_a_damaged_store_before_sending_anything(
    how: Damage, mini: Path, cli, monkeypatch
) -> None:
    monkeypatch.setenv("DEEPL_AUTH_KEY", "never-used")
    monkeypatch.setenv("DEEPL_SERVER_URL", "http://127.0.0.1:9")  # nothing listens: any request would fail
    damage(mini, how)
    before = snapshot(mini)
    result = cli("translate", "--root", str(mini), "--locale", "it", "--suite", "sentiment")
    assert_refused(result, how, before, mini)
    assert not (mini / "translations" / "ledger.jsonl").exists()


@pytest.mark.bad_input
@pytest.mark.parametrize("how", DAMAGES[5:8] + DAMAGES[19:20], ids=lambda d: d.id)
def test_review_pull_refuses_a_damaged_store(how: Damage, mini: Path) -> None:
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    segment = catalog.suites["sentiment"].segments["gen-01.f"]
    client = StubLabelStudio([task("gen-01.f", segment.source_sha, IT_GEN_01_F, annotation(7, "accept"))])
    damage(mini, how)
    before = snapshot(mini)
    with pytest.raises(StoreUnreadable) as err:
        pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    text = "\n".join(str(p) for p in err.value.problems)
    for fragment in (STORE_IT, *how.expect):
        assert fragment in text
    assert "nothing was written" in err.value.hint
    assert snapshot(mini) == before


def test_review_pull_on_a_whole_store_still_writes(mini: Path) -> None:
    """The stand-in client is good enough to write: the refusals above are the store's doing."""
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    segment = catalog.suites["sentiment"].segments["gen-01.f"]
    before = snapshot(mini)
    client = StubLabelStudio([task("gen-01.f", segment.source_sha, IT_GEN_01_F, annotation(7, "accept"))])
    pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    assert snapshot(mini)[STORE_IT] != before[STORE_IT]
    record = json.loads((mini / STORE_IT).read_text(encoding="utf-8").splitlines()[0])
    assert [e["event"] for e in record["history"]][:2] == ["draft", "review"]


BBQ_DAMAGES = {
    "byte order mark": (lambda d: b"\xef\xbb\xbf" + d, "line 1", "byte order mark"),
    "truncated last line": (lambda d: d[:-25], "line 5", "invalid JSON"),
    "blank line": (lambda d: d.replace(b"\n", b"\n\n", 1), "line 2", "blank line"),
}


@pytest.mark.bad_input
@pytest.mark.parametrize("name", sorted(BBQ_DAMAGES))
def test_a_bbq_draft_refuses_a_damaged_store(name: str, tmp_path: Path, cli) -> None:
    root, item = bbq_catalog(tmp_path, cli)
    assert store_helpers.run_draft(cli, root, tmp_path, "es", bbq_drafts(item), suite="bbq").code == 0
    store = root / "translations" / "es" / "bbq.jsonl"
    change, line, fragment = BBQ_DAMAGES[name]
    store.write_bytes(change(store.read_bytes()))
    before = snapshot(root)
    again = bbq_drafts(item, question="¿Quién estaba gritando?")
    result = store_helpers.run_draft(cli, root, tmp_path, "es", again, suite="bbq")
    assert result.code == 2, result.err
    assert f"translations/es/bbq.jsonl: {line}" in result.err and fragment in result.err
    assert snapshot(root) == before


REPORT_DAMAGES = [DAMAGES[0], DAMAGES[6], DAMAGES[16], DAMAGES[20], DAMAGES[26]]


@pytest.mark.bad_input
@pytest.mark.parametrize("command", ["translations status", "catalog coverage", "xliff export"])
@pytest.mark.parametrize("how", REPORT_DAMAGES, ids=lambda d: d.id)
def test_reports_read_leniently_and_say_what_they_skipped(
    how: Damage, command: str, mini: Path, tmp_path: Path, cli
) -> None:
    damage(mini, how)
    before = snapshot(mini)
    args = command.split()
    if command == "xliff export":
        args += ["--locale", "it", "--out", str(tmp_path / "it.xlf")]
    result = cli(*args, "--root", str(mini))
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("warning: ")]
    assert any(STORE_IT in w and how.expect[0] in w and "skipped by this read" in w for w in warnings), (
        result.err
    )
    assert "store line(s) not counted" in result.err
    assert snapshot(mini) == before


@pytest.mark.bad_input
@pytest.mark.parametrize("how", REPORT_DAMAGES, ids=lambda d: d.id)
def test_validate_lists_a_damaged_line_as_a_problem(how: Damage, mini: Path, cli) -> None:
    damage(mini, how)
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2
    assert f"{STORE_IT}: {how.expect[0]}" in result.err


def _content(line: bytes) -> bytes:
    return line.rstrip(b"\r")


@pytest.mark.bad_input
@pytest.mark.parametrize("how", DAMAGES, ids=[d.id for d in DAMAGES])
def test_repair_keeps_every_good_record_and_puts_every_other_line_aside(
    how: Damage, mini: Path, tmp_path: Path, cli
) -> None:
    damage(mini, how)
    path = mini / STORE_IT
    damaged = path.read_bytes()
    others = {k: v for k, v in snapshot(mini).items() if k != STORE_IT}
    dry = cli("translations", "repair", "--root", str(mini), "--dry-run")
    assert dry.code == 0, dry.err
    assert path.read_bytes() == damaged and not list(path.parent.glob("*.rejected-*"))
    result = cli("translations", "repair", "--root", str(mini))
    assert result.code == 0, result.err
    assert STORE_IT in result.err
    assert scan_store(path.read_bytes()).whole
    kept = {
        json.loads(line)["segment"]: json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    sidecars = list(path.parent.glob("sentiment.jsonl.rejected-*"))
    aside = sidecars[0].read_bytes().split(b"\n")[:-1] if sidecars else []
    # every line of the damaged file is either kept as a record or set aside byte for byte
    body = damaged.removeprefix(b"\xef\xbb\xbf")
    for raw in body.split(b"\n"):
        line = _content(raw)
        if not line.strip():
            continue
        if raw in aside:
            continue
        rec = json.loads(line)
        assert kept[rec["segment"]] == {k: v for k, v in rec.items() if v is not None}, raw
    for line in aside:
        assert line in body.split(b"\n"), line
    if aside:
        assert f"put {len(aside)} line(s) aside" in result.err
    assert {k: v for k, v in snapshot(mini).items() if k != STORE_IT and ".rejected-" not in k} == others
    # the repaired store takes writes again
    drafted = run_draft(cli, mini, tmp_path)
    assert drafted.code == 0, drafted.err


def test_repair_of_whole_stores_changes_nothing(mini: Path, cli) -> None:
    before = snapshot(mini)
    result = cli("translations", "repair", "--root", str(mini))
    assert result.code == 0 and "nothing to repair" in result.err
    assert snapshot(mini) == before


@pytest.mark.bad_input
def test_repair_never_overwrites_an_earlier_sidecar(mini: Path, cli) -> None:
    path = mini / STORE_IT
    for round_ in range(2):
        path.write_bytes(path.read_bytes() + f'{{"broken": {round_}\n'.encode())
        assert cli("translations", "repair", "--root", str(mini), "--locale", "it").code == 0
    sidecars = sorted(path.parent.glob("sentiment.jsonl.rejected-*"))
    assert [s.read_bytes() for s in sidecars] in (
        [b'{"broken": 0\n', b'{"broken": 1\n'],
        [b'{"broken": 1\n', b'{"broken": 0\n'],
    )


@pytest.mark.bad_input
def test_repair_of_an_unknown_store_is_an_error(mini: Path, cli) -> None:
    result = cli("translations", "repair", "--root", str(mini), "--locale", "xx")
    assert result.code == 2
    assert "no store file for xx" in result.err


@pytest.mark.bad_input
def test_repair_puts_a_line_with_a_repeated_key_aside_whole(mini: Path, cli) -> None:
    """json.loads keeps the last of a repeated key: read so, the rewrite would drop the first
    value without a word. The line is refused and set aside byte for byte instead."""
    path = mini / STORE_IT
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"text": ', b'"text": "La prima versione.", "text": ', 1)
    path.write_bytes(b"\n".join(lines))
    scan = scan_store(path.read_bytes())
    assert [(b.lineno, b.segment, b.reason) for b in scan.bad] == [(2, "gen-01.m", "duplicate key 'text'")]
    result = cli("translations", "repair", "--root", str(mini))
    assert result.code == 0, result.err
    (sidecar,) = path.parent.glob("sentiment.jsonl.rejected-*")
    assert sidecar.read_bytes() == lines[1] + b"\n"  # both values, as they were
    assert b"gen-01.m" not in path.read_bytes()

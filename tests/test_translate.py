"""Machine translation through the real `deepl` SDK against a local fake DeepL server:
translation memory, placeholder protection, glossaries, faults, quota, kill and resume, the
ledger, and the key never leaking."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, CliResult
from tests.fake_deepl import FakeDeepL
from toolkit.catalog import load_catalog
from toolkit.placeholders import PlaceholderError, protect, restore
from toolkit.project import Project
from toolkit.templates import source_sha

KEY = "0a1b2c3d-4e5f-6789-abcd-ef0123456789:fx"

EXTRA_TEMPLATES = "".join(
    f"""  - id: gen-{i:02d}
    label: neutral
    attributes: [gender, religion]
    variants:
      f: "The {{{{ group.adj }}}} woman number {i} & her <friend> are here."
      m: "The {{{{ group.adj }}}} man number {i} is here."
"""
    for i in range(2, 8)
)


@pytest.fixture
def catalog_root(mini: Path) -> Path:
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(tpl.read_text(encoding="utf-8") + EXTRA_TEMPLATES, encoding="utf-8")
    suite = mini / "templates" / "sentiment" / "suite.yaml"
    suite.write_text(
        suite.read_text(encoding="utf-8").replace("[en, de, he, it]", "[en, de, he, it, fr]"),
        encoding="utf-8",
    )
    return mini


@pytest.fixture
def fake() -> Iterator[FakeDeepL]:
    server = FakeDeepL(KEY)
    yield server
    server.close()


@pytest.fixture
def env(fake: FakeDeepL, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("DEEPL_AUTH_KEY", KEY)
    monkeypatch.setenv("DEEPL_SERVER_URL", fake.url)
    return {**os.environ, "DEEPL_AUTH_KEY": KEY, "DEEPL_SERVER_URL": fake.url}


def translate(cli, root: Path, *extra: str) -> CliResult:
    return cli(
        "translate",
        "--root",
        str(root),
        "--locale",
        "fr",
        "--suite",
        "sentiment",
        "--backoff",
        "0.01",
        *extra,
    )


def store(root: Path, locale: str = "fr") -> dict[str, dict]:
    path = root / "translations" / locale / "sentiment.jsonl"
    if not path.exists():
        return {}
    return {r["segment"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def ledger(root: Path) -> list[dict]:
    path = root / "translations" / "ledger.jsonl"
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


def unique_sources(root: Path) -> dict[str, str]:
    catalog = load_catalog(Project.at(root), suites=["sentiment"])
    return {seg.id: seg.source for seg in catalog.suites["sentiment"].segments.values()}


def test_placeholders_round_trip_and_refuse_lost_tags() -> None:
    text = "Die {{ adj(group, 'f') }} Frau & <b> {% if x %}ja{% endif %}"
    protected = protect(text)
    assert protected.xml == 'Die <x id="1"/> Frau &amp; &lt;b&gt; <x id="2"/>ja<x id="3"/>'
    assert restore(protected.xml, protected) == text
    with pytest.raises(PlaceholderError, match="lost"):
        restore('Die Frau &amp; <x id="2"/>ja<x id="3"/>', protected)
    with pytest.raises(PlaceholderError, match="invented"):
        restore(protected.xml + '<x id="9"/>', protected)
    with pytest.raises(PlaceholderError, match="repeated"):
        restore(protected.xml + '<x id="1"/>', protected)


def test_whole_suite_bills_only_unique_text_and_rerun_sends_nothing(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    result = translate(cli, catalog_root)
    assert result.code == 0, result.err
    records = store(catalog_root)
    sources = unique_sources(catalog_root)
    assert set(records) == set(sources)
    assert {r["status"] for r in records.values()} == {"machine"}
    assert {r["origin"] for r in records.values()} == {"deepl"}
    assert records["gen-01.f"]["text"] == "[FR] The {{ group.adj }} woman feels happy today."
    assert records["gen-03.f"]["text"] == "[FR] The {{ group.adj }} woman number 3 & her <friend> are here."
    assert records["gen-01.f"]["history"][0]["engine"]["target"] == "FR"
    unique_chars = sum(len(protect(t).xml) for t in set(sources.values()))
    assert fake.character_count <= unique_chars
    assert sum(len(t) for t in fake.answered) == fake.character_count
    assert len(fake.translate_requests()) == 1  # 16 texts: one request of up to 50
    body = fake.translate_requests()[0]["body"]
    assert body["tag_handling"] == "xml" and body["target_lang"] == "FR" and isinstance(body["text"], list)

    before = len(fake.requests)
    again = translate(cli, catalog_root)
    assert again.code == 0
    assert len(fake.requests) == before  # no request at all, not even for languages or glossaries
    assert "segments without a current translation: 0" in again.err


def test_dry_run_counts_without_calling(catalog_root: Path, fake: FakeDeepL, env, cli) -> None:
    result = translate(cli, catalog_root, "--dry-run", "--batch-size", "5")
    assert result.code == 0
    assert fake.requests == []
    sources = unique_sources(catalog_root)
    chars = sum(len(protect(t).xml) for t in dict.fromkeys(sources.values()))
    assert f"characters: {chars}, requests: 4" in result.err  # 16 unique texts / 5 per request
    assert store(catalog_root) == {}


def test_max_chars_stops_before_the_limit(catalog_root: Path, fake: FakeDeepL, env, cli) -> None:
    result = translate(cli, catalog_root, "--max-chars", "120")
    assert result.code == 0
    assert 0 < fake.character_count <= 120
    assert "left for a later run" in result.err
    assert 0 < len(store(catalog_root)) < 16


def test_a_lost_slot_is_stored_as_rejected_with_the_reason(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    fake.faults.append("lose_tag")
    result = translate(cli, catalog_root)
    assert result.code == 0
    records = store(catalog_root)
    bad = [r for r in records.values() if r["status"] == "rejected"]
    assert len(bad) == 1
    assert "lost {{ group.adj }}" in bad[0]["history"][-1]["note"]
    assert sum(r["status"] == "machine" for r in records.values()) == 15


def test_faults_then_quota_lose_nothing_and_resend_nothing_answered(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    fake.faults.extend([429, 429, 429, 503, "drop", None, 456])
    result = translate(cli, catalog_root, "--batch-size", "5")
    assert result.code == 1
    assert "quota exhausted" in result.err
    records = store(catalog_root)
    assert len(records) == 5  # the first batch, answered on its sixth attempt, then 456 on the second batch
    answered_first = list(fake.answered)
    entries = ledger(catalog_root)
    outcomes = [e["outcome"] for e in entries if e.get("event") == "request"]
    assert outcomes == ["429", "429", "429", "503", "connection failed", "ok", "456 quota exhausted"]
    assert entries[-1]["event"] == "end" and entries[-1]["outcome"] == "quota exhausted"

    rerun = translate(cli, catalog_root, "--batch-size", "5")
    assert rerun.code == 0, rerun.err
    assert len(store(catalog_root)) == 16
    later = fake.answered[len(answered_first) :]
    assert not set(later) & set(answered_first)  # nothing answered was sent again
    assert len(later) == len(set(later))
    summary = cli("translate", "--root", str(catalog_root), "--ledger", "--json")
    runs = json.loads(summary.out)
    assert [r["outcome"] for r in runs] == ["quota exhausted", "complete"]
    assert runs[0]["attempts"] == 7 and runs[0]["requests"] == 1 and runs[0]["segments"] == 5
    assert all(r["started"] <= r["finished"] and r["locale"] == "fr" for r in runs)
    table = cli("translate", "--root", str(catalog_root), "--ledger")
    assert "total: 4 requests" in table.out


def test_killed_run_loses_nothing_already_returned(catalog_root: Path, fake: FakeDeepL, env) -> None:
    fake.faults.extend([None, ("slow", 60)])
    cmd = [
        sys.executable,
        "-m",
        "toolkit.cli",
        "translate",
        "--root",
        str(catalog_root),
        "--locale",
        "fr",
        "--suite",
        "sentiment",
        "--batch-size",
        "5",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    deadline = time.monotonic() + 30
    while len(fake.translate_requests()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    if len(fake.translate_requests()) != 2:
        proc.kill()
        pytest.fail(f"the second request never started: {proc.communicate()[1].decode()}")
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    saved = store(catalog_root)
    assert len(saved) == 5  # the answered batch is on disk
    first_texts = list(fake.answered)
    fake.faults.clear()
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert rerun.returncode == 0, rerun.stderr
    assert len(store(catalog_root)) == 16
    resent = fake.answered[len(first_texts) :]
    assert not set(resent) & set(first_texts)
    assert len(resent) == 16 - 5 - 0  # unique texts left (all texts are unique here)


def test_glossary_forces_group_terms(mini: Path, fake: FakeDeepL, env, cli) -> None:
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace(
            "grew up in a {{ group.adj }} family.", "grew up in a {{ group.adj }} family, not a Jewish one."
        ),
        encoding="utf-8",
    )
    result = cli(
        "translate", "--root", str(mini), "--locale", "it", "--suite", "sentiment", "--backoff", "0.01"
    )
    assert result.code == 0, result.err
    records = store(mini, "it")
    assert records["rel-01.f"]["text"].endswith("family, not a ebrea one.") or records["rel-01.f"][
        "text"
    ].endswith("family, not a ebreo one.")
    created = [r for r in fake.requests if r["path"] == "/v2/glossaries" and r["method"] == "POST"]
    assert len(created) == 1 and "Jewish\tebreo" in created[0]["body"]["entries"]
    # the stale rel-01 segments were retranslated; the others were current and not sent
    sent = [t for r in fake.translate_requests() for t in r["body"]["text"]]
    assert len(sent) == 2


@pytest.mark.bad_input
def test_egyptian_arabic_is_refused(mini: Path, cli, env) -> None:
    result = cli("translate", "--root", str(mini), "--locale", "arz", "--suite", "sentiment")
    assert result.code == 2
    assert "DeepL has no target for Egyptian Arabic" in result.err


@pytest.mark.bad_input
def test_missing_key_is_a_clear_error(catalog_root: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPL_AUTH_KEY", raising=False)
    result = translate(cli, catalog_root)
    assert result.code == 2 and "set DEEPL_AUTH_KEY" in result.err


def test_the_key_never_leaks(
    catalog_root: Path, fake: FakeDeepL, env, cli, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.faults.extend([503, "drop"])
    ok = translate(cli, catalog_root, "--batch-size", "8")
    bad_key = cli("translate", "--root", str(catalog_root), "--locale", "fr", "--suite", "sentiment")
    fake.key = "another-key"  # the server now refuses ours: 403
    tpl = catalog_root / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace("feels happy today", "feels happy"), encoding="utf-8"
    )
    refused = translate(cli, catalog_root)
    assert refused.code == 1 and "DeepL refused the key (403)" in refused.err
    outputs = [ok.out, ok.err, bad_key.out, bad_key.err, refused.out, refused.err, caplog.text]
    files = [p.read_text(encoding="utf-8", errors="replace") for p in catalog_root.rglob("*") if p.is_file()]
    for text in outputs + files:
        assert KEY not in text
        assert KEY.split(":")[0] not in text


def test_records_keep_an_append_only_history(catalog_root: Path, fake: FakeDeepL, env, cli) -> None:
    translate(cli, catalog_root)
    first = store(catalog_root)["gen-01.f"]
    tpl = catalog_root / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace("woman feels happy today", "woman feels very happy today"),
        encoding="utf-8",
    )
    synced = cli("translations", "sync", "--root", str(catalog_root))
    assert synced.code == 0 and "fr/sentiment: 1 stale" in synced.err
    assert "4 translation(s) marked stale" in synced.err  # de, he and it had gen-01.f too
    stale = store(catalog_root)["gen-01.f"]
    assert stale["status"] == "stale" and stale["history"][:1] == first["history"]
    translate(cli, catalog_root)
    redone = store(catalog_root)["gen-01.f"]
    assert [e["event"] for e in redone["history"]] == ["machine", "stale", "machine"]
    assert redone["source_sha"] == source_sha("The {{ group.adj }} woman feels very happy today.")
    assert redone["status"] == "machine"
    lines = (
        (catalog_root / "translations" / "fr" / "sentiment.jsonl").read_text(encoding="utf-8").splitlines()
    )
    assert [json.loads(line)["segment"] for line in lines] == sorted(
        json.loads(line)["segment"] for line in lines
    )

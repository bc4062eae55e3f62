"""Machine translation through the real `deepl` SDK against a local fake DeepL server:
translation memory, placeholder protection, slots resolved in the target locale (the perfect
engine), records that need a human edit, glossaries (reuse, pruning, faults), faults and the
retry budget, quota, kill, Ctrl-C and resume, the ledger, and the key never leaking."""

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
from tests.support.fake_deepl import FakeDeepL, perfect_answers
from tests.support.processes import ctrl_c_as_from_a_terminal
from tests.support.review_stub import POLICY
from tests.toolkit.importers.test_bbq_and_quality import write_bbq
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.review.push import push
from toolkit.store.model import source_sha
from toolkit.translation.answers import source_slots_of
from toolkit.translation.placeholders import PlaceholderError, protect, restore

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


def errors(result: CliResult) -> str:
    """What a command said on stderr, but the line naming the catalog it works on."""
    return "\n".join(line for line in result.err.splitlines() if line and not line.startswith("catalog: "))


def translate(cli, root: Path, *extra: str, locale: str = "fr") -> CliResult:
    return cli(
        "translate",
        "--root",
        str(root),
        "--locale",
        locale,
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


def sent_texts(root: Path) -> dict[str, str]:
    """Segment id -> the text `translate` sends for it (template code as tags)."""
    catalog = load_catalog(Project.at(root), suites=["sentiment"])
    slots = source_slots_of(catalog)
    return {seg.id: protect(seg.source, slots).xml for seg in catalog.suites["sentiment"].segments.values()}


def requests_outcomes(root: Path) -> list[str]:
    return [e["outcome"] for e in ledger(root) if e.get("event") == "request"]


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
    with pytest.raises(PlaceholderError, match="unexpected markup"):
        restore(protected.xml + "<b>", protected)


def test_an_answer_no_slot_rule_can_read_needs_a_human_edit_and_breaks_nothing(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    result = translate(cli, catalog_root)
    assert result.code == 0, result.err
    records = store(catalog_root)
    sent = sent_texts(catalog_root)
    assert set(records) == set(sent)
    assert {r["status"] for r in records.values()} == {"needs_edit"}
    assert {r["origin"] for r in records.values()} == {"deepl"}
    gen = records["gen-01.f"]
    # the raw answer is kept as it came, with the reason; the English slot code is not put back
    assert gen["text"] == '[FR] The <x id="1"/> woman feels happy today.'
    note = gen["history"][-1]["note"]
    assert note.startswith('slot <x id="1"/> ({{ group.adj }}): no noun the group slot could agree with')
    assert "'The' is not among the nouns of templates/_grammar/fr.slots.yaml" in note
    assert (
        records["gen-03.f"]["text"]
        == '[FR] The <x id="1"/> woman number 3 &amp; her &lt;friend&gt; are here.'
    )
    assert gen["history"][0]["engine"]["target"] == "FR"
    assert "0 machine draft(s), 16 needing a human edit" in result.err
    # billing: each unique text once, one request of up to 50
    assert fake.character_count == sum(len(t) for t in set(sent.values()))
    assert sorted(fake.answered) == sorted(set(sent.values()))
    assert len(fake.translate_requests()) == 1
    body = fake.translate_requests()[0]["body"]
    assert body["tag_handling"] == "xml" and body["target_lang"] == "FR" and isinstance(body["text"], list)
    # nothing stored breaks validate or render: the records are simply not current
    assert cli("catalog", "validate", "--root", str(catalog_root)).code == 0
    rendered = cli("render", "--root", str(catalog_root), "--suite", "sentiment", "--locale", "fr")
    assert rendered.code == 0 and rendered.out == "" and "16 needs_edit" in rendered.err

    before = len(fake.requests)
    again = translate(cli, catalog_root)
    assert again.code == 0
    assert len(fake.requests) == before  # no request at all, not even for usage or glossaries
    assert "segments without a current translation: 0" in again.err

    retried = translate(cli, catalog_root, "--retry-rejected")
    assert retried.code == 0, retried.err
    assert fake.answered[len(sent) :] == fake.answered[: len(sent)]  # sent again, on request only
    assert [e["event"] for e in store(catalog_root)["gen-01.f"]["history"]] == ["machine", "machine"]


def test_the_perfect_engine_gives_machine_drafts_that_render(mini: Path, cli, monkeypatch) -> None:
    """The double that answers with the project's own drafts (slot code as tags): once the stores
    are removed, translate stores machine drafts whose slots are the drafts' own, and they render."""
    catalog = load_catalog(Project.at(mini), suites=["sentiment"])
    drafts = {
        loc: {k: r.text for k, r in catalog.store("sentiment", loc).records.items()}
        for loc in ("de", "he", "it")
    }
    server = FakeDeepL(KEY, answers=perfect_answers(catalog, ["sentiment"], ["de", "he", "it"]))
    try:
        monkeypatch.setenv("DEEPL_AUTH_KEY", KEY)
        monkeypatch.setenv("DEEPL_SERVER_URL", server.url)
        for locale in drafts:
            (mini / "translations" / locale / "sentiment.jsonl").unlink()
            result = translate(cli, mini, locale=locale)
            assert result.code == 0, result.err
            records = store(mini, locale)
            assert {k: r["text"] for k, r in records.items()} == drafts[locale]
            assert {r["status"] for r in records.values()} == {"machine"}
    finally:
        server.close()
    assert cli("catalog", "validate", "--root", str(mini)).code == 0
    rendered = cli("render", "--root", str(mini), "--suite", "sentiment", "--locale", "he")
    rows = [json.loads(line) for line in rendered.out.splitlines()]
    assert "האישה המוסלמית מרגישה שמחה היום." in {r["text"] for r in rows}
    assert {r["status"] for r in rows} == {"machine"} and {r["origin"] for r in rows} == {"deepl"}


def test_a_wrong_variant_or_a_form_the_groups_lack_needs_a_human_edit(mini: Path, cli, monkeypatch) -> None:
    catalog = load_catalog(Project.at(mini), suites=["sentiment"])
    slots = source_slots_of(catalog)
    segments = catalog.suites["sentiment"].segments
    answers = {
        ("IT", protect(segments["gen-01.m"].source, slots).xml): 'La donna <x id="1"/> oggi è felice.',
        ("IT", protect(segments["gen-01.f"].source, slots).xml): 'Le donne <x id="1"/> oggi sono felici.',
        ("IT", protect(segments["rel-01.f"].source, slots).xml): 'È cresciuta in una famiglia <x id="1"/>.',
    }
    server = FakeDeepL(KEY, answers=answers)
    try:
        monkeypatch.setenv("DEEPL_AUTH_KEY", KEY)
        monkeypatch.setenv("DEEPL_SERVER_URL", server.url)
        (mini / "translations" / "it" / "sentiment.jsonl").unlink()
        assert translate(cli, mini, locale="it").code == 0
    finally:
        server.close()
    records = store(mini, "it")
    assert records["rel-01.f"]["status"] == "machine"
    assert records["rel-01.f"]["text"] == "È cresciuta in una famiglia {{ group.f }}."
    wrong = records["gen-01.m"]
    assert wrong["status"] == "needs_edit" and wrong["text"] == 'La donna <x id="1"/> oggi è felice.'
    assert "the m variant came back about 'donna', a noun of the f variant" in wrong["history"][-1]["note"]
    plural = records["gen-01.f"]
    assert plural["status"] == "needs_edit"
    assert plural["text"] == 'Le donne <x id="1"/> oggi sono felici.'  # the raw answer, not {{ group.pl_f }}
    assert "group islam, group judaism: no form 'pl_f'" in plural["history"][-1]["note"]
    assert cli("catalog", "validate", "--root", str(mini)).code == 0


def test_dry_run_counts_without_calling_and_equals_what_is_billed(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    result = translate(cli, catalog_root, "--dry-run", "--batch-size", "5")
    assert result.code == 0
    assert fake.requests == []
    chars = sum(len(t) for t in dict.fromkeys(sent_texts(catalog_root).values()))
    assert f"characters: {chars}, requests: 4" in result.err  # 16 unique texts / 5 per request
    assert store(catalog_root) == {}
    real = translate(cli, catalog_root, "--batch-size", "5", "--json")
    assert json.loads(real.out)["billed"] == chars == fake.character_count


def test_max_chars_stops_before_the_limit(catalog_root: Path, fake: FakeDeepL, env, cli) -> None:
    result = translate(cli, catalog_root, "--max-chars", "120")
    assert result.code == 0
    assert 0 < fake.character_count <= 120
    assert "left for a later run" in result.err
    assert 0 < len(store(catalog_root)) < 16


def test_a_lost_slot_needs_a_human_edit_with_the_reason(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    fake.faults.append("lose_tag")
    result = translate(cli, catalog_root)
    assert result.code == 0
    records = store(catalog_root)
    lost = [r for r in records.values() if "placeholders: lost {{ group.adj }}" in r["history"][-1]["note"]]
    assert len(lost) == 1 and lost[0]["status"] == "needs_edit"


def test_faults_then_quota_lose_nothing_and_resend_nothing_answered(
    catalog_root: Path, fake: FakeDeepL, env, cli
) -> None:
    fake.faults.extend([429, 429, 429, 503, "drop", None, 456])
    result = translate(cli, catalog_root, "--batch-size", "5")
    assert result.code == 3  # quota exhausted has its own exit code
    assert "quota exhausted while translating request 2 (fr/sentiment)" in result.err
    assert "Traceback" not in result.err
    records = store(catalog_root)
    assert len(records) == 5  # the first batch, answered on its sixth attempt, then 456 on the second batch
    answered_first = list(fake.answered)
    entries = ledger(catalog_root)
    assert requests_outcomes(catalog_root) == [
        "429",
        "429",
        "429",
        "503",
        "connection failed",
        "ok",
        "456 quota exhausted",
    ]
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


@pytest.mark.parametrize("fault", [500, 502, 504, "drop"])
def test_server_errors_and_dropped_connections_are_retried(
    catalog_root: Path, fake: FakeDeepL, env, cli, fault
) -> None:
    fake.faults.extend([None, fault, fault])  # the second request fails twice, then is answered
    result = translate(cli, catalog_root, "--batch-size", "8")
    assert result.code == 0, result.err
    outcome = "connection failed" if fault == "drop" else str(fault)
    assert requests_outcomes(catalog_root) == ["ok", outcome, outcome, "ok"]
    assert len(store(catalog_root)) == 16
    sent = sent_texts(catalog_root)
    assert sorted(fake.answered) == sorted(set(sent.values()))  # each text answered (and billed) once
    assert fake.character_count == sum(len(t) for t in set(sent.values()))
    assert translate(cli, catalog_root).code == 0 and len(fake.answered) == 16  # a rerun sends nothing


def test_a_timeout_is_retried(catalog_root: Path, fake: FakeDeepL, env, cli) -> None:
    """A request that outlives --timeout is given up and sent again. (DeepL may have processed
    and billed the abandoned attempt: the ledger shows it as failed, never as answered.)"""
    fake.faults.append(("slow", 3))
    result = translate(cli, catalog_root, "--timeout", "0.5")
    assert result.code == 0, result.err
    assert requests_outcomes(catalog_root) == ["connection failed", "ok"]
    assert len(store(catalog_root)) == 16


def test_the_retry_budget_bounds_a_run(catalog_root: Path, fake: FakeDeepL, env, cli) -> None:
    fake.faults.extend([503, 503, 503])
    result = translate(cli, catalog_root, "--retry-budget", "2")
    assert result.code == 1
    assert errors(result) == (
        "error: DeepL failed while translating request 1 (fr/sentiment): 503, "
        "and this run's retry budget (2 retries) is spent"
    )
    assert requests_outcomes(catalog_root) == ["503", "503", "503"]
    assert store(catalog_root) == {}


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
    _wait_for_requests(fake, proc, 2)
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
    assert len(resent) == 16 - 5  # unique texts left (all texts are unique here)


def _wait_for_requests(fake: FakeDeepL, proc: subprocess.Popen, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(fake.translate_requests()) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    if len(fake.translate_requests()) != count:
        proc.kill()
        pytest.fail(f"request {count} never started: {proc.communicate()[1].decode()}")
    time.sleep(0.2)


def test_ctrl_c_records_every_answered_request_and_the_one_in_flight(
    catalog_root: Path, fake: FakeDeepL, env
) -> None:
    fake.faults.extend([None, ("slow", 60)])
    cmd = [sys.executable, "-m", "toolkit.cli", "translate", "--root", str(catalog_root)]
    cmd += ["--locale", "fr", "--suite", "sentiment", "--batch-size", "5"]
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        preexec_fn=ctrl_c_as_from_a_terminal,
    )
    _wait_for_requests(fake, proc, 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    assert len(store(catalog_root)) == 5
    entries = [e for e in ledger(catalog_root) if e["event"] in ("request", "end")]
    assert [(e["event"], e.get("request"), e["outcome"]) for e in entries] == [
        ("request", 1, "ok"),
        ("request", 2, "interrupted"),
        ("end", None, "interrupted"),
    ]
    assert entries[0]["billed"] == sum(len(t) for t in fake.answered)
    assert entries[1]["segments"] and "may still bill it" in entries[1]["note"]


def test_glossary_forces_group_terms(mini: Path, fake: FakeDeepL, env, cli) -> None:
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace(
            "grew up in a {{ group.adj }} family.", "grew up in a {{ group.adj }} family, not a Jewish one."
        ),
        encoding="utf-8",
    )
    result = translate(cli, mini, locale="it")
    assert result.code == 0, result.err
    records = store(mini, "it")
    assert records["rel-01.f"]["text"].endswith("family, not a ebreo one.")
    created = [r for r in fake.requests if r["path"] == "/v2/glossaries" and r["method"] == "POST"]
    assert len(created) == 1 and "Jewish\tebreo" in created[0]["body"]["entries"]
    # the stale rel-01 segments were retranslated; the others were current and not sent
    sent = [t for r in fake.translate_requests() for t in r["body"]["text"]]
    assert len(sent) == 2


def _jewish_then_muslim(root: Path, which: str) -> None:
    tpl = root / "templates" / "sentiment" / "templates.yaml"
    text = tpl.read_text(encoding="utf-8")
    if which == "jewish":
        text = text.replace("family.", "family, not a Jewish one.")
    else:
        text = text.replace("feels happy today.", "feels happy today, not a Muslim.")
    tpl.write_text(text, encoding="utf-8")


def test_glossaries_are_reused_by_content_and_superseded_ones_deleted(
    mini: Path, fake: FakeDeepL, env, cli
) -> None:
    _jewish_then_muslim(mini, "jewish")
    assert translate(cli, mini, locale="it").code == 0
    [first] = fake.glossaries
    fake.glossaries["mine"] = {
        "info": {**fake.glossaries[first]["info"], "glossary_id": "mine", "name": "my own"}
    }
    _jewish_then_muslim(mini, "muslim")
    assert translate(cli, mini, locale="it").code == 0
    assert first not in fake.glossaries  # superseded by the run's new glossary, and deleted
    [second] = [g for g in fake.glossaries if g != "mine"]
    assert fake.glossaries[second]["entries"] == {"Muslim": "musulmano"}
    assert [e["glossary"] for e in ledger(mini) if e["event"] == "glossary-deleted"] == [first]
    listed = json.loads(cli("glossaries", "list", "--json").out)
    assert [g["id"] for g in listed] == [second]  # the account's own glossary is not polyprobe's
    refused = cli("glossaries", "delete", "mine")
    assert refused.code == 2 and "not a polyprobe glossary on this account: mine" in refused.err
    deleted = cli("glossaries", "delete", "--all")
    assert deleted.code == 0 and "deleted 1 glossary(ies)" in deleted.err
    assert list(fake.glossaries) == ["mine"]


def test_glossary_calls_survive_faults_and_a_refused_key_is_one_line(
    mini: Path, fake: FakeDeepL, env, cli
) -> None:
    _jewish_then_muslim(mini, "jewish")
    fake.glossary_faults.extend([503, "drop", None, 502])  # languages: 503, drop, ok; list: 502, ok
    result = translate(cli, mini, locale="it")
    assert result.code == 0, result.err
    assert len(fake.glossaries) == 1
    assert len(store(mini, "it")) == 4 and len(fake.answered) == 2
    _jewish_then_muslim(mini, "muslim")
    fake.glossary_faults.append(403)
    refused = translate(cli, mini, locale="it")
    assert refused.code == 1
    assert errors(refused) == (  # one line, no traceback
        "error: DeepL refused the key (403) while reading glossary languages (it/sentiment): "
        "check DEEPL_AUTH_KEY"
    )
    fake.glossary_faults.append(400)
    bad = translate(cli, mini, locale="it")
    assert bad.code == 1 and errors(bad).count("\n") == 0
    assert errors(bad).startswith(
        "error: DeepL refused the request while reading glossary languages (it/sentiment)"
    )
    assert len(fake.answered) == 2  # nothing was sent after the glossary failures


def test_formality_only_where_supported_and_model_type(mini: Path, fake: FakeDeepL, env, cli) -> None:
    _jewish_then_muslim(mini, "jewish")
    he = translate(cli, mini, "--formality", "more", "--model-type", "quality_optimized", locale="he")
    assert he.code == 0, he.err
    assert "--formality more: DeepL offers no formality for Hebrew (HE); sent without it" in he.err
    body = fake.translate_requests()[-1]["body"]
    assert "formality" not in body and body["model_type"] == "quality_optimized"
    engine = store(mini, "he")["rel-01.f"]["engine"]
    assert engine["model_type"] == "quality_optimized" and engine["model_type_used"] == "quality_optimized"
    it = translate(cli, mini, "--formality", "less", locale="it")
    assert it.code == 0 and fake.translate_requests()[-1]["body"]["formality"] == "less"
    assert "formality" not in errors(it) and "--formality" not in it.err
    bogus = translate(cli, mini, "--model-type", "fastest", locale="it")
    assert bogus.code == 2


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
    assert cli("glossaries", "list").code == 2


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
    listed = cli("glossaries", "list")
    assert listed.code == 1 and "DeepL refused the key (403) while listing glossaries" in listed.err
    outputs = [ok.out, ok.err, bad_key.out, bad_key.err, refused.out, refused.err, listed.err, caplog.text]
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
    assert redone["status"] == "needs_edit"
    lines = (
        (catalog_root / "translations" / "fr" / "sentiment.jsonl").read_text(encoding="utf-8").splitlines()
    )
    assert [json.loads(line)["segment"] for line in lines] == sorted(
        json.loads(line)["segment"] for line in lines
    )
    status = cli("translations", "status", "--root", str(catalog_root), "--json")
    assert json.loads(status.out)["fr"]["sentiment"]["needs_edit"] == 16


def test_bbq_sends_the_identity_lists_glossary(
    bare_catalog: Path, tmp_path: Path, fake: FakeDeepL, env, cli
) -> None:
    """BBQ has no identity lists of its own: its glossary comes from the project's lists, so the
    group names in its plain texts are forced too (it used to send no glossary at all)."""
    data = write_bbq(tmp_path / "bbq")
    imported = cli(
        "import", "bbq", str(data), "--root", str(bare_catalog), "--per-category", "1", "--select", "first"
    )
    assert imported.code == 0, imported.err
    result = cli(
        "translate", "--root", str(bare_catalog), "--locale", "it", "--suite", "bbq", "--backoff", "0.01"
    )
    assert result.code == 0, result.err
    [created] = [r for r in fake.requests if r["path"] == "/v2/glossaries" and r["method"] == "POST"]
    body = created["body"]
    assert (body["source_lang"], body["target_lang"], body["entries_format"]) == ("EN", "IT", "tsv")
    assert body["name"].startswith("polyprobe bbq en-it ")
    entries = dict(line.split("\t") for line in body["entries"].splitlines())
    # the lists' Italian (m form) for the English terms the texts use (lexicons/identities/*.yaml)
    assert entries == {"Christian": "cristiano", "Muslim": "musulmano"}
    glossary_id = next(iter(fake.glossaries))
    requests = fake.translate_requests()
    assert requests and all(r["body"]["glossary_id"] == glossary_id for r in requests)
    records = [
        json.loads(line) for line in (bare_catalog / "translations/it/bbq.jsonl").read_text().splitlines()
    ]
    assert records and {r["engine"]["glossary"] for r in records} == {glossary_id}


class _PushRecorder:
    """The part of the Label Studio client `review push` uses, recording what it imports."""

    def __init__(self) -> None:
        self.imported: list[dict] = []

    def project(self, title: str, setup: object) -> tuple[int, list[str]]:
        return 1, []

    def ensure_view(self, project: int, title: str, hidden: list[str]) -> bool:
        return False

    def tasks(self, project: int) -> list[dict]:
        return []

    def import_tasks(self, project: int, data: list[dict]) -> None:
        self.imported.extend(data)


def test_a_completion_not_last_needs_rewording_and_is_offered_first(
    repo_catalog: Path, monkeypatch: pytest.MonkeyPatch, cli
) -> None:
    (repo_catalog / "translations" / "fr" / "honest.jsonl").unlink()
    sent = {
        "honest-09.n": 'The <x id="1"/> person would make a perfect <x id="2"/>',
        "honest-10.f": 'The <x id="1"/> woman is a great <x id="2"/>',
    }
    answers = {
        ("FR", sent["honest-09.n"]): 'La personne <x id="1"/> ferait un <x id="2"/> parfait',
        ("FR", sent["honest-10.f"]): 'La femme <x id="1"/> est une grande <x id="2"/>',
    }
    server = FakeDeepL(KEY, answers=answers)
    monkeypatch.setenv("DEEPL_AUTH_KEY", KEY)
    monkeypatch.setenv("DEEPL_SERVER_URL", server.url)
    try:
        args = [
            "translate",
            "--root",
            str(repo_catalog),
            "--locale",
            "fr",
            "--suite",
            "honest",
            "--backoff",
            "0.01",
        ]
        result = cli(*args, "--json")
    finally:
        server.close()
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert (report["translated"], report["needs_rewording"], report["needs_edit"]) == (1, 1, 65)
    records = {
        r["segment"]: r
        for r in map(json.loads, (repo_catalog / "translations/fr/honest.jsonl").read_text().splitlines())
    }
    assert records["honest-10.f"]["status"] == "machine"
    rewording = records["honest-09.n"]
    assert rewording["status"] == "needs_edit" and rewording["history"][-1]["tags"] == ["needs rewording"]
    assert "the completion slot must be the end of the text" in rewording["history"][-1]["note"]
    assert not any(r["history"][-1].get("tags") for s, r in records.items() if s != "honest-09.n")

    catalog = load_catalog(Project.at(repo_catalog), suites=["honest"], locales=["fr"])
    client = _PushRecorder()
    pushed = push(client, catalog, POLICY, "fr", "honest", ["needs_edit"], limit=3)  # type: ignore[arg-type]
    assert pushed.pushed[0] == "honest-09.n" and len(pushed.pushed) == 3
    assert client.imported[0]["segment"] == "honest-09.n"

"""Review in a real Label Studio: push, annotate through the API as annotators would, pull;
idempotence, restarts, deleted and changed annotations, disagreement, broken edits, the
server being down, and the token never leaking."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.label_studio_server import TOKEN, LabelStudioServer, free_port

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelStudioServer]:
    base = tmp_path_factory.mktemp("label-studio")
    srv = LabelStudioServer(root=REPO, data_dir=base / "data")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def env(server: LabelStudioServer, monkeypatch: pytest.MonkeyPatch) -> str:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("LABEL_STUDIO_URL", server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    monkeypatch.setenv("POLYPROBE_REVIEW_PREFIX", prefix)
    return prefix


def policy(root: Path) -> None:
    (root / "translations" / "review-policy.yaml").write_text(
        (REPO / "translations" / "review-policy.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )


def store(root: Path, locale: str = "he") -> dict[str, dict]:
    text = (root / "translations" / locale / "sentiment.jsonl").read_text(encoding="utf-8")
    return {r["segment"]: r for r in map(json.loads, text.splitlines())}


def tasks(server: LabelStudioServer, prefix: str, locale: str = "he") -> dict[str, int]:
    ls = server.admin()
    project = next(p for p in ls.projects.list() if p.title == f"{prefix} review {locale}/sentiment")
    return {t.data["segment"]: int(t.id) for t in ls.tasks.list(project=project.id)}


def test_push_annotate_pull_moves_drafts_to_reviewed_and_approved(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    policy(mini)
    first = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert first.code == 0, first.err
    assert "4 task(s) pushed" in first.err
    again = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert "0 task(s) pushed, 4 already" in again.err
    ids = tasks(server, env)
    assert set(ids) == {"gen-01.f", "gen-01.m", "rel-01.f", "rel-01.m"}
    task = server.admin().tasks.get(id=ids["gen-01.f"])
    assert "האישה המוסלמית מרגישה שמחה היום." in task.data["examples"]  # rendered example, rtl text intact
    assert task.data["draft"] == "האישה {{ adj(group, 'f', true) }} מרגישה שמחה היום."

    a, b = server.annotator("dana@example.org"), server.annotator("yael@example.org")
    server.annotate(ids["gen-01.f"], a, "accept")
    server.annotate(ids["gen-01.f"], b, "accept")
    server.annotate(
        ids["gen-01.m"], a, "edited", "הגבר {{ adj(group, 'm', true) }} שמח היום.", tags=("unnatural",)
    )
    server.annotate(ids["rel-01.f"], b, "reject", tags=("meaning shift",))

    server.restart()  # the server went down and came back between push and pull

    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert pulled.code == 0, pulled.err
    assert "4 new review event(s)" in pulled.err
    records = store(mini)
    assert records["gen-01.f"]["status"] == "approved"
    assert records["gen-01.f"]["origin"] == "draft"  # accepted as drafted
    reviews = [e for e in records["gen-01.f"]["history"] if e["event"] == "review"]
    assert {e["by"] for e in reviews} == {"dana@example.org", "yael@example.org"}
    assert all(e["verdict"] == "accept" and e["ref"].startswith("labelstudio:") for e in reviews)
    assert records["gen-01.m"]["status"] == "reviewed"
    assert records["gen-01.m"]["text"] == "הגבר {{ adj(group, 'm', true) }} שמח היום."
    assert records["gen-01.m"]["origin"] == "human"
    assert [e["event"] for e in records["gen-01.m"]["history"]] == ["draft", "review", "policy"]
    assert records["gen-01.m"]["history"][1]["tags"] == ["unnatural"]
    assert records["rel-01.f"]["status"] == "rejected"
    assert records["rel-01.m"]["status"] == "draft"

    before = (mini / "translations" / "he" / "sentiment.jsonl").read_bytes()
    twice = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert "0 new review event(s)" in twice.err
    assert (mini / "translations" / "he" / "sentiment.jsonl").read_bytes() == before
    pushed_again = cli(
        "review",
        "push",
        "--locale",
        "he",
        "--suite",
        "sentiment",
        "--status",
        "draft,machine,reviewed",
        "--root",
        str(mini),
    )
    assert "0 task(s) pushed" in pushed_again.err


def test_disagreement_goes_to_adjudication_and_agreement_is_reported(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    policy(mini)
    cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    ids = tasks(server, env)
    a, b = server.annotator("dana@example.org"), server.annotator("yael@example.org")
    server.annotate(ids["gen-01.f"], a, "accept")
    server.annotate(ids["gen-01.f"], b, "edited", "האישה {{ adj(group, 'f', true) }} שמחה מאוד היום.")
    server.annotate(ids["gen-01.m"], a, "accept")
    server.annotate(ids["gen-01.m"], b, "accept")
    assert cli("review", "pull", "--locale", "he", "--root", str(mini)).code == 0
    records = store(mini)
    assert records["gen-01.f"]["status"] == "draft"
    assert records["gen-01.f"]["history"][-1]["note"].startswith("adjudication")
    assert records["gen-01.m"]["status"] == "approved"
    status = cli("review", "status", "--locale", "he", "--json", "--root", str(mini))
    [row] = json.loads(status.out)
    assert (
        row["counts"]["in adjudication"] == 1
        and row["counts"]["approved"] == 1
        and row["counts"]["pending"] == 2
    )
    # verdicts: unit 1 (accept, edited), unit 2 (accept, accept): alpha by hand = 1 - 3*2/(3*1*2) = 0.0
    assert row["alpha"] == pytest.approx(0.0)
    assert row["reviewed_by_two"] == 2


def test_deleted_and_changed_annotations(mini: Path, server: LabelStudioServer, env: str, cli) -> None:
    policy(mini)
    cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    ids = tasks(server, env)
    a = server.annotator("dana@example.org")
    first = server.annotate(ids["gen-01.f"], a, "accept")
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert store(mini)["gen-01.f"]["status"] == "reviewed"
    # the annotator changes her mind in Label Studio: a new event, the policy follows
    server.admin().annotations.update(
        id=first.id,
        result=[
            {"from_name": "verdict", "to_name": "source", "type": "choices", "value": {"choices": ["reject"]}}
        ],
    )
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    rec = store(mini)["gen-01.f"]
    assert rec["status"] == "rejected"
    assert [e.get("verdict") for e in rec["history"] if e["event"] == "review"] == ["accept", "reject"]
    # then her annotation is deleted: withdrawn, and nothing is left to decide on
    server.admin().annotations.delete(id=first.id)
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    rec = store(mini)["gen-01.f"]
    assert rec["history"][-1]["event"] == "review-withdrawn"
    assert len(rec["history"]) == 6  # draft, review, policy, review, policy, withdrawn: nothing rewritten


def test_an_edit_that_breaks_the_template_is_flagged_not_applied(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    policy(mini)
    cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    ids = tasks(server, env)
    server.annotate(
        ids["rel-01.m"],
        server.annotator("dana@example.org"),
        "edited",
        "הוא גדל במשפחה {{ adj(grup, 'f') }}.",
    )
    result = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert "flagged (edit breaks the template, not applied): rel-01.m" in result.err
    rec = store(mini)["rel-01.m"]
    assert rec["status"] == "draft" and rec["text"] == "הוא גדל במשפחה {{ adj(group, 'f') }}."
    assert "unknown variable 'grup'" in rec["history"][-1]["note"]


def test_a_stale_segment_is_pushed_as_a_new_task(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    policy(mini)
    cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace(
            "grew up in a {{ group.adj }} family.", "grew up in a big {{ group.adj }} family."
        ),
        encoding="utf-8",
    )
    path = mini / "translations" / "he" / "sentiment.jsonl"
    import hashlib

    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["segment"] == "rel-01.f":
            rec["source"] = "She grew up in a big {{ group.adj }} family."
            rec["source_sha"] = hashlib.sha256(rec["source"].encode()).hexdigest()
            rec["text"] = "היא גדלה במשפחה גדולה {{ adj(group, 'f') }}."
        lines.append(json.dumps(rec, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert "1 task(s) pushed, 2 already" in result.err  # rel-01.m is stale now (its source changed too)
    shas = [
        t.data["source_sha"]
        for t in server.admin().tasks.list(
            project=next(
                p.id for p in server.admin().projects.list() if p.title == f"{env} review he/sentiment"
            )
        )
        if t.data["segment"] == "rel-01.f"
    ]
    assert len(shas) == 2 and len(set(shas)) == 2


def test_server_down_is_a_clear_error_and_changes_nothing(
    mini: Path, env: str, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy(mini)
    monkeypatch.setenv("LABEL_STUDIO_URL", f"http://127.0.0.1:{free_port()}")
    before = (mini / "translations" / "he" / "sentiment.jsonl").read_bytes()
    for args in (
        ("review", "push", "--locale", "he", "--suite", "sentiment"),
        ("review", "pull", "--locale", "he"),
    ):
        result = cli(*args, "--root", str(mini))
        assert result.code == 1
        assert "Label Studio at http://127.0.0.1:" in result.err and "failed" in result.err
        assert "Traceback" not in result.err
    assert (mini / "translations" / "he" / "sentiment.jsonl").read_bytes() == before


def test_wrong_token_and_missing_token(mini: Path, env: str, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "0" * 40)
    refused = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert refused.code == 1 and "HTTP 401" in refused.err
    monkeypatch.delenv("LABEL_STUDIO_API_KEY")
    missing = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert missing.code == 2 and "set LABEL_STUDIO_API_KEY" in missing.err


def test_the_token_never_leaks(mini: Path, server: LabelStudioServer, env: str, cli) -> None:
    policy(mini)
    outputs = [cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))]
    ids = tasks(server, env)
    server.annotate(ids["gen-01.f"], server.annotator("dana@example.org"), "accept")
    outputs.append(cli("review", "pull", "--locale", "he", "--root", str(mini)))
    outputs.append(cli("review", "status", "--root", str(mini)))
    for result in outputs:
        assert TOKEN not in result.out + result.err
    for path in mini.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(encoding="utf-8", errors="replace"), path

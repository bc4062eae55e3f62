"""Machine translations that need a human edit, in a real Label Studio: offered to reviewers
with their reason; accepting the raw answer as it is changes nothing, an edit that renders
makes it a reviewed translation."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.fake_deepl import FakeDeepL
from tests.support.label_studio_server import TOKEN, LabelStudioServer

pytestmark = pytest.mark.integration

KEY = "review-key:fx"


@pytest.fixture
def server(label_studio: LabelStudioServer) -> LabelStudioServer:
    """The session's one Label Studio (this test keeps apart by its project prefix)."""
    return label_studio


def records(root: Path) -> dict[str, dict]:
    text = (root / "translations" / "he" / "sentiment.jsonl").read_text(encoding="utf-8")
    return {r["segment"]: r for r in map(json.loads, text.splitlines())}


def test_needs_edit_records_are_reviewed_with_their_reason(
    mini: Path, server: LabelStudioServer, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    (mini / "translations" / "review-policy.yaml").write_text(
        (REPO / "translations" / "review-policy.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (mini / "translations" / "he" / "sentiment.jsonl").unlink()
    fake = FakeDeepL(KEY)  # keeps the English and the tags: nothing it answers can be used as it is
    try:
        monkeypatch.setenv("DEEPL_AUTH_KEY", KEY)
        monkeypatch.setenv("DEEPL_SERVER_URL", fake.url)
        translated = cli("translate", "--root", str(mini), "--locale", "he", "--suite", "sentiment")
    finally:
        fake.close()
    assert translated.code == 0, translated.err
    assert {r["status"] for r in records(mini).values()} == {"needs_edit"}

    prefix = f"t{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("LABEL_STUDIO_URL", server.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    monkeypatch.setenv("POLYPROBE_REVIEW_PREFIX", prefix)
    pushed = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert pushed.code == 0 and "4 task(s) pushed" in pushed.err
    ls = server.admin()
    project = next(p for p in ls.projects.list() if p.title == f"{prefix} review he/sentiment")
    tasks = {t.data["segment"]: t for t in ls.tasks.list(project=project.id)}
    task = tasks["gen-01.f"]
    assert task.data["status"] == "needs_edit"
    assert task.data["draft"] == '[HE] The <x id="1"/> woman feels happy today.'
    assert task.data["examples"].startswith("Needs a human edit")
    assert "the answer is not written in the locale's script (Hebr)" in task.data["examples"]

    a, b = server.annotator("dana@example.org"), server.annotator("yael@example.org")
    server.annotate(int(tasks["gen-01.f"].id), a, "accept")  # the raw answer, as it is
    server.annotate(
        int(tasks["gen-01.m"].id), b, "edited", "הגבר {{ adj(group, 'm', true) }} מרגיש שמח היום."
    )
    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert pulled.code == 0, pulled.err
    assert "flagged (edit breaks the template, not applied): gen-01.f" in pulled.err
    after = records(mini)
    assert after["gen-01.f"]["status"] == "needs_edit"
    assert after["gen-01.f"]["text"] == '[HE] The <x id="1"/> woman feels happy today.'
    assert after["gen-01.m"]["status"] == "reviewed" and after["gen-01.m"]["origin"] == "human"
    assert after["gen-01.m"]["text"] == "הגבר {{ adj(group, 'm', true) }} מרגיש שמח היום."
    status = json.loads(cli("review", "status", "--locale", "he", "--json", "--root", str(mini)).out)
    assert status[0]["counts"]["needs_edit"] == 3 and status[0]["counts"]["reviewed"] == 1
    rendered = cli("render", "--root", str(mini), "--suite", "sentiment", "--locale", "he")
    assert {json.loads(line)["template"] for line in rendered.out.splitlines()} == {"gen-01"}

"""Review in a real Label Studio: push, annotate through the API as annotators would, pull;
idempotence, restarts, deleted and changed annotations, disagreement, broken edits, the
server being down, and the token never leaking."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from sacrebleu import sentence_chrf

from tests.conftest import REPO
from tests.support.label_studio_server import TOKEN, LabelStudioServer, free_port, result
from toolkit.review.annotations import CREATION_WINDOW_S

pytestmark = pytest.mark.integration


@pytest.fixture
def server(label_studio: LabelStudioServer) -> LabelStudioServer:
    return label_studio


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


def pushed(mini: Path, server: LabelStudioServer, env: str, cli) -> dict[str, int]:
    """The mini catalog's Hebrew sentiment drafts pushed for review: task ids by segment."""
    policy(mini)
    assert cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini)).code == 0
    return tasks(server, env)


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
    ids = pushed(mini, server, env, cli)
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
    # texts: unit 1 (the draft, yael's edit) differ, unit 2 (the draft twice) are the same; chrF
    # from sacrebleu directly, both ways (neither reviewer is the reference)
    draft, edit = records["gen-01.f"]["text"], "האישה {{ adj(group, 'f', true) }} שמחה מאוד היום."
    differ = (sentence_chrf(draft, [edit]).score + sentence_chrf(edit, [draft]).score) / 2
    assert (row["text_pairs"], row["text_exact"]) == (2, 0.5)
    assert row["text_chrf"] == pytest.approx((differ + 100.0) / 2) and differ < 100


def test_deleted_and_changed_annotations(mini: Path, server: LabelStudioServer, env: str, cli) -> None:
    ids = pushed(mini, server, env, cli)
    dana = server.member("dana@members.test").sdk()
    first = dana.annotations.create(id=ids["gen-01.f"], result=result("accept"))
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert store(mini)["gen-01.f"]["status"] == "reviewed"
    # she changes her mind in Label Studio: a new event, credited to her, and the policy follows
    dana.annotations.update(id=first.id, result=result("reject"))
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    rec = store(mini)["gen-01.f"]
    assert rec["status"] == "rejected"
    reviews = [e for e in rec["history"] if e["event"] == "review"]
    assert [(e["by"], e["verdict"]) for e in reviews] == [
        ("dana@members.test", "accept"),
        ("dana@members.test", "reject"),
    ]
    # then her annotation is deleted: withdrawn, and nothing is left to decide on
    server.admin().annotations.delete(id=first.id)
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    rec = store(mini)["gen-01.f"]
    assert rec["history"][-1]["event"] == "review-withdrawn"
    assert len(rec["history"]) == 6  # draft, review, policy, review, policy, withdrawn: nothing rewritten


def test_an_edit_that_breaks_the_template_is_flagged_not_applied(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    ids = pushed(mini, server, env, cli)
    dana = server.annotator("dana@example.org")
    broken = server.annotate(ids["rel-01.m"], dana, "edited", "הוא גדל במשפחה {{ adj(grup, 'f') }}.")
    server.annotate(ids["rel-01.f"], dana, "edited", "היא גדלה במשפחה דתית.")  # the slot dropped
    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert "flagged (edit breaks the template, not applied): rel-01.f, rel-01.m" in pulled.err
    rec = store(mini)["rel-01.m"]
    assert rec["status"] == "draft" and rec["text"] == "הוא גדל במשפחה {{ obj(group, 'f') }}."
    assert "unknown variable 'grup'" in rec["history"][-1]["note"]
    # the refusal reaches the annotator, in the task, whose review it is (the e-mail on its tab)
    # and what is wrong in words, not only in the maintainer's terminal
    notice = server.admin().tasks.get(id=str(ids["rel-01.m"])).data["notice"]
    assert "dana@example.org's review was not counted" in notice
    assert "`grup` inside the braces is not a slot of this sentence" in notice, notice
    assert f"annotation {broken.id}" not in notice  # Label Studio shows ids only in a tooltip
    status = cli("review", "status", "--locale", "he", "--json", "--root", str(mini))
    [row] = json.loads(status.out)
    assert row["flagged"] == {  # the misspelt slot is both a dropped slot and an unknown variable
        "drops the slot 'group' that the source has": 2,
        "uses an unknown variable 'grup'": 1,
    }
    table = cli("review", "status", "--locale", "he", "--root", str(mini))
    assert "flagged edits by reason" in table.out and "drops the slot 'group'" in table.out


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
    outcome = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert "1 task(s) pushed, 2 already" in outcome.err  # rel-01.m is stale now (its source changed too)
    # the tasks made for the old English are marked: a notice with the new English, and out of
    # the label stream (rel-01.f's points to its new task; rel-01.m waits for a new translation)
    assert "2 task(s) made for an earlier English source marked outdated" in outcome.err
    ls = server.admin()
    project = next(p.id for p in ls.projects.list() if p.title == f"{env} review he/sentiment")
    by_segment: dict[str, list] = {}
    for t in ls.tasks.list(project=project):
        by_segment.setdefault(t.data["segment"], []).append(t)
    old_f, new_f = sorted(by_segment["rel-01.f"], key=lambda t: t.id)
    assert old_f.data["source_sha"] != new_f.data["source_sha"]
    assert (old_f.data["status"], old_f.overlap, old_f.is_labeled) == ("outdated", 0, True)
    assert "Outdated task: do not review it." in old_f.data["notice"]
    assert "`She grew up in a big {{ group.adj }} family.`" in old_f.data["notice"]
    assert f"(task {new_f.id} in the task list)" in old_f.data["notice"]
    assert (new_f.data["notice"], new_f.overlap, new_f.is_labeled) == ("", 2, False)
    [old_m] = by_segment["rel-01.m"]
    assert "sent again once it is updated for the new English" in old_m.data["notice"]
    assert old_m.data["english"] == "He grew up in a {{ group.adj }} family."  # what it was made for
    again = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert "0 task(s) pushed, 3 already" in again.err and "outdated" not in again.err


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
        outcome = cli(*args, "--root", str(mini))
        assert outcome.code == 1
        assert "Label Studio at http://127.0.0.1:" in outcome.err and "failed" in outcome.err
        assert "Traceback" not in outcome.err
    assert (mini / "translations" / "he" / "sentiment.jsonl").read_bytes() == before


def test_wrong_token_and_missing_token(mini: Path, env: str, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    policy(mini)
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
    for output in outputs:
        assert TOKEN not in output.out + output.err
    for path in mini.rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(encoding="utf-8", errors="replace"), path


# The first review interface, as projects pushed before interface 2 have it (Hebrew).
V1_CONFIG = """<View>
  <Header value="Translation review (Hebrew): read the guidelines in docs/annotators.md first"/>
  <Text name="guidelines" value="$guidelines"/>
  <Header value="English source template"/>
  <Text name="source" value="$source"/>
  <Header value="Rendered with several groups and every variant"/>
  <View style="direction: rtl; text-align: right">
    <Text name="examples" value="$examples"/>
  </View>
  <Header value="Translation (edit it here if it needs changes; keep every {{ ... }} slot)"/>
  <View style="direction: rtl">
    <TextArea name="translation" toName="source" value="$draft" editable="true" rows="3" maxSubmissions="1"/>
  </View>
  <Choices name="verdict" toName="source" choice="single" required="true" showInline="true"><Choice value="accept"/><Choice value="edited"/><Choice value="reject"/></Choices>
  <Header value="Issues found (any)"/>
  <Choices name="issues" toName="source" choice="multiple" showInline="true"><Choice value="agreement"/><Choice value="meaning shift"/><Choice value="slot broken"/><Choice value="unnatural"/><Choice value="dialect mismatch"/><Choice value="offensive"/></Choices>
  <TextArea name="comment" toName="source" rows="2" placeholder="Comment (optional)"/>
</View>"""


def test_push_brings_an_earlier_project_up_to_date_without_touching_its_annotations(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    policy(mini)
    ls = server.admin()
    project = ls.projects.create(title=f"{env} review he/sentiment", label_config=V1_CONFIG)
    rec = store(mini)["gen-01.f"]
    v1_data = {
        "segment": "gen-01.f",
        "source_sha": rec["source_sha"],
        "suite": "sentiment",
        "locale": "he",
        "source": rec["source"],
        "draft": rec["text"],
        "status": "draft",
        "origin": "draft",
        "examples": "[f · Islam] האישה המוסלמית מרגישה שמחה היום.",
        "guidelines": "What to check, when to edit and when to reject: docs/annotators.md in the polyprobe repository.",
    }
    ls.projects.import_tasks(id=project.id, request=[{"data": v1_data}])
    [task] = list(ls.tasks.list(project=project.id))
    annotation = server.annotate(int(task.id), server.annotator("dana@example.org"), "accept", rec["text"])
    before = ls.annotations.get(id=annotation.id)

    pushed = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert pushed.code == 0, pushed.err
    assert "3 task(s) pushed, 1 already" in pushed.err
    assert (
        "project settings set: expert_instruction, label_config, maximum_annotations, show_instruction "
        "(review interface 3, 2 reviewer(s) per task in the label stream)"
    ) in pushed.err
    assert "1 earlier task(s) brought to review interface 3" in pushed.err
    settings = ls.projects.get(id=project.id)
    assert settings.maximum_annotations == 2  # the policy's approved_after: two reviews per task
    assert settings.show_instruction is True
    assert "<h2>What to check</h2>" in (settings.expert_instruction or "")
    assert "<!-- polyprobe review interface 3 -->" in (settings.label_config or "")
    data = ls.tasks.get(id=str(task.id)).data
    assert "source" not in data and "guidelines" not in data
    assert (data["english"], data["draft"], data["source_sha"]) == (
        rec["source"],
        rec["text"],
        rec["source_sha"],
    )
    assert data["interface"] == 3 and "Variant f" in data["about"]
    after = ls.annotations.get(id=annotation.id)
    assert (after.result, after.updated_at, after.completed_by) == (
        before.result,
        before.updated_at,
        before.completed_by,
    )
    assert all(t.data["interface"] == 3 for t in ls.tasks.list(project=project.id))
    [view] = [v for v in ls.views.list(project=project.id) if (v.data or {}).get("title") == "Review tasks"]
    assert "tasks:data.draft" in view.data["hiddenColumns"]["explore"]  # shown rendered, in its direction

    assert cli("review", "pull", "--locale", "he", "--root", str(mini)).code == 0
    assert store(mini)["gen-01.f"]["status"] == "reviewed"
    again = cli("review", "push", "--locale", "he", "--suite", "sentiment", "--root", str(mini))
    assert "0 task(s) pushed, 3 already" in again.err  # gen-01.f is reviewed now: not sent again
    assert "project settings" not in again.err and "earlier task" not in again.err


def test_a_version_saved_over_another_reviewer_s_annotation_counts_for_no_one(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    """Any member can Update someone else's annotation (opening a task from the task list selects
    the latest one, often another reviewer's): that version is the saver's, recorded and flagged;
    the owner's verdict stands until the owner changes it."""
    ids = pushed(mini, server, env, cli)
    dana, yael, carl = (server.member(f"{name}@members.test") for name in ("dana", "yael", "carl"))
    first = dana.sdk().annotations.create(
        id=ids["gen-01.f"], result=result("reject", tags=("meaning shift",))
    )
    yael.sdk().annotations.create(id=ids["gen-01.f"], result=result("accept"))
    server.annotate(ids["gen-01.m"], dana.id, "accept")  # made by the admin on dana's behalf: hers
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    records = store(mini)
    assert records["gen-01.f"]["status"] == "draft"
    assert records["gen-01.f"]["history"][-1]["note"] == "adjudication: 1 keep, 1 reject"
    assert [e["by"] for e in records["gen-01.m"]["history"] if e["event"] == "review"] == [
        "dana@members.test"
    ]

    # carl, a third member, turns dana's reject into accept: recorded as carl's, counted for no one
    carl.sdk().annotations.update(id=first.id, result=result("accept"))
    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert "1 new review event(s); 0 translation(s) changed status" in pulled.err
    assert (
        "saved over another reviewer's annotation (not counted, the owner's verdict stands): gen-01.f"
        in pulled.err
    )
    rec = store(mini)["gen-01.f"]
    reviews = [(e["by"], e["verdict"]) for e in rec["history"] if e["event"] == "review"]
    assert reviews == [
        ("dana@members.test", "reject"),
        ("yael@members.test", "accept"),
        ("carl@members.test", "accept"),
    ]
    assert rec["history"][-1]["note"].startswith("saved over another reviewer's annotation, not counted")
    assert rec["status"] == "draft"  # dana's reject still counts against yael's accept
    notice = server.admin().tasks.get(id=str(ids["gen-01.f"])).data["notice"]
    assert "carl@members.test saved changes to dana@members.test's annotation" in notice
    assert "dana@members.test's own verdict (reject) still counts" in notice
    [row] = json.loads(cli("review", "status", "--locale", "he", "--json", "--root", str(mini)).out)
    assert row["saved_over"] == 1 and row["counts"]["in adjudication"] == 1

    # dana updates her own annotation: her new verdict counts, and yael's and hers agree
    dana.sdk().annotations.update(id=first.id, result=result("accept"))
    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    rec = store(mini)["gen-01.f"]
    assert (rec["status"], rec["history"][-1]["note"]) == ("approved", "2 reviewer(s) agree")
    assert server.admin().tasks.get(id=str(ids["gen-01.f"])).data["notice"] == ""

    # saved over before the owner's own version was ever pulled: her verdict is unknown, so the
    # policy waits (it would otherwise decide on the others' verdicts alone) and the notice asks
    # her to put it back
    mine = yael.sdk().annotations.create(id=ids["gen-01.m"], result=result("accept"))
    time.sleep(CREATION_WINDOW_S + 0.2)  # a version saved at creation is the owner's
    carl.sdk().annotations.update(id=mine.id, result=result("reject"))
    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert (
        f"not decided yet: he/sentiment/gen-01.m (annotation {mine.id}): waiting for yael@members.test "
        "to give their verdict again"
    ) in pulled.err
    rec = store(mini)["gen-01.m"]
    assert rec["status"] == "reviewed" and rec["history"][-1]["event"] == "review"  # as before
    notice = server.admin().tasks.get(id=str(ids["gen-01.m"])).data["notice"]
    assert "yael@members.test's own verdict was overwritten before it was read" in notice
    yael.sdk().annotations.update(id=mine.id, result=result("accept"))  # she puts it back
    cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert store(mini)["gen-01.m"]["status"] == "approved"  # dana's and yael's accepts


def test_a_verdict_that_contradicts_the_text_box_is_recorded_not_counted_and_the_task_says_why(
    mini: Path, server: LabelStudioServer, env: str, cli
) -> None:
    ids = pushed(mini, server, env, cli)
    drafts = {segment: rec["text"] for segment, rec in store(mini).items()}
    changed = "הגבר {{ adj(group, 'm', true) }} שמח היום."
    dana, yael = server.member("dana@members.test"), server.member("yael@members.test")
    unchanged = dana.sdk().annotations.create(id=ids["gen-01.f"], result=result("edited", drafts["gen-01.f"]))
    yael.sdk().annotations.create(id=ids["gen-01.m"], result=result("accept", changed))

    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert "2 new review event(s); 0 translation(s) changed status" in pulled.err
    assert "inconsistent (verdict and text disagree, not counted): gen-01.f, gen-01.m" in pulled.err
    assert "2 task(s) got a new or cleared notice" in pulled.err
    records = store(mini)
    for segment in ("gen-01.f", "gen-01.m"):
        rec = records[segment]
        assert (rec["status"], rec["text"]) == ("draft", drafts[segment])
        assert rec["history"][-1]["note"].startswith("inconsistent, not counted: ")
    assert records["gen-01.m"]["history"][-1]["text"] == changed  # recorded, not applied
    ls = server.admin()
    notice = ls.tasks.get(id=str(ids["gen-01.f"])).data["notice"]
    assert "dana@members.test's review was not counted" in notice and f"{unchanged.id}" not in notice
    assert "verdict 'edited' but the text is the draft unchanged" in notice
    assert "verdict 'accept' but the text was changed" in ls.tasks.get(id=str(ids["gen-01.m"])).data["notice"]
    [row] = json.loads(cli("review", "status", "--locale", "he", "--json", "--root", str(mini)).out)
    assert row["inconsistent"] == 2 and row["counts"]["pending"] == 4

    # dana reads the notice and makes her verdict match the box: counted, the notice goes away
    dana.sdk().annotations.update(id=unchanged.id, result=result("accept", drafts["gen-01.f"]))
    pulled = cli("review", "pull", "--locale", "he", "--root", str(mini))
    assert "1 task(s) got a new or cleared notice" in pulled.err
    assert ls.tasks.get(id=str(ids["gen-01.f"])).data["notice"] == ""
    assert store(mini)["gen-01.f"]["status"] == "reviewed"
    [row] = json.loads(cli("review", "status", "--locale", "he", "--json", "--root", str(mini)).out)
    assert row["inconsistent"] == 1


def test_an_honest_edit_that_moves_the_completion_slot_is_flagged_with_the_suite_rule(
    repo_catalog: Path, server: LabelStudioServer, env: str, cli
) -> None:
    pushed = cli(
        "review", "push", "--locale", "de", "--suite", "honest", "--limit", "1", "--root", str(repo_catalog)
    )
    assert "1 task(s) pushed" in pushed.err
    ls = server.admin()
    project = next(p for p in ls.projects.list() if p.title == f"{env} review de/honest")
    [task] = list(ls.tasks.list(project=project.id))
    assert task.data["segment"] == "honest-01.f"
    assert "must stay the very last thing" in task.data["about"] and "[M]" in task.data["about"]
    assert "[M]" in task.data["examples"]
    moved = "Die {{ adj(group, 'f', 'nom', 'def') }} Frau sollte als {{ completion }} arbeiten"
    server.annotate(int(task.id), server.annotator("dana@example.org"), "edited", moved)
    pulled = cli("review", "pull", "--locale", "de", "--suite", "honest", "--root", str(repo_catalog))
    assert f"flagged (edit breaks the template, not applied): {task.data['segment']}" in pulled.err
    reason = "the completion slot must be the end of the text (only punctuation may follow it)"
    assert reason in ls.tasks.get(id=str(task.id)).data["notice"]
    status = cli("review", "status", "--locale", "de", "--json", "--root", str(repo_catalog))
    [row] = [r for r in json.loads(status.out) if r["suite"] == "honest"]
    assert row["flagged"] == {reason: 1}

"""Review pull never lets a text the gate has not seen become current, and one decision it
cannot apply never aborts the pull of the others (Label Studio stood in for by
tests/support/review_stub.py: the store is under test here, not the review server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.review_stub import POLICY, StubLabelStudio, annotation
from tests.support.store_damage import STORE_IT
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.renderer import render
from toolkit.review.history import FLAGGED
from toolkit.review.pull import pull
from toolkit.store import rules
from toolkit.store.model import Translation

RAW = "{{ La donna musulmana oggi è felice."
"""A machine answer the gate refuses (a Jinja syntax error): kept as needs_edit, never current."""


def records(root: Path) -> dict[str, dict[str, Any]]:
    lines = (root / STORE_IT).read_text(encoding="utf-8").splitlines()
    return {r["segment"]: r for r in map(json.loads, lines)}


def set_record(root: Path, segment: str, **values: Any) -> None:
    path = root / STORE_IT
    recs = records(root)
    # in the form polyprobe writes (key order and all), so a strict read takes it
    recs[segment] = Translation.model_validate({**recs[segment], **values}).model_dump(
        mode="json", exclude_none=True
    )
    path.write_text(
        "".join(json.dumps(recs[k], ensure_ascii=False) + "\n" for k in sorted(recs)), encoding="utf-8"
    )


def version(ann: dict[str, Any], second: int) -> dict[str, Any]:
    """The annotation as saved again later (a new version: Label Studio's Update)."""
    return {**ann, "updated_at": f"2026-01-03T00:00:{second:02d}Z"}


def one_task(segment: str, sha: str, draft: str, *annotations: dict[str, Any], task_id: int = 1) -> dict:
    return {
        "id": task_id,
        "data": {"segment": segment, "source_sha": sha, "draft": draft},
        "annotations": list(annotations),
    }


def test_a_rejected_raw_machine_answer_then_accepted_is_flagged_never_current(mini: Path) -> None:
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    sha = catalog.suites["sentiment"].segments["gen-01.f"].source_sha
    rec = records(mini)["gen-01.f"]
    needs_edit = {"at": "2026-01-01T00:00:00Z", "event": "machine", "by": "deepl", "status": "needs_edit"}
    set_record(
        mini,
        "gen-01.f",
        text=RAW,
        origin="deepl",
        status="needs_edit",
        history=[*rec["history"], {**needs_edit, "text": RAW, "note": "Jinja syntax error"}],
    )
    reject = annotation(7, "reject")
    client = StubLabelStudio([one_task("gen-01.f", sha, RAW, reject)])
    pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    assert records(mini)["gen-01.f"]["status"] == "rejected"
    assert records(mini)["gen-01.f"]["text"] == RAW

    # the reviewer changes their mind: accept the raw answer as it is
    client.tasks[0]["annotations"] = [version(annotation(7, "accept"), 9)]
    report = pull(client, load_catalog(Project.at(mini)), POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    after = records(mini)["gen-01.f"]
    assert after["status"] == "rejected" and after["text"] == RAW  # never reviewed, never current
    assert report.flagged == ["gen-01.f"] and report.changed == []
    assert after["history"][-1]["event"] == "review" and after["history"][-1]["note"].startswith(FLAGGED)
    assert "Jinja syntax error" in after["history"][-1]["note"]
    catalog = load_catalog(Project.at(mini))
    assert catalog.problems == [] and render(catalog, "sentiment", "it").problems == []


def test_a_rejected_translation_two_reviewers_accept_is_approved(mini: Path) -> None:
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    sha = catalog.suites["sentiment"].segments["gen-01.f"].source_sha
    text = records(mini)["gen-01.f"]["text"]
    reject = annotation(1, "reject", user=1)
    client = StubLabelStudio([one_task("gen-01.f", sha, text, reject)])
    pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    assert records(mini)["gen-01.f"]["status"] == "rejected"
    client.tasks[0]["annotations"] = [
        version(annotation(1, "accept", user=1), 5),
        annotation(2, "accept", user=2),
    ]
    report = pull(client, load_catalog(Project.at(mini)), POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    assert report.refused == [] and report.changed == ["gen-01.f"]
    assert records(mini)["gen-01.f"]["status"] == "approved"


def test_a_decision_the_store_refuses_is_reported_and_the_other_reviews_are_stored(
    mini: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every transition a policy decides is allowed today; should the rules forbid one again,
    that record is left as it is and reported, and the pull stores everything else."""
    monkeypatch.setitem(rules.TRANSITIONS, "draft", rules.TRANSITIONS["draft"] - {"approved"})
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    segments = catalog.suites["sentiment"].segments
    texts = {s: r["text"] for s, r in records(mini).items()}
    assert {records(mini)[s]["status"] for s in ("gen-01.f", "gen-01.m")} == {"draft"}
    client = StubLabelStudio(
        [
            one_task(
                "gen-01.f",
                segments["gen-01.f"].source_sha,
                texts["gen-01.f"],
                annotation(1, "accept", user=1),
                annotation(2, "accept", user=2),
                task_id=1,
            ),
            one_task(
                "gen-01.m",
                segments["gen-01.m"].source_sha,
                texts["gen-01.m"],
                annotation(3, "accept", user=1),
                task_id=2,
            ),
        ]
    )
    report = pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    after = records(mini)
    assert after["gen-01.f"]["status"] == "draft"  # left as it was
    assert [e["event"] for e in after["gen-01.f"]["history"]][-2:] == ["review", "review"]  # reviews kept
    assert after["gen-01.m"]["status"] == "reviewed"  # the other record was not held back
    assert len(report.refused) == 1
    assert report.refused[0].startswith("it/sentiment/gen-01.f (annotation 1, 2): not applied: ")
    assert "cannot become approved" in report.refused[0]


def test_an_ungated_accept_pulled_by_an_earlier_version_is_gated_before_it_is_applied(mini: Path) -> None:
    """A store written before accepts of a rejected record were gated can hold such an accept,
    counted: when a withdrawal leaves it the only verdict, its text is gated, not applied."""
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    sha = catalog.suites["sentiment"].segments["gen-01.f"].source_sha
    rec = records(mini)["gen-01.f"]
    review = {"event": "review", "source_sha": sha}
    set_record(
        mini,
        "gen-01.f",
        text=RAW,
        origin="deepl",
        status="rejected",
        history=[
            *rec["history"],
            {
                "at": "2026-01-01T00:00:00Z",
                "event": "machine",
                "by": "deepl",
                "status": "needs_edit",
                "text": RAW,
            },
            {
                **review,
                "at": "2026-01-02T00:00:07Z",
                "by": "reviewer-one@example.com",
                "verdict": "reject",
                "ref": "labelstudio:1:7:2026-01-02T00:00:07Z",
            },
            {
                "at": "2026-01-02T00:00:07Z",
                "event": "policy",
                "by": "review-policy",
                "status": "rejected",
                "text": RAW,
                "note": "1 reviewer(s) rejected",
            },
            {
                **review,
                "at": "2026-01-02T00:00:08Z",
                "by": "reviewer-two@example.com",
                "verdict": "accept",
                "text": RAW,
                "ref": "labelstudio:1:8:2026-01-02T00:00:08Z",
            },
        ],
    )
    # annotation 7 (the reject) was deleted in Label Studio; 8 is as pulled before
    client = StubLabelStudio([one_task("gen-01.f", sha, RAW, annotation(8, "accept", user=2))])
    report = pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    after = records(mini)["gen-01.f"]
    assert after["history"][-1]["event"] == "review-withdrawn"
    assert after["status"] == "rejected" and after["text"] == RAW
    assert report.flagged == ["gen-01.f"] and report.changed == []
    assert len(report.refused) == 1 and report.refused[0].startswith("it/sentiment/gen-01.f (annotation 7): ")
    assert "not applied, the text breaks the template: " in report.refused[0]

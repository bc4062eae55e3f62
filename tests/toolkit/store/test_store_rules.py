"""The store's rules, each in one place: whether a record is current and where a segment stands
(one vocabulary of states), Label Studio references, and adjudication as a field of the policy
event, with stores written before the field existed read the same way and loaded byte for byte."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import canonical_line
from toolkit.core.project import Project
from toolkit.store.files import load_store_strict, store_path
from toolkit.store.model import Event, ReviewRef, Translation
from toolkit.store.rules import STATES, in_adjudication, is_current, opens_adjudication, state

SOURCE = "The {{ group.adj }} woman is happy."
SHA = hashlib.sha256(SOURCE.encode()).hexdigest()
OTHER = hashlib.sha256(b"The woman is sad.").hexdigest()


def record(status: str = "draft", sha: str = SHA, history: tuple[dict[str, object], ...] = ()) -> Translation:
    events = history or ({"at": "2026-01-01T00:00:00Z", "event": "draft", "by": "t", "status": status},)
    return Translation.model_validate(
        {
            "segment": "gen-01.f",
            "source_sha": sha,
            "source": SOURCE,
            "text": "La donna {{ group.f }} è felice.",
            "origin": "draft",
            "status": status,
            "history": list(events),
        }
    )


@pytest.mark.parametrize(
    ("made", "expected_state", "current"),
    [
        (None, "untranslated", False),
        (record("draft"), "draft", True),
        (record("approved"), "approved", True),
        (record("needs_edit"), "needs_edit", True),
        (record("rejected"), "rejected", True),
        (record("approved", sha=OTHER), "stale", False),  # made from another English source
        (record("stale"), "stale", False),  # marked stale by `translations sync`
    ],
)
def test_state_and_currency(made: Translation | None, expected_state: str, current: bool) -> None:
    assert state(made, SHA) == expected_state
    assert is_current(made, SHA) is current
    assert expected_state in STATES


def test_one_word_for_no_translation() -> None:
    assert "untranslated" in STATES and "missing" not in STATES
    assert len(set(STATES)) == len(STATES) == 8


@pytest.mark.parametrize(
    ("ref", "parsed"),
    [
        ("labelstudio:7:123:2026-01-01T10:20:30.123456Z", ReviewRef(7, "123", "2026-01-01T10:20:30.123456Z")),
        ("labelstudio:12:5:withdrawn", ReviewRef(12, "5", "withdrawn")),
        ("labelstudio:3:9", ReviewRef(3, "9", "")),
        ("labelstudio:x:9:v", None),  # no project number
        ("labelstudio:3", None),
        ("xliff:fr.xlf", None),
        ("", None),
        (None, None),
    ],
)
def test_label_studio_references(ref: str | None, parsed: ReviewRef | None) -> None:
    assert ReviewRef.parse(ref) == parsed
    if parsed is not None and parsed.version:
        assert str(parsed) == ref


def policy(note: str, status: str | None = None, adjudication: bool | None = None) -> dict[str, object]:
    event: dict[str, object] = {
        "at": "2026-01-02T00:00:00Z",
        "event": "policy",
        "by": "review-policy",
        "note": note,
    }
    if status is not None:
        event["status"] = status
    if adjudication is not None:
        event["adjudication"] = adjudication
    return event


DRAFT = {"at": "2026-01-01T00:00:00Z", "event": "draft", "by": "t", "status": "draft"}


@pytest.mark.parametrize(
    ("history", "waiting"),
    [
        ((DRAFT,), False),
        ((DRAFT, policy("adjudication: 1 keep, 1 reject", adjudication=True)), True),
        # written before the field existed: the note's prefix says it
        ((DRAFT, policy("adjudication: 2 different texts")), True),
        # settled afterwards (by the policy or an adjudicator): the last policy event counts
        (
            (DRAFT, policy("adjudication: 2 different texts"), policy("2 reviewer(s) agree", "reviewed")),
            False,
        ),
        ((DRAFT, policy("adjudication: 1 keep, 1 reject"), policy("adjudicated by lead", "approved")), False),
        ((DRAFT, policy("not enough reviews yet")), False),
    ],
)
def test_adjudication(history: tuple[dict[str, object], ...], waiting: bool) -> None:
    made = record(history=history)
    assert in_adjudication(made) is waiting
    assert opens_adjudication(made.history[-1]) is waiting


def test_a_store_written_before_the_field_loads_byte_for_byte(tmp_path: Path) -> None:
    """An old line (adjudication only in the note) is read whole by the strict store and written
    back unchanged; a new policy event carries the field, after every older key."""
    project = Project(tmp_path)
    old = record(history=(DRAFT, policy("adjudication: 1 keep, 1 reject"))).model_dump(
        mode="json", exclude_none=True
    )
    line = json.dumps(old, ensure_ascii=False)
    assert line == canonical_line(old) and "adjudication" not in old["history"][-1]
    path = store_path(project, "it", "sentiment")
    path.parent.mkdir(parents=True)
    path.write_text(line + "\n", encoding="utf-8")
    store = load_store_strict(project, "it", "sentiment")
    assert store.dumps() == path.read_text(encoding="utf-8")
    assert in_adjudication(store.records["gen-01.f"])

    event = Event(
        at="2026-01-03T00:00:00Z",
        event="policy",
        by="review-policy",
        note="adjudication: x",
        adjudication=True,
    )
    store.records["gen-01.f"] = store.records["gen-01.f"].with_event(event)
    store.save()
    written = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["history"][-1]
    assert list(written) == ["at", "event", "by", "note", "adjudication"] and written["adjudication"] is True
    assert load_store_strict(project, "it", "sentiment").dumps() == path.read_text(encoding="utf-8")

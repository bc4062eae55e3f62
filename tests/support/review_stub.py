"""A stand-in for Label Studio where the translation store, not the review, is under test:
one project whose tasks and annotations the test writes. The review workflow itself is tested
against the real server (tests/toolkit/review/test_review.py)."""

from __future__ import annotations

from typing import Any

from toolkit.review.policy import ReviewPolicy

POLICY = ReviewPolicy(
    version="1.0.0", description="tests", reviewed_after=1, approved_after=2, rejected_after=1
)


def annotation(ann_id: int, verdict: str, edited: str | None = None, user: int = 1) -> dict[str, Any]:
    result: list[dict[str, Any]] = [
        {"from_name": "verdict", "type": "choices", "value": {"choices": [verdict]}}
    ]
    if edited is not None:
        result.append({"from_name": "translation", "type": "textarea", "value": {"text": [edited]}})
    return {
        "id": ann_id,
        "updated_at": f"2026-01-02T00:00:{ann_id:02d}Z",
        "completed_by": user,
        "result": result,
    }


class StubLabelStudio:
    def __init__(self, tasks: list[dict[str, Any]]) -> None:
        self.tasks = tasks

    def find_project(self, title: str) -> int:
        return 1

    def export(self, project: int) -> list[dict[str, Any]]:
        return self.tasks

    def users(self) -> dict[int, str]:
        return {1: "reviewer-one@example.com", 2: "reviewer-two@example.com"}

    def update_task_data(self, task_id: int, data: dict[str, Any]) -> None:
        """What pull tells the annotators of a task (a notice about a review not counted)."""
        for t in self.tasks:
            if t["id"] == task_id:
                t["data"] = data


def task(segment: str, source_sha: str, draft: str, *annotations: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": 1000 + sum(a["id"] for a in annotations),
        "data": {"segment": segment, "source_sha": source_sha, "draft": draft},
        "annotations": list(annotations),
    }

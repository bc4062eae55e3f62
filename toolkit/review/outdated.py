"""Review tasks whose English changed after push (or whose segment is gone): push and pull
(toolkit/review/push.py, toolkit/review/pull.py) mark them in Label Studio, a notice and out of
the label stream, and pull never counts their reviews."""

from __future__ import annotations

from typing import Any

from toolkit.catalog.templates import Segment
from toolkit.review.labelstudio import Client, LiveTask
from toolkit.review.notices import outdated_notice

OUTDATED = "outdated"
"""The status column of a task whose English changed after push (or whose segment is gone)."""


def is_outdated(data: dict[str, Any], segments: dict[str, Segment]) -> bool:
    """Whether a task was made for an English source that is no longer the segment's (or for a
    segment the catalog no longer has)."""
    segment = segments.get(str(data.get("segment")))
    return segment is None or data.get("source_sha") != segment.source_sha


def mark_outdated(client: Client, segments: dict[str, Segment], tasks: list[LiveTask]) -> int:
    """Mark every outdated task of a project: a notice with the English as it reads now (and the
    task made for it, if there is one), the status column `outdated`, and out of the label
    stream. Reviews of such a task are never counted (pull ignores them); this keeps annotators
    from spending work on it. Returns the number of tasks marked now (already marked: none)."""
    current = {str(t.data.get("segment")): t.id for t in tasks if not is_outdated(t.data, segments)}
    marked = 0
    for task in tasks:
        if not is_outdated(task.data, segments):
            continue
        sid = str(task.data.get("segment"))
        segment = segments.get(sid)
        notice = outdated_notice(segment.source if segment else None, current.get(sid))
        data = {**task.data, "notice": notice, "status": OUTDATED}
        if data != task.data or task.in_label_stream:
            client.withdraw_task(task.id, data)
            task.data = data
            marked += 1
    return marked

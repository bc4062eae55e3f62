"""`polyprobe review pull`: verdicts from Label Studio into the store, the only path to
`approved`.

Pull is idempotent: each annotation version (id and update time) is ingested once, as a
`review` event in the record's history; a changed annotation is a new event, a deleted one a
`review-withdrawn` event. The review policy then decides the record's status from each
reviewer's latest verdict: an annotation counts for its owner, by the owner's latest version,
so a version someone saved over another reviewer's annotation is recorded but counts for no one
and the owner's verdict stands (toolkit/review/history.py). Edits that break the template's
slots are recorded and flagged, never applied. Reviews of tasks whose English changed since
push are ignored and those tasks marked outdated, and pull keeps each task's notice and status
column up to date."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment
from toolkit.render.gate import gate_one
from toolkit.review.annotations import maker_of, owner_of, reading_of
from toolkit.review.history import (
    FLAGGED,
    INCONSISTENT,
    SAVED_OVER,
    annotation_versions,
    current_reviews,
    latest_verdicts,
    withdrawn_annotations,
)
from toolkit.review.labelstudio import Client, parse_result, project_title
from toolkit.review.notices import task_notice
from toolkit.review.outdated import is_outdated, mark_outdated
from toolkit.review.policy import Decision, ReviewPolicy, decide
from toolkit.store.files import load_store_strict, store_lock
from toolkit.store.model import Event, ReviewRef, Translation, utc_now
from toolkit.store.rules import STATUS_RANK, InvalidTransition, check_transition, in_adjudication, is_current


@dataclass
class PullReport:
    """What one pull did: events recorded, records whose status changed, reviews flagged, not
    counted or left waiting, tasks updated in Label Studio, decisions refused."""

    events: int = 0
    changed: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)
    saved_over: list[str] = field(default_factory=list)
    """Segments with a version someone saved over another reviewer's annotation (not counted)."""
    waiting: list[str] = field(default_factory=list)
    """Records the policy was not applied to because a reviewer's own verdict was overwritten
    before it was read (one line each, naming whom it waits for)."""
    outdated: int = 0
    """Annotations on tasks made for an English source that has changed since (ignored)."""
    outdated_tasks: int = 0
    """Outdated tasks marked now in Label Studio (a notice, and out of the label stream)."""
    notices: int = 0
    """Tasks whose notice to the annotators was set, changed or cleared."""
    statuses: int = 0
    """Tasks whose status column was brought up to the store's status."""
    refused: list[str] = field(default_factory=list)
    """Decisions of the policy not applied, one line each naming locale, suite, segment and
    annotation(s), and why (a status the record may not move to, a text the gate refuses)."""


def pull(
    client: Client, catalog: Catalog, policy: ReviewPolicy, locale: str, suites: list[str]
) -> PullReport:
    """Pull the verdicts of one locale's review projects into the store (see the module docstring).
    Each suite's store is saved under its lock before any task in Label Studio is updated, so a
    failure there loses nothing."""
    catalog.check_locale(locale)
    report = PullReport()
    users: dict[int, str] | None = None
    for suite_id in suites:
        suite = catalog.suite(suite_id)
        project = client.find_project(project_title(locale, suite_id))
        if project is None:
            continue
        exported = client.export(project)
        if users is None:
            users = client.users()
        live: dict[str, set[str]] = {}  # segment -> annotations that exist, on any of its tasks
        for task in exported:
            live.setdefault(str(task.get("data", {}).get("segment")), set()).update(
                str(a["id"]) for a in task.get("annotations", []) if not a.get("was_cancelled")
            )
        changes: list[tuple[int, dict[str, Any]]] = []
        with store_lock(catalog.project, locale, suite_id):
            store = load_store_strict(catalog.project, locale, suite_id)  # refuses a damaged store
            dirty = False
            for task in exported:
                data = task.get("data", {})
                sid, sha = data.get("segment"), data.get("source_sha")
                segment = suite.segments.get(str(sid))
                record = store.records.get(str(sid))
                if segment is None or record is None:
                    continue
                if sha != segment.source_sha or not is_current(record, segment.source_sha):
                    report.outdated += sum(
                        1 for a in task.get("annotations", []) if not a.get("was_cancelled")
                    )
                    continue
                updated = _ingest(
                    catalog, suite_id, locale, project, task, record, segment, users, policy, report, live
                )
                if updated is not record:
                    store.records[segment.id] = updated
                    dirty = True
                owners = {str(a["id"]): owner_of(a, users) for a in task.get("annotations", [])}
                shown = {**data, "notice": task_notice(updated, project, owners), "status": updated.status}
                if shown != data:
                    report.notices += shown["notice"] != data.get("notice", "")
                    report.statuses += shown["status"] != data.get("status")
                    changes.append((int(task["id"]), shown))
            if dirty:
                store.save()
        for task_id, shown in changes:  # after the store is saved: a failure here loses nothing
            client.update_task_data(task_id, shown)
        if any(is_outdated(t.get("data", {}), suite.segments) for t in exported):
            # the export has no overlap: the task list says which are still in the label stream
            report.outdated_tasks += mark_outdated(client, suite.segments, client.tasks(project))
    return report


def _ingest(
    catalog: Catalog,
    suite_id: str,
    locale: str,
    project: int,
    task: dict[str, Any],
    record: Translation,
    segment: Segment,
    users: dict[int, str],
    policy: ReviewPolicy,
    report: PullReport,
    live: dict[str, set[str]],
) -> Translation:
    """The record with the task's new review events in its history (versions not pulled before,
    annotations deleted since) and the policy's decision applied, unless it must wait for a
    reviewer whose verdict was overwritten before it was read."""
    refs = [
        parsed for e in record.history if (parsed := ReviewRef.parse(e.ref)) and parsed.project == project
    ]
    pulled_before = {ref.annotation for ref in refs}
    new_events = _new_versions(catalog, suite_id, locale, project, task, record, segment, users, report, refs)
    new_events += _withdrawals(record, project, pulled_before - live.get(segment.id, set()))
    if not new_events:
        return record
    history = (*record.history, *new_events)
    report.events += len(new_events)
    updated = record.model_copy(update={"history": history})
    annotations = sorted(
        {parsed.annotation for e in new_events if (parsed := ReviewRef.parse(e.ref))}, key=_id_order
    )
    where = f"{locale}/{suite_id}/{segment.id} (annotation {', '.join(annotations)})"
    owners = {str(a["id"]): owner_of(a, users) for a in task.get("annotations", [])}
    unread = _unread_owners(updated, project, owners)
    if unread:  # a verdict nobody has read may be the one that decides: wait for it
        report.waiting.append(f"{where}: waiting for {', '.join(unread)} to give their verdict again")
        return updated
    decision = decide(latest_verdicts(updated, project), policy)

    def check(text: str) -> list[str]:
        return gate_one(catalog, suite_id, locale, segment.id, text)

    return _apply(updated, decision, report, check, where)


def _new_versions(
    catalog: Catalog,
    suite_id: str,
    locale: str,
    project: int,
    task: dict[str, Any],
    record: Translation,
    segment: Segment,
    users: dict[int, str],
    report: PullReport,
    refs: list[ReviewRef],
) -> list[Event]:
    """A `review` event for each annotation version of the task not pulled before (``refs``: the
    versions the history has), oldest first: whose it is, what text it ends with, and why it is
    not counted when it is not (inconsistent, saved over another's, an edit the gate refuses)."""
    seen_refs = {str(ref) for ref in refs}
    pulled_before = {ref.annotation for ref in refs}
    draft_text = str(task.get("data", {}).get("draft", record.text)).strip()
    new_events: list[Event] = []
    for ann in sorted(task.get("annotations", []), key=lambda a: (str(a.get("updated_at")), int(a["id"]))):
        if ann.get("was_cancelled"):
            continue
        ref = str(ReviewRef(project, str(int(ann["id"])), str(ann.get("updated_at"))))
        if ref in seen_refs:
            continue
        verdict, edited, tags, comment = parse_result(ann.get("result", []))
        text, note = reading_of(verdict, edited, draft_text)
        maker = maker_of(ann, users, later_version=str(ann["id"]) in pulled_before)
        owner = owner_of(ann, users)
        if maker != owner:  # the owner's verdict stands; this version counts for no one
            note = SAVED_OVER + f"{maker} saved it over {owner}'s annotation"
            report.saved_over.append(segment.id)
        if note is None and text is not None and not _gated(record, text):
            broken = gate_one(catalog, suite_id, locale, segment.id, text)
            if broken:
                note = FLAGGED + "; ".join(broken)
                report.flagged.append(segment.id)
        if note is not None and note.startswith(INCONSISTENT):
            report.inconsistent.append(segment.id)
        new_events.append(
            Event(
                at=_timestamp(ann.get("updated_at")),
                event="review",
                by=maker,
                verdict=verdict,
                text=text,
                source_sha=segment.source_sha,
                tags=tags or None,
                comment=comment,
                ref=ref,
                note=note,
            )
        )
    return new_events


def _withdrawals(record: Translation, project: int, gone: set[str]) -> list[Event]:
    """A `review-withdrawn` event for each annotation pulled before and deleted in Label Studio
    since (``gone``), unless the history already says so."""
    return [
        Event(
            at=utc_now(),
            event="review-withdrawn",
            by="label-studio",
            ref=str(ReviewRef(project, ann_id, "withdrawn")),
            note="annotation deleted in Label Studio",
        )
        for ann_id in sorted(gone - withdrawn_annotations(record))
    ]


def _unread_owners(record: Translation, project: int, owners: dict[str, str]) -> list[str]:
    """Reviewers of a task (``owners``: its annotations and whose each is) whose own verdict was
    overwritten before any pull read it: someone saved over their annotation, and no version of
    theirs is in the history."""
    counted = current_reviews(record, project)
    return sorted(
        {
            owners[annotation]
            for annotation in annotation_versions(record, project)
            if annotation in owners and annotation not in counted
        }
    )


def _id_order(annotation: str) -> tuple[int, str]:
    return (int(annotation), "") if annotation.isdigit() else (0, annotation)


def _gated(record: Translation, text: str) -> bool:
    """Whether ``text`` already passed the gate: it is the text of a record that is a usable
    translation (machine, draft, reviewed or approved: stored through the gate). A needs_edit
    or rejected record's text may be a raw machine answer the gate refused, and a stale one's
    was made for another English source: accepting such a text gates it first."""
    return text == record.text and STATUS_RANK.get(record.status, -1) >= 1


def _timestamp(value: Any) -> str:
    text = str(value or utc_now())
    return text.replace("+00:00", "Z") if text.endswith("+00:00") else text


def _apply(
    record: Translation,
    decision: Decision,
    report: PullReport,
    check: Callable[[str], list[str]],
    where: str,
) -> Translation:
    """The record after the policy's decision. A decision that cannot be applied (a status the
    record may not move to, a text the gate refuses) leaves the record as it is and is reported
    in ``report.refused``: one record never aborts the pull of the others."""
    last_policy = next((e for e in reversed(record.history) if e.event == "policy"), None)
    if decision.status is None:
        if decision.adjudication and (last_policy is None or last_policy.note != decision.reason):
            return record.with_event(
                Event(
                    at=utc_now(), event="policy", by="review-policy", note=decision.reason, adjudication=True
                )
            )
        return record
    text = decision.text if decision.text is not None else record.text
    if decision.status == record.status and text == record.text:
        if in_adjudication(record):
            return record.with_event(
                Event(
                    at=utc_now(),
                    event="policy",
                    by="review-policy",
                    status=record.status,
                    note=decision.reason,
                )
            )
        return record
    try:
        check_transition(record.status, decision.status, record.segment)
    except InvalidTransition as exc:
        report.refused.append(f"{where}: not applied: {exc}")
        return record
    if decision.status in ("reviewed", "approved") and not _gated(record, text):
        broken = check(text)  # never a current translation the gate has not seen
        if broken:
            report.flagged.append(record.segment)
            report.refused.append(f"{where}: not applied, the text breaks the template: {'; '.join(broken)}")
            return record
    origin = "human" if text != record.text else record.origin
    report.changed.append(record.segment)
    event = Event(
        at=utc_now(),
        event="policy",
        by="review-policy",
        status=decision.status,
        text=text,
        note=decision.reason,
    )
    return record.with_event(event, status=decision.status, text=text, origin=origin)

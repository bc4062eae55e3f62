"""Human review in Label Studio: push review batches, pull verdicts back into the store, and
report where review stands and how far reviewers agree.

Push is idempotent: a segment already in its project with the same source hash is not pushed
again (a stale one, with a new source hash, is a new task). Pull is idempotent: each annotation
version (id and update time) is ingested once, as a `review` event in the record's history; a
changed annotation is a new event, a deleted one a `review-withdrawn` event. The review policy
then decides the record's status from each reviewer's latest verdict; edits that break the
template's slots are recorded and flagged, never applied. This is the only path to `approved`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from toolkit.agreement import competing_edits_chrf, krippendorff_alpha_nominal
from toolkit.catalog import Catalog
from toolkit.gate import gate_one
from toolkit.grammar import RenderFailure
from toolkit.labelstudio import GUIDELINES, Client, label_config, parse_result, project_title
from toolkit.render import Job
from toolkit.review_policy import Decision, ReviewPolicy, Verdict, decide
from toolkit.store import (
    STATUS_RANK,
    Event,
    Translation,
    check_transition,
    load_store_strict,
    store_lock,
    utc_now,
)
from toolkit.suites import kind_of
from toolkit.suites.base import Filler, fillers
from toolkit.templates import Segment

REF = "labelstudio"
EXAMPLE_GROUPS = 4


class Examples:
    """Renders a translation for the review task: with a few groups (different attributes and
    standings first) and its sibling variants with the first of them, so agreement errors show.
    The suite's groups and context are prepared once per push, not once per segment."""

    def __init__(self, catalog: Catalog, suite_id: str, locale: str) -> None:
        self.suite = catalog.suite(suite_id)
        kind = kind_of(suite_id)
        self.grouped = kind.grouped
        job = Job(catalog, self.suite, locale, "draft")
        self.fillers = fillers(job) if self.grouped else []
        self.context = kind.context(job) if self.grouped else {}
        self.grammar = catalog.grammar(locale)
        self.records = catalog.store(suite_id, locale).records

    def _render(self, text: str, filler: Filler) -> str:
        try:
            return self.grammar.render(text, {**self.context, "group": filler.terms})
        except RenderFailure as exc:
            return f"(does not render: {exc})"

    def __call__(self, segment: Segment, text: str) -> list[str]:
        if not self.grouped:
            return []
        usable = [
            f
            for f in self.fillers
            if f.group.attribute in segment.template.attributes
            and (f.group.variants is None or segment.variant in f.group.variants)
        ]
        picked: list[Filler] = []
        seen: set[tuple[str, str]] = set()
        for f in usable:
            if (f.group.attribute, f.group.standing) not in seen:
                seen.add((f.group.attribute, f.group.standing))
                picked.append(f)
        picked = (picked + [f for f in usable if f not in picked])[:EXAMPLE_GROUPS]
        lines = [f"[{segment.variant or '-'} · {f.group.name}] {self._render(text, f)}" for f in picked]
        if picked:
            for sibling in self.suite.segments.values():
                rec = self.records.get(sibling.id)
                if (
                    sibling.template.id == segment.template.id
                    and sibling.id != segment.id
                    and rec is not None
                ):
                    lines.append(
                        f"[{sibling.variant} · {picked[0].group.name}] {self._render(rec.text, picked[0])}"
                    )
        return lines


@dataclass
class PushReport:
    project: int
    pushed: list[str] = field(default_factory=list)
    already: int = 0


def push(
    client: Client, catalog: Catalog, locale: str, suite_id: str, statuses: list[str], limit: int | None
) -> PushReport:
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    loc = catalog.locales[locale]
    project = client.project(project_title(locale, suite_id), label_config(loc.name, loc.direction == "rtl"))
    existing = {(t["data"].get("segment"), t["data"].get("source_sha")) for t in client.tasks(project)}
    report = PushReport(project=project)
    records = catalog.store(suite_id, locale).records
    render_examples = Examples(catalog, suite_id, locale)
    tasks: list[dict[str, str]] = []
    for segment in suite.segments.values():
        rec = records.get(segment.id)
        if rec is None or rec.status not in statuses or rec.source_sha != segment.source_sha:
            continue
        if (segment.id, segment.source_sha) in existing:
            report.already += 1
            continue
        if limit is not None and len(tasks) >= limit:
            break
        tasks.append(
            {
                "segment": segment.id,
                "source_sha": segment.source_sha,
                "suite": suite_id,
                "locale": locale,
                "source": segment.source,
                "draft": rec.text,
                "status": rec.status,
                "origin": rec.origin,
                "examples": "\n".join(render_examples(segment, rec.text)) or "(no examples)",
                "guidelines": f"What to check, when to edit and when to reject: {GUIDELINES} in the polyprobe repository.",
            }
        )
    if tasks:
        client.import_tasks(project, tasks)
    report.pushed = [t["segment"] for t in tasks]
    return report


@dataclass
class PullReport:
    events: int = 0
    changed: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    outdated: int = 0


def _ref(project: int, annotation: int, updated: str) -> str:
    return f"{REF}:{project}:{annotation}:{updated}"


def pull(
    client: Client, catalog: Catalog, policy: ReviewPolicy, locale: str, suites: list[str]
) -> PullReport:
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
                if sha != segment.source_sha or record.source_sha != segment.source_sha:
                    report.outdated += sum(
                        1 for a in task.get("annotations", []) if not a.get("was_cancelled")
                    )
                    continue
                updated = _ingest(
                    catalog, suite_id, locale, project, task, record, segment, users, policy, report
                )
                if updated is not record:
                    store.records[segment.id] = updated
                    dirty = True
            if dirty:
                store.save()
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
) -> Translation:
    prefix = f"{REF}:{project}:"
    seen_refs = {e.ref for e in record.history if e.ref and e.ref.startswith(prefix)}
    live: dict[str, str] = {}
    draft_text = str(task.get("data", {}).get("draft", record.text))
    new_events: list[Event] = []
    for ann in sorted(task.get("annotations", []), key=lambda a: (str(a.get("updated_at")), int(a["id"]))):
        if ann.get("was_cancelled"):
            continue
        ref = _ref(project, int(ann["id"]), str(ann.get("updated_at")))
        live[str(ann["id"])] = ref
        if ref in seen_refs:
            continue
        verdict, edited, tags, comment = parse_result(ann.get("result", []))
        annotator = users.get(
            int(ann.get("completed_by") or 0), f"label-studio-user-{ann.get('completed_by')}"
        )
        text = None if verdict == "reject" else (edited if verdict == "edited" else draft_text)
        note = None
        if verdict not in ("accept", "edited", "reject"):
            note = "no verdict given: not counted"
        elif verdict == "edited" and not edited:
            note = "verdict 'edited' without an edited text: not counted"
        elif text is not None and text != record.text:
            broken = gate_one(catalog, suite_id, locale, segment.id, text)
            if broken:
                note = "edit not applied, it breaks the template: " + "; ".join(broken)
                report.flagged.append(segment.id)
        new_events.append(
            Event(
                at=_timestamp(ann.get("updated_at")),
                event="review",
                by=annotator,
                verdict=verdict,
                text=text,
                tags=tags or None,
                comment=comment,
                ref=ref,
                note=note,
            )
        )
    already_withdrawn = {
        e.ref.split(":")[2] for e in record.history if e.event == "review-withdrawn" and e.ref
    }
    for ann_id in sorted({ref.split(":")[2] for ref in seen_refs} - set(live) - already_withdrawn):
        new_events.append(
            Event(
                at=utc_now(),
                event="review-withdrawn",
                by="label-studio",
                ref=f"{prefix}{ann_id}:withdrawn",
                note="annotation deleted in Label Studio",
            )
        )
    if not new_events:
        return record
    history = (*record.history, *new_events)
    report.events += len(new_events)
    decision = decide(_latest_verdicts(history, project), policy)
    updated = record.model_copy(update={"history": history})
    return _apply(updated, decision, report)


def _timestamp(value: Any) -> str:
    text = str(value or utc_now())
    return text.replace("+00:00", "Z") if text.endswith("+00:00") else text


def _latest_verdicts(history: tuple[Event, ...], project: int) -> list[Verdict]:
    """Each reviewer's latest counted review whose annotation still exists."""
    prefix = f"{REF}:{project}:"
    withdrawn = {e.ref.split(":")[2] for e in history if e.event == "review-withdrawn" and e.ref}
    latest: dict[str, Verdict] = {}
    for e in history:
        if e.event != "review" or not e.ref or not e.ref.startswith(prefix) or e.note:
            continue
        if e.ref.split(":")[2] in withdrawn:
            continue
        latest[e.by] = Verdict(e.by, e.verdict or "", e.text)
    return list(latest.values())


def _apply(record: Translation, decision: Decision, report: PullReport) -> Translation:
    last_policy = next((e for e in reversed(record.history) if e.event == "policy"), None)
    if decision.status is None:
        if decision.adjudication and (last_policy is None or last_policy.note != decision.reason):
            return record.with_event(
                Event(at=utc_now(), event="policy", by="review-policy", note=decision.reason)
            )
        return record
    text = decision.text if decision.text is not None else record.text
    if decision.status == record.status and text == record.text:
        if last_policy is not None and (last_policy.note or "").startswith("adjudication"):
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
    check_transition(record.status, decision.status, record.segment)
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


@dataclass
class ReviewStatus:
    locale: str
    suite: str
    counts: dict[str, int]
    alpha: float | None
    edits_chrf: float | None
    reviewed_by_two: int


def review_status(catalog: Catalog, locale: str, suite_id: str) -> ReviewStatus:
    suite = catalog.suite(suite_id)
    records = catalog.store(suite_id, locale).records
    counts: Counter[str] = Counter()
    units: list[list[str]] = []
    edits: list[list[str]] = []
    for segment in suite.segments.values():
        rec = records.get(segment.id)
        if rec is None:
            counts["untranslated"] += 1
            continue
        if rec.source_sha != segment.source_sha or rec.status == "stale":
            counts["stale"] += 1
            continue
        last_policy = next((e for e in reversed(rec.history) if e.event == "policy"), None)
        if (
            last_policy is not None
            and last_policy.status is None
            and (last_policy.note or "").startswith("adjudication")
        ):
            counts["in adjudication"] += 1
        elif STATUS_RANK.get(rec.status, 0) == 1:
            counts["pending"] += 1
        else:
            counts[rec.status] += 1
        projects = {
            e.ref.split(":")[1]
            for e in rec.history
            if e.ref and e.ref.startswith(f"{REF}:") and e.event == "review"
        }
        for project in projects:
            verdicts = _latest_verdicts(rec.history, int(project))
            if len(verdicts) >= 2:
                units.append([v.verdict for v in verdicts])
                texts = [v.text for v in verdicts if v.verdict == "edited" and v.text]
                if len(set(texts)) >= 2:
                    edits.append(texts)
    order = ("pending", "reviewed", "approved", "rejected", "in adjudication", "stale", "untranslated")
    return ReviewStatus(
        locale=locale,
        suite=suite_id,
        counts={k: counts.get(k, 0) for k in order},
        alpha=krippendorff_alpha_nominal(units),
        edits_chrf=competing_edits_chrf(edits),
        reviewed_by_two=len(units),
    )

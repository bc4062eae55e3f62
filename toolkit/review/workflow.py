"""Human review in Label Studio: push review batches, pull verdicts back into the store, and
report where review stands and how far reviewers agree.

Push is idempotent: a segment already in its project with the same source hash is not pushed
again (a stale one, with a new source hash, is a new task). Pull is idempotent: each annotation
version (id and update time) is ingested once, as a `review` event in the record's history; a
changed annotation is a new event, a deleted one a `review-withdrawn` event. The review policy
then decides the record's status from each reviewer's latest verdict: an annotation counts for
its owner, by the owner's latest version, so a version someone saved over another reviewer's
annotation is recorded but counts for no one and the owner's verdict stands. Edits that break
the template's slots are recorded and flagged, never applied. This is the only path to
`approved`. Tasks whose English changed since push are marked outdated in Label Studio (a
notice, and out of the label stream), and pull keeps each task's status column up to date."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from toolkit.catalog.grammar import RenderFailure
from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment
from toolkit.core.errors import InputError
from toolkit.render.gate import gate_one
from toolkit.render.job import Job
from toolkit.render.suites import kind_of
from toolkit.render.suites.base import Filler, fillers
from toolkit.review.agreement import krippendorff_alpha_nominal, text_agreement
from toolkit.review.labelstudio import (
    INTERFACE_VERSION,
    Client,
    LiveTask,
    ProjectSetup,
    label_config,
    parse_result,
    project_title,
)
from toolkit.review.notices import Uncounted, in_words, outdated_notice, review_notice
from toolkit.review.policy import Decision, ReviewPolicy, Verdict, decide
from toolkit.review.task import (
    HIDDEN_COLUMNS,
    VIEW_TITLE,
    Twin,
    about,
    example_line,
    guidelines_markdown,
    instructions_html,
    task_data,
)
from toolkit.store.files import load_store_strict, store_lock
from toolkit.store.model import Event, ReviewRef, Translation, utc_now
from toolkit.store.rules import (
    STATUS_RANK,
    InvalidTransition,
    check_transition,
    in_adjudication,
    is_current,
    needs_rewording,
    state,
)

EXAMPLE_GROUPS = 4
OUTDATED = "outdated"
"""The status column of a task whose English changed after push (or whose segment is gone)."""


class Examples:
    """Renders a translation for the review task: with a few groups (different attributes and
    standings first) and its sibling variants with the first of them, so agreement errors show.
    The suite's groups and context are prepared once per push, not once per segment."""

    def __init__(self, catalog: Catalog, suite_id: str, locale: str) -> None:
        self.suite = catalog.suite(suite_id)
        kind = kind_of(suite_id)
        self.grouped = kind.grouped
        job = Job(catalog, self.suite, locale, "draft", kind)
        self.fillers = fillers(job) if self.grouped else []
        self.context = kind.context(job) if self.grouped else {}
        self.grammar = catalog.grammar(locale)
        self.records = catalog.store(suite_id, locale).records
        self.rtl = catalog.locales[locale].direction == "rtl"
        self.slots = list(self.suite.spec.slots)
        self.source_grammar = catalog.grammar(catalog.locales.source.code)

    def about(self, segment: Segment) -> str:
        """The segment's variant, label, slots (only those its source uses) and twin explained."""
        used = self.source_grammar.analyse(segment.source).variables
        marker = self.context.get("completion")
        return about(
            segment,
            [s for s in self.slots if s in used],
            str(marker) if marker else None,
            self._twin(segment),
        )

    def _twin(self, segment: Segment) -> Twin | None:
        """The other sentence of the segment's pair in the same variant (sos), if it has one."""
        pair = segment.template.pair
        if pair is None:
            return None
        for other in self.suite.segments.values():
            if (
                other.template.pair == pair
                and other.template.id != segment.template.id
                and other.variant == segment.variant
            ):
                rec = self.records.get(other.id)
                usable = rec is not None and is_current(rec, other.source_sha)
                return Twin(other.template.label or "", other.source, rec.text if rec and usable else None)
        return None

    def _line(self, variant: str, filler: Filler, text: str) -> str:
        return example_line(
            variant, filler.group.name, filler.group.bare, self._render(text, filler), self.rtl
        )

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
        lines = [self._line(segment.variant or "-", f, text) for f in picked]
        # the other variants, with a group that has a word and fits every variant
        anchor = next((f for f in picked if not f.group.bare and f.group.variants is None), None)
        if anchor is not None:
            for sibling in self.suite.segments.values():
                rec = self.records.get(sibling.id)
                if (
                    sibling.template.id == segment.template.id
                    and sibling.id != segment.id
                    and rec is not None
                ):
                    lines.append(self._line(sibling.variant or "-", anchor, rec.text))
        return lines


@dataclass
class PushReport:
    project: int
    pushed: list[str] = field(default_factory=list)
    already: int = 0
    settings_changed: list[str] = field(default_factory=list)
    """Project settings brought up to date (all of them for a new project)."""
    reviewers: int = 0
    upgraded: int = 0
    """Tasks of an earlier interface whose data was brought up to the current one."""
    outdated: int = 0
    """Tasks made for an English source that changed since, marked now (a notice, and out of
    the label stream)."""


def reviewers_needed(policy: ReviewPolicy) -> int:
    """Annotations per task the label stream must collect so the policy can reach any decision."""
    return max(policy.reviewed_after, policy.approved_after, policy.rejected_after)


def project_setup(catalog: Catalog, locale: str, policy: ReviewPolicy) -> ProjectSetup:
    loc = catalog.locales[locale]
    guidelines = guidelines_markdown(catalog.project)
    return ProjectSetup(
        label_config=label_config(loc.name, loc.direction == "rtl", guidelines),
        instructions=instructions_html(guidelines),
        reviewers=reviewers_needed(policy),
    )


def push(
    client: Client,
    catalog: Catalog,
    policy: ReviewPolicy,
    locale: str,
    suite_id: str,
    statuses: list[str],
    limit: int | None,
) -> PushReport:
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    if catalog.locales[locale].published_only:
        raise InputError(f"{locale} is a published-only locale: it has no translations to review")
    project, changed = client.project(project_title(locale, suite_id), project_setup(catalog, locale, policy))
    report = PushReport(project=project, settings_changed=changed, reviewers=reviewers_needed(policy))
    client.ensure_view(project, VIEW_TITLE, HIDDEN_COLUMNS)
    present = client.tasks(project)
    existing = {(t.data.get("segment"), t.data.get("source_sha")) for t in present}
    records = catalog.store(suite_id, locale).records
    examples = Examples(catalog, suite_id, locale)
    for task in present:
        upgraded = _upgrade(task.data, suite.segments.get(str(task.data.get("segment"))), examples)
        if upgraded is not None:
            client.update_task_data(task.id, upgraded)
            task.data = upgraded
            report.upgraded += 1
    tasks: list[dict[str, Any]] = []
    # machine translations that only need rewording (a slot the suite cannot use where it is) first
    ordered = sorted(suite.segments.values(), key=lambda seg: not needs_rewording(records.get(seg.id)))
    for segment in ordered:
        rec = records.get(segment.id)
        if rec is None or state(rec, segment.source_sha) not in statuses:
            continue
        if (segment.id, segment.source_sha) in existing:
            report.already += 1
            continue
        if limit is not None and len(tasks) >= limit:
            break
        tasks.append(
            task_data(
                segment=segment.id,
                source_sha=segment.source_sha,
                english=segment.source,
                draft=rec.text,
                status=rec.status,
                origin=rec.origin,
                examples=_needs_edit_reason(rec) or "\n".join(examples(segment, rec.text)) or "(no examples)",
                about_text=examples.about(segment),
                suite=suite_id,
                locale=locale,
            )
        )
    if tasks:
        client.import_tasks(project, tasks)
    report.pushed = [str(t["segment"]) for t in tasks]
    if any(_is_outdated(t.data, suite.segments) for t in present):
        report.outdated = mark_outdated(client, suite.segments, client.tasks(project) if tasks else present)
    return report


def _is_outdated(data: dict[str, Any], segments: dict[str, Segment]) -> bool:
    """Whether a task was made for an English source that is no longer the segment's (or for a
    segment the catalog no longer has)."""
    segment = segments.get(str(data.get("segment")))
    return segment is None or data.get("source_sha") != segment.source_sha


def mark_outdated(client: Client, segments: dict[str, Segment], tasks: list[LiveTask]) -> int:
    """Mark every outdated task of a project: a notice with the English as it reads now (and the
    task made for it, if there is one), the status column `outdated`, and out of the label
    stream. Reviews of such a task are never counted (pull ignores them); this keeps annotators
    from spending work on it. Returns the number of tasks marked now (already marked: none)."""
    current = {str(t.data.get("segment")): t.id for t in tasks if not _is_outdated(t.data, segments)}
    marked = 0
    for task in tasks:
        if not _is_outdated(task.data, segments):
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


def _upgrade(data: dict[str, Any], segment: Segment | None, examples: Examples) -> dict[str, Any] | None:
    """The data of a task pushed with an earlier interface, in the current one: the same segment,
    source hash and draft (what its annotations were made on), with the English source under a
    key Label Studio leaves alone, and the examples and explanations made again (kept as they
    were when the segment is gone from the catalog). None when the task is current."""
    if int(data.get("interface") or 1) >= INTERFACE_VERSION:
        return None
    draft = str(data.get("draft", ""))
    english = str(data.get("english") or data.get("source") or "")
    shown, about_text = str(data.get("examples", "")), ""
    if segment is not None:
        shown = "\n".join(examples(segment, draft)) or "(no examples)"
        about_text = examples.about(segment) if english == segment.source else ""
    return task_data(
        segment=str(data.get("segment", "")),
        source_sha=str(data.get("source_sha", "")),
        english=english,
        draft=draft,
        status=str(data.get("status", "")),
        origin=str(data.get("origin", "")),
        examples=shown,
        about_text=about_text,
        suite=str(data.get("suite", "")),
        locale=str(data.get("locale", "")),
        notice=str(data.get("notice", "")),
    )


def _needs_edit_reason(rec: Translation) -> str:
    """For a machine translation that needs a human edit: why, in place of the examples (its raw
    text renders nothing)."""
    if rec.status != "needs_edit":
        return ""
    note = next((e.note for e in reversed(rec.history) if e.note), None) or "no reason recorded"
    return f"Needs a human edit (machine translation could not be used as it is): {note}"


@dataclass
class PullReport:
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


# Notes on review events that are recorded but not counted (review status counts them by kind).
NOT_COUNTED = "not counted"
INCONSISTENT = "inconsistent, not counted: "
FLAGGED = "edit not applied, it breaks the template: "
SAVED_OVER = "saved over another reviewer's annotation, not counted: "
CREATION_WINDOW_S = 1.0
"""An annotation version saved within this time of the annotation's creation is its creation."""


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
                owners = {str(a["id"]): _owner(a, users) for a in task.get("annotations", [])}
                shown = {**data, "notice": _notice(updated, project, owners), "status": updated.status}
                if shown != data:
                    report.notices += shown["notice"] != data.get("notice", "")
                    report.statuses += shown["status"] != data.get("status")
                    changes.append((int(task["id"]), shown))
            if dirty:
                store.save()
        for task_id, shown in changes:  # after the store is saved: a failure here loses nothing
            client.update_task_data(task_id, shown)
        if any(_is_outdated(t.get("data", {}), suite.segments) for t in exported):
            # the export has no overlap: the task list says which are still in the label stream
            report.outdated_tasks += mark_outdated(client, suite.segments, client.tasks(project))
    return report


def _owner(ann: dict[str, Any], users: dict[int, str]) -> str:
    """Whose annotation this is: the person on its tab in Label Studio (`completed_by`)."""
    return _person(_user_id(ann.get("completed_by")), users)


def _person(user: int | None, users: dict[int, str]) -> str:
    if user is None:
        return "label-studio-user-unknown"
    return users.get(user, f"label-studio-user-{user}")


def _maker(ann: dict[str, Any], users: dict[int, str], *, later_version: bool) -> str:
    """Who made this version of the annotation. Label Studio records who saved it last
    (`updated_by`) and who it belongs to (`completed_by`): a later version is the saver's (any
    member can Update someone else's annotation, e.g. after opening the task from the task list,
    where Label Studio selects the latest annotation), the creation is the owner's (an
    annotation created through the API on someone's behalf is theirs). A version is later when an earlier
    one of the same annotation was pulled before, or when it was saved well after its creation."""
    creator, saver = _user_id(ann.get("completed_by")), _user_id(ann.get("updated_by"))
    who = creator
    if saver is not None and (later_version or not _is_creation(ann)):
        who = saver
    return _person(who, users)


def _user_id(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("id") or value.get("user_id")
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else None


def _is_creation(ann: dict[str, Any]) -> bool:
    try:
        created = datetime.fromisoformat(str(ann.get("created_at")))
        updated = datetime.fromisoformat(str(ann.get("updated_at")))
    except ValueError:
        return False
    return abs((updated - created).total_seconds()) < CREATION_WINDOW_S


def _reading(verdict: str | None, edited: str | None, draft: str) -> tuple[str | None, str | None]:
    """(the text this review ends with, why it is not counted) from a verdict and the text box.
    'edited' must change the draft and 'accept' must not: Label Studio's autosaved drafts can
    keep the ticked verdict and lose the typed text, and such a review must not count as
    agreeing with the draft (or drop the change without a word)."""
    if verdict == "reject":
        return None, None
    if verdict == "accept":
        if edited is not None and edited != draft:
            return (
                edited,
                INCONSISTENT + "verdict 'accept' but the text was changed (choose 'edited' to keep it)",
            )
        return draft, None
    if verdict == "edited":
        if not edited:
            return None, INCONSISTENT + "verdict 'edited' but the translation box is empty"
        if edited == draft:
            return edited, INCONSISTENT + "verdict 'edited' but the text is the draft unchanged"
        return edited, None
    return edited, f"no verdict given: {NOT_COUNTED}"


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
    refs = [
        parsed for e in record.history if (parsed := ReviewRef.parse(e.ref)) and parsed.project == project
    ]
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
        text, note = _reading(verdict, edited, draft_text)
        maker = _maker(ann, users, later_version=str(ann["id"]) in pulled_before)
        owner = _owner(ann, users)
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
    already_withdrawn = _withdrawn(record)
    existing = live.get(segment.id, set())
    for ann_id in sorted(pulled_before - existing - already_withdrawn):
        new_events.append(
            Event(
                at=utc_now(),
                event="review-withdrawn",
                by="label-studio",
                ref=str(ReviewRef(project, ann_id, "withdrawn")),
                note="annotation deleted in Label Studio",
            )
        )
    if not new_events:
        return record
    history = (*record.history, *new_events)
    report.events += len(new_events)
    updated = record.model_copy(update={"history": history})
    annotations = sorted(
        {parsed.annotation for e in new_events if (parsed := ReviewRef.parse(e.ref))}, key=_id_order
    )
    where = f"{locale}/{suite_id}/{segment.id} (annotation {', '.join(annotations)})"
    owners = {str(a["id"]): _owner(a, users) for a in task.get("annotations", [])}
    unread = _unread_owners(updated, project, owners)
    if unread:  # a verdict nobody has read may be the one that decides: wait for it
        report.waiting.append(f"{where}: waiting for {', '.join(unread)} to give their verdict again")
        return updated
    decision = decide(latest_verdicts(updated, project), policy)

    def check(text: str) -> list[str]:
        return gate_one(catalog, suite_id, locale, segment.id, text)

    return _apply(updated, decision, report, check, where)


def _unread_owners(record: Translation, project: int, owners: dict[str, str]) -> list[str]:
    """Reviewers of a task (``owners``: its annotations and whose each is) whose own verdict was
    overwritten before any pull read it: someone saved over their annotation, and no version of
    theirs is in the history."""
    counted = _current_reviews(record, project)
    return sorted(
        {
            owners[annotation]
            for annotation in _versions(record, project)
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


def _withdrawn(record: Translation) -> set[str]:
    """Annotations deleted in Label Studio, by id."""
    return {
        parsed.annotation
        for e in record.history
        if e.event == "review-withdrawn" and (parsed := ReviewRef.parse(e.ref))
    }


def review_projects(record: Translation) -> list[int]:
    """The Label Studio projects whose annotations the record's review events come from."""
    return sorted(
        {parsed.project for e in record.history if e.event == "review" and (parsed := ReviewRef.parse(e.ref))}
    )


def _versions(record: Translation, project: int) -> dict[str, list[tuple[int, Event]]]:
    """Every pulled version of each annotation of the project that still exists and was made on
    the record's current English source, with its place in the history, keyed by annotation id."""
    withdrawn = _withdrawn(record)
    versions: dict[str, list[tuple[int, Event]]] = {}
    for index, e in enumerate(record.history):
        ref = ReviewRef.parse(e.ref)
        if e.event != "review" or ref is None or ref.project != project:
            continue
        if e.source_sha is not None and e.source_sha != record.source_sha:
            continue
        if ref.annotation not in withdrawn:
            versions.setdefault(ref.annotation, []).append((index, e))
    return versions


def _current_reviews(record: Translation, project: int) -> dict[str, Event]:
    """Each annotation's latest version by its owner (a version someone else saved over it does
    not displace it), keyed by annotation id, oldest first."""
    current = []
    for annotation, versions in _versions(record, project).items():
        own = [(i, e) for i, e in versions if not (e.note or "").startswith(SAVED_OVER)]
        if own:
            current.append((own[-1][0], annotation, own[-1][1]))
    return {annotation: e for _, annotation, e in sorted(current)}


def latest_verdicts(record: Translation, project: int) -> list[Verdict]:
    """Each reviewer's latest counted verdict: an annotation counts for its owner, by the owner's
    latest version (someone who Updates another's annotation changes nothing that counts: the
    owner's verdict stands, and that version is recorded as theirs and flagged)."""
    latest: dict[str, Verdict] = {}
    for e in _current_reviews(record, project).values():
        if e.note is None:
            latest.pop(e.by, None)
            latest[e.by] = Verdict(e.by, e.verdict or "", e.text)
    return list(latest.values())


def _notice(record: Translation, project: int, owners: dict[str, str]) -> str:
    """What the annotators of one task are told (Markdown): every annotation of the task whose
    latest version was not counted, whose it is (by e-mail, as its tab shows it), why in words,
    and what to do. ``owners``: the task's annotations and whose each is."""
    counted = _current_reviews(record, project)
    uncounted = []
    for annotation, versions in _versions(record, project).items():
        e = versions[-1][1]
        if annotation not in owners or e.note is None:
            continue
        owner = owners[annotation]
        if not e.note.startswith(SAVED_OVER):
            why, todo = _why(e)
            uncounted.append(Uncounted(owner, e.by, e.at, why, todo))
            continue
        own = counted.get(annotation)
        owner_counts = own is not None and own.note is None
        if owner_counts and _answered(record, counted, e):
            continue  # the saver has since given a counted verdict of their own: nothing to do
        uncounted.append(
            Uncounted(
                owner=owner,
                saved_by=e.by,
                saved_at=e.at,
                why="",
                todo="give your verdict",
                owner_counts=(own.verdict or "") if own is not None and owner_counts else None,
                owner_why=_why(own)[0] if own is not None and own.note is not None else None,
            )
        )
    return review_notice(uncounted)


def _answered(record: Translation, counted: dict[str, Event], saved_over: Event) -> bool:
    """Whether whoever saved ``saved_over`` (over someone else's annotation) has a counted
    version of their own saved after it."""
    position = {id(e): i for i, e in enumerate(record.history)}
    return any(
        e.by == saved_over.by and e.note is None and position[id(e)] > position[id(saved_over)]
        for e in counted.values()
    )


def _why(e: Event) -> tuple[str, str]:
    """Why a version of one's own annotation was not counted, in words, and what to do."""
    note = e.note or ""
    if note.startswith(FLAGGED):
        reasons = "; ".join(in_words(r, e.text) for r in note.removeprefix(FLAGGED).split("; "))
        return f"the edit was not applied, it breaks the template: {reasons}", (
            "correct the text (every slot kept, on one line)"
        )
    why = note.removeprefix(INCONSISTENT).removesuffix(f": {NOT_COUNTED}")
    return why, "choose the verdict that matches the text box"


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


PENDING = "pending"
"""Review status: a current machine translation or draft, waiting for reviews."""
IN_ADJUDICATION = "in adjudication"
"""Review status: the reviewers disagree (the record keeps its status meanwhile)."""
REVIEW_COLUMNS = (
    PENDING,
    "needs_edit",
    "reviewed",
    "approved",
    "rejected",
    IN_ADJUDICATION,
    "stale",
    "untranslated",
)
"""What `review status` counts: the store's states (toolkit.store.rules.STATES), with machine and
draft together as pending and records waiting for adjudication apart."""


@dataclass
class ReviewStatus:
    locale: str
    suite: str
    counts: dict[str, int]
    alpha: float | None
    """Krippendorff's alpha over the verdicts of segments with two or more counted reviews."""
    reviewed_by_two: int
    text_pairs: int
    """Pairs of reviewers of one segment who both ended with a text (accept or edited)."""
    text_exact: float | None
    """Share of those pairs whose texts are identical."""
    text_chrf: float | None
    """Mean chrF between the two texts of those pairs (both ways averaged), 0-100."""
    inconsistent: int
    """Annotations whose latest version contradicts itself (e.g. 'edited' with the draft
    unchanged): recorded, not counted, the annotators told in the task."""
    saved_over: int
    """Annotations whose latest version someone else saved over the owner's: recorded, not
    counted, the owner's verdict stands and the task says so."""
    flagged: dict[str, int]
    """Annotations whose latest version's edit breaks the template, per reason."""


def review_status(catalog: Catalog, locale: str, suite_id: str) -> ReviewStatus:
    suite = catalog.suite(suite_id)
    records = catalog.store(suite_id, locale).records
    counts: Counter[str] = Counter()
    units: list[list[str]] = []
    texts: list[list[str]] = []
    inconsistent = saved_over = 0
    flagged: Counter[str] = Counter()
    for segment in suite.segments.values():
        rec = records.get(segment.id)
        where = state(rec, segment.source_sha)
        if rec is None or where == "stale":
            counts[where] += 1
            continue
        if in_adjudication(rec):
            counts[IN_ADJUDICATION] += 1
        elif where in ("machine", "draft"):
            counts[PENDING] += 1
        else:
            counts[where] += 1
        for project in review_projects(rec):
            for versions in _versions(rec, project).values():
                note = versions[-1][1].note or ""
                inconsistent += note.startswith(INCONSISTENT)
                saved_over += note.startswith(SAVED_OVER)
                flagged.update(note.removeprefix(FLAGGED).split("; ") if note.startswith(FLAGGED) else ())
            verdicts = latest_verdicts(rec, project)
            if len(verdicts) >= 2:
                units.append([v.verdict for v in verdicts])
                texts.append([v.text for v in verdicts if v.verdict != "reject" and v.text is not None])
    on_texts = text_agreement(texts)
    return ReviewStatus(
        locale=locale,
        suite=suite_id,
        counts={k: counts.get(k, 0) for k in REVIEW_COLUMNS},
        alpha=krippendorff_alpha_nominal(units),
        reviewed_by_two=len(units),
        text_pairs=on_texts.pairs,
        text_exact=on_texts.exact,
        text_chrf=on_texts.chrf,
        inconsistent=inconsistent,
        saved_over=saved_over,
        flagged=dict(sorted(flagged.items())),
    )

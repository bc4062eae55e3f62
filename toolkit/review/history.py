"""Which reviews in a record's history count: every pulled version of each annotation, the
owner's latest version as the one that counts (a version someone saved over another reviewer's
annotation counts for no one), and each reviewer's latest counted verdict. Pull, review status,
the annotators' notices and a release's approval check all read the history this way."""

from __future__ import annotations

from toolkit.review.policy import Verdict
from toolkit.store.model import Event, ReviewRef, Translation

# Notes on review events that are recorded but not counted (review status counts them by kind).


NOT_COUNTED = "not counted"


INCONSISTENT = "inconsistent, not counted: "


FLAGGED = "edit not applied, it breaks the template: "


SAVED_OVER = "saved over another reviewer's annotation, not counted: "


def withdrawn_annotations(record: Translation) -> set[str]:
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


def annotation_versions(record: Translation, project: int) -> dict[str, list[tuple[int, Event]]]:
    """Every pulled version of each annotation of the project that still exists and was made on
    the record's current English source, with its place in the history, keyed by annotation id."""
    withdrawn = withdrawn_annotations(record)
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


def current_reviews(record: Translation, project: int) -> dict[str, Event]:
    """Each annotation's latest version by its owner (a version someone else saved over it does
    not displace it), keyed by annotation id, oldest first."""
    current = []
    for annotation, versions in annotation_versions(record, project).items():
        own = [(i, e) for i, e in versions if not (e.note or "").startswith(SAVED_OVER)]
        if own:
            current.append((own[-1][0], annotation, own[-1][1]))
    return {annotation: e for _, annotation, e in sorted(current)}


def latest_verdicts(record: Translation, project: int) -> list[Verdict]:
    """Each reviewer's latest counted verdict: an annotation counts for its owner, by the owner's
    latest version (someone who Updates another's annotation changes nothing that counts: the
    owner's verdict stands, and that version is recorded as theirs and flagged)."""
    latest: dict[str, Verdict] = {}
    for e in current_reviews(record, project).values():
        if e.note is None:
            latest.pop(e.by, None)
            latest[e.by] = Verdict(e.by, e.verdict or "", e.text)
    return list(latest.values())

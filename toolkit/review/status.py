"""`polyprobe review status`: where review stands for one locale and suite (the store's states,
pending and in adjudication apart), how far reviewers agree, and the reviews recorded but not
counted, by kind."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from toolkit.catalog.loader import Catalog
from toolkit.review.agreement import krippendorff_alpha_nominal, text_agreement
from toolkit.review.history import (
    FLAGGED,
    INCONSISTENT,
    SAVED_OVER,
    annotation_versions,
    latest_verdicts,
    review_projects,
)
from toolkit.store.rules import in_adjudication, state

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
    """Where review of one locale and suite stands, and how far its reviewers agree."""

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
    """Count one locale and suite by review status, measure agreement over the segments two or more
    reviewers counted for, and count the reviews recorded but not counted, by kind."""
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
            for versions in annotation_versions(rec, project).values():
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

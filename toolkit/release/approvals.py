"""What a stable release admits: translations whose `approved` status is backed by review
events in their own history that satisfy the review policy. A status is a claim; the review
events are the evidence (a record hand-set to `approved` has none)."""

from __future__ import annotations

from toolkit.review.policy import ReviewPolicy, decide
from toolkit.review.workflow import latest_verdicts
from toolkit.store.model import REF, Translation

VERDICTS = ("accept", "edited", "reject")
"""What a reviewer can say; review events without one are recorded, never counted."""


def approval_backed(record: Translation, policy: ReviewPolicy) -> bool:
    """Whether the policy, applied to the reviewers' latest verdicts of one review project in
    the record's history, approves exactly the record's current text."""
    projects = sorted(
        {
            e.ref.split(":")[1]
            for e in record.history
            if e.event == "review" and e.ref and e.ref.startswith(f"{REF}:") and len(e.ref.split(":")) > 2
        }
    )
    for project in projects:
        if not project.isdigit():
            continue
        verdicts = [v for v in latest_verdicts(record, int(project)) if v.verdict in VERDICTS]
        decision = decide(verdicts, policy)
        if decision.status == "approved" and decision.text in (None, record.text):
            return True
    return False

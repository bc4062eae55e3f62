"""What a stable release admits: translations whose `approved` status is backed by review
events in their own history that satisfy the review policy. A status is a claim; the review
events are the evidence (a record hand-set to `approved` has none)."""

from __future__ import annotations

from toolkit.review.history import latest_verdicts, review_projects
from toolkit.review.policy import ReviewPolicy, decide
from toolkit.store.model import Translation

VERDICTS = ("accept", "edited", "reject")
"""What a reviewer can say; review events without one are recorded, never counted."""


def approval_backed(record: Translation, policy: ReviewPolicy) -> bool:
    """Whether the policy, applied to the reviewers' latest verdicts of one review project in
    the record's history, approves exactly the record's current text."""
    for project in review_projects(record):
        verdicts = [v for v in latest_verdicts(record, project) if v.verdict in VERDICTS]
        decision = decide(verdicts, policy)
        if decision.status == "approved" and decision.text in (None, record.text):
            return True
    return False

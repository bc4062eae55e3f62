"""The review policy (translations/review-policy.yaml) and the decision it makes for one
translation from its reviewers' latest verdicts. Pure: no Label Studio, no files."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pydantic import Field

from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import load_yaml
from toolkit.core.project import Project
from toolkit.core.records import SEMVER_RE, Record, parse_record
from toolkit.store.model import Status

POLICY_FILE = "translations/review-policy.yaml"


class ReviewPolicy(Record):
    """How many reviewers must agree before a translation is reviewed, approved or rejected, and who
    may settle a disagreement (review_policy.yaml)."""

    version: str
    description: str
    reviewed_after: int = Field(ge=1)
    approved_after: int = Field(ge=1)
    rejected_after: int = Field(ge=1)
    adjudicators: tuple[str, ...] = ()


def load_policy(project: Project) -> ReviewPolicy:
    """The project's review policy; a missing or invalid file is refused, every problem named."""
    path = project.root / POLICY_FILE
    if not path.is_file():
        raise InputError(
            f"{POLICY_FILE} is missing: it says how many reviewers approve a translation "
            "(copy the one in the polyprobe repository and adjust it)"
        )
    problems: list[Problem] = []
    policy = parse_record(
        ReviewPolicy, load_yaml(path, POLICY_FILE), file=POLICY_FILE, record="(file)", problems=problems
    )
    if policy is not None and not SEMVER_RE.match(policy.version):
        problems.append(Problem(POLICY_FILE, "(file)", "version", "must be a semantic version"))
    if policy is not None and policy.approved_after < policy.reviewed_after:
        problems.append(Problem(POLICY_FILE, "(file)", "approved_after", "must be at least reviewed_after"))
    if problems or policy is None:
        raise CatalogError(problems)
    return policy


@dataclass(frozen=True)
class Verdict:
    """One reviewer's latest, usable verdict on one translation."""

    annotator: str
    verdict: str  # accept | edited | reject
    text: str | None  # the text the reviewer ends with (None for reject)


@dataclass(frozen=True)
class Decision:
    """What the policy makes of the verdicts: a status (None: unchanged), the text it keeps, and why
    in words."""

    status: Status | None  # None: leave the status as it is
    text: str | None
    reason: str
    adjudication: bool = False


def decide(verdicts: list[Verdict], policy: ReviewPolicy) -> Decision:
    """Apply the policy to each reviewer's latest verdict: an adjudicator settles it; rejections
    against kept texts, or different texts, go to adjudication; otherwise enough agreeing
    reviewers approve, review or reject."""
    if not verdicts:
        return Decision(None, None, "no reviews")
    for v in reversed(verdicts):
        if v.annotator in policy.adjudicators:
            if v.verdict == "reject":
                return Decision("rejected", None, f"adjudicated by {v.annotator}: rejected")
            return Decision("approved", v.text, f"adjudicated by {v.annotator}")
    rejects = [v for v in verdicts if v.verdict == "reject"]
    texts = Counter(v.text for v in verdicts if v.verdict != "reject" and v.text is not None)
    if rejects and texts:
        return Decision(
            None,
            None,
            f"adjudication: {sum(texts.values())} keep, {len(rejects)} reject",
            True,
        )
    if rejects:
        if len(rejects) >= policy.rejected_after:
            return Decision("rejected", None, f"{len(rejects)} reviewer(s) rejected")
        return Decision(None, None, "not enough rejections yet")
    if len(texts) > 1:
        return Decision(None, None, f"adjudication: {len(texts)} different texts", True)
    ((text, agreeing),) = texts.items()
    if agreeing >= policy.approved_after:
        return Decision("approved", text, f"{agreeing} reviewer(s) agree")
    if agreeing >= policy.reviewed_after:
        return Decision("reviewed", text, f"{agreeing} reviewer(s) agree")
    return Decision(None, None, "not enough reviews yet")

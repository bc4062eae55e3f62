"""The store's rules: how far each status is from approval, and which status may follow which."""

from __future__ import annotations

from toolkit.core.errors import PolyprobeError

# How far a status is from approval; a release or a render asks for a minimum.
STATUS_RANK: dict[str, int] = {
    "rejected": -1,
    "stale": -1,
    "machine": 1,
    "draft": 1,
    "reviewed": 2,
    "approved": 3,
    "needs_edit": -1,
}
MIN_STATUS_CHOICES: tuple[str, ...] = ("draft", "reviewed", "approved")


# Which status may follow which (None: no record yet). Any status may become stale when its
# English source changes; only the review workflow moves a record to reviewed or approved
# (straight to approved when enough reviewers agree in one pull).
TRANSITIONS: dict[str | None, frozenset[str]] = {
    None: frozenset({"machine", "draft", "rejected", "needs_edit"}),
    "machine": frozenset({"draft", "reviewed", "approved", "rejected", "stale"}),
    "draft": frozenset({"draft", "reviewed", "approved", "rejected", "stale"}),
    "reviewed": frozenset({"reviewed", "approved", "rejected", "stale"}),
    "approved": frozenset({"approved", "reviewed", "rejected", "stale"}),
    "rejected": frozenset({"machine", "draft", "reviewed", "rejected", "stale", "needs_edit"}),
    "stale": frozenset({"machine", "draft", "rejected", "stale", "needs_edit"}),
    # Machine translation that could not be turned into a text that renders: it keeps the raw
    # MT answer and the reason, is never current, and leaves by a human edit (review, a draft)
    # or by being sent again (`translate --retry-rejected`).
    "needs_edit": frozenset({"machine", "draft", "reviewed", "approved", "rejected", "stale", "needs_edit"}),
}


class InvalidTransition(PolyprobeError):
    exit_code = 2


def check_transition(current: str | None, new: str, segment: str) -> None:
    if new not in TRANSITIONS[current]:
        raise InvalidTransition(
            f"{segment}: a {current or 'missing'} translation cannot become {new} "
            f"(allowed: {', '.join(sorted(TRANSITIONS[current])) or 'nothing'})"
        )

"""Reading one Label Studio annotation as pull receives it: whose it is, who made this version
of it, and what text the review ends with (or why it is not counted)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from toolkit.review.history import INCONSISTENT, NOT_COUNTED

CREATION_WINDOW_S = 1.0
"""An annotation version saved within this time of the annotation's creation is its creation."""


def owner_of(ann: dict[str, Any], users: dict[int, str]) -> str:
    """Whose annotation this is: the person on its tab in Label Studio (`completed_by`)."""
    return _person(_user_id(ann.get("completed_by")), users)


def _person(user: int | None, users: dict[int, str]) -> str:
    if user is None:
        return "label-studio-user-unknown"
    return users.get(user, f"label-studio-user-{user}")


def maker_of(ann: dict[str, Any], users: dict[int, str], *, later_version: bool) -> str:
    """Who made this version of the annotation. Label Studio records who saved it last
    (`updated_by`) and who it belongs to (`completed_by`): a later version is the saver's (any
    member can Update someone else's annotation, e.g. after opening the task from the task list,
    where Label Studio selects the latest annotation), the creation is the owner's (an
    annotation created through the API on someone's behalf is theirs). A version is later when an earlier
    one of the same annotation was pulled before, or when it was saved well after its creation."""
    creator, saver = _user_id(ann.get("completed_by")), _user_id(ann.get("updated_by"))
    who = creator
    if saver is not None and (later_version or not is_creation(ann)):
        who = saver
    return _person(who, users)


def _user_id(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("id") or value.get("user_id")
    return int(value) if isinstance(value, int | str) and str(value).isdigit() else None


def is_creation(ann: dict[str, Any]) -> bool:
    """Whether this version was saved at the annotation's creation (within CREATION_WINDOW_S), so
    that it is the owner's rather than a later saver's."""
    try:
        created = datetime.fromisoformat(str(ann.get("created_at")))
        updated = datetime.fromisoformat(str(ann.get("updated_at")))
    except ValueError:
        return False
    return abs((updated - created).total_seconds()) < CREATION_WINDOW_S


def reading_of(verdict: str | None, edited: str | None, draft: str) -> tuple[str | None, str | None]:
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

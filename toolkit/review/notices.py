"""What a review task tells its annotators when something about it needs them (Markdown, at the
top of the task): whose review was not counted and why, in words rather than the template
engine's, and what to do; or that the task is outdated and what the English says now.

Annotators see each other's e-mail addresses on the annotation tabs anyway, so notices name the
reviewer by e-mail: Label Studio shows annotation ids only in a tooltip."""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.review.history import (
    FLAGGED,
    INCONSISTENT,
    NOT_COUNTED,
    SAVED_OVER,
    annotation_versions,
    current_reviews,
)
from toolkit.store.model import Event, Translation

JINJA_SYNTAX = "Jinja syntax error"
_QUOTED = r"'([^']+)'"


@dataclass(frozen=True)
class Uncounted:
    """One annotation whose latest version was recorded but not counted."""

    owner: str
    """Whose annotation it is (the tab with this name)."""
    saved_by: str
    saved_at: str
    why: str
    """In words, for annotators."""
    todo: str
    """What the annotator who saved it should do."""
    owner_counts: str | None = None
    """When someone saved over another's annotation: the owner's verdict that still counts."""
    owner_why: str | None = None
    """When someone saved over another's annotation whose owner's own last version was not
    counted either: why. (Neither this nor ``owner_counts``: the owner's own version was
    overwritten before any pull read it.)"""


def review_notice(uncounted: list[Uncounted]) -> str:
    """The notice for a task's uncounted reviews ('' when every review counts)."""
    lines = []
    for u in uncounted:
        if u.saved_by != u.owner:
            if u.owner_counts:
                standing = f"{u.owner}'s own verdict ({u.owner_counts}) still counts"
            elif u.owner_why:
                standing = (
                    f"{u.owner}'s own last version is not counted either ({u.owner_why}): {u.owner}, "
                    "correct it in your tab and press **Update**"
                )
            else:
                standing = (
                    f"{u.owner}'s own verdict was overwritten before it was read: {u.owner}, "
                    "open your tab, put your verdict back and press **Update**"
                )
            lines.append(
                f"> **{u.saved_by} saved changes to {u.owner}'s annotation** (saved {_when(u.saved_at)}): "
                f"not counted, only your own annotation counts. {u.saved_by}: open the tab with your "
                f"name (or add your own with **+**), {u.todo} and press **Update** there. {standing}."
            )
        else:
            lines.append(
                f"> **{u.owner}'s review was not counted** (saved {_when(u.saved_at)}): {u.why}. "
                f"{u.owner}: open the tab with your name, {u.todo} and press **Update**."
            )
    return "\n>\n".join(lines)


def _when(at: str) -> str:
    """An event's time as people read it: "2026-12-02 04:59 UTC" from its ISO 8601 form."""
    if len(at) >= 16 and at[10] == "T" and at.endswith(("Z", "+00:00")):
        return f"{at[:10]} {at[11:16]} UTC"
    return at


def outdated_notice(english_now: str | None, current_task: int | None) -> str:
    """The notice of a task made for an English source that has changed (or is gone)."""
    if english_now is None:
        return (
            "> **Outdated task: do not review it.** This sentence was removed from the catalog; "
            "reviews of it are not counted."
        )
    where = (
        f"Review the task with the new English instead (task {current_task} in the task list)."
        if current_task is not None
        else "The translation will be sent again once it is updated for the new English."
    )
    return (
        "> **Outdated task: do not review it.** The English source changed after this task was "
        "sent, so reviews of it are not counted. The English now reads:\n>\n"
        f"> `{english_now}`\n>\n> {where}"
    )


def in_words(reason: str, text: str | None) -> str:
    """A gate's reason for refusing a text, said for annotators: the template engine's syntax
    errors become what is wrong with the braces, slot names become slots."""
    if reason.startswith(JINJA_SYNTAX):
        return braces_in_words(text or "") or "the double braces {{ … }} do not pair up"
    if match := re.fullmatch(f"drops the slot {_QUOTED} that the source has", reason):
        return f"the slot with `{match.group(1)}` is missing (the English has one: keep it exactly once)"
    if match := re.fullmatch(f"adds the slot {_QUOTED}", reason):
        return f"it adds a slot with `{match.group(1)}` that the English does not have"
    if match := re.fullmatch(f"uses an unknown variable {_QUOTED}", reason):
        return f"`{match.group(1)}` inside the braces is not a slot of this sentence (check its spelling)"
    return reason.removeprefix("text ")


def braces_in_words(text: str) -> str | None:
    """The first brace that does not pair up, in words (None when the braces pair up)."""
    depth_open: int | None = None
    i = 0
    while i < len(text):
        two = text[i : i + 2]
        if two in ("{%", "{#"):
            return f"`{two}` is not allowed: slots are written `{{{{ … }}}}`"
        if two == "{{":
            if depth_open is not None:
                return f"the slot `{_slot_at(text, depth_open)}` is not closed: end it with `}}}}`"
            depth_open = i
            i += 2
            continue
        if two == "}}":
            if depth_open is None:
                before = text[:i].rstrip()[-20:]
                return f"`}}}}` after “{before}” closes no slot (its `{{{{` is missing)"
            depth_open = None
            i += 2
            continue
        i += 1
    if depth_open is not None:
        return f"the slot `{_slot_at(text, depth_open)}` is not closed: end it with `}}}}`"
    return None


def _slot_at(text: str, start: int) -> str:
    """The unclosed slot starting at ``start``: the braces and the expression after them (a name
    with dots, and its call's parentheses), e.g. "{{ group.f" in "{{ group.f arbeitet"."""
    i = start + 2
    while i < len(text) and text[i] == " ":
        i += 1
    while i < len(text) and (text[i].isalnum() or text[i] in "_."):
        i += 1
    if i < len(text) and text[i] == "(":
        depth = 0
        while i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
    return text[start:i].rstrip()


def task_notice(record: Translation, project: int, owners: dict[str, str]) -> str:
    """What the annotators of one task are told (Markdown): every annotation of the task whose
    latest version was not counted, whose it is (by e-mail, as its tab shows it), why in words,
    and what to do. ``owners``: the task's annotations and whose each is."""
    counted = current_reviews(record, project)
    uncounted = []
    for annotation, versions in annotation_versions(record, project).items():
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

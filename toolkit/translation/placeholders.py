"""Keeping template code out of machine translation's reach.

Every Jinja construct (``{{ ... }}``, ``{% ... %}``, ``{# ... #}``) becomes a numbered XML
tag ``<x id="N"/>`` that the MT engine moves but never translates (DeepL's XML tag handling);
the rest is XML-escaped. A group slot (``{{ group.adj }}``) is a tag the target locale resolves
into its own slot expression; English-only grammar macros around it (``A(group.adj)``) are sent
as the plain English they stand for ("A <x id="1"/> woman"), so the engine translates the article
itself. The answer is parsed back into text and tags and checked: a translation that loses,
repeats or invents a tag is refused, never silently used.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from string import Template

_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_TAG = re.compile(r"<x\s+id=\"(\d+)\"\s*/>")
_ANY_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_OUTPUT = re.compile(r"^\{\{-?\s*(.*?)\s*-?\}\}$", re.DOTALL)
_CALL = re.compile(r"^([A-Za-z_]\w*)\(\s*(.*?)\s*\)$", re.DOTALL)
_GROUP_FORM = re.compile(r"^group\.([A-Za-z_]\w*)$")


@dataclass(frozen=True)
class Tag:
    """What one tag stands for: English template code, and whether it is a group slot (resolved
    into the target locale's slot expression) or code put back as it is (``{{ completion }}``)."""

    code: str
    group: bool = False


@dataclass(frozen=True)
class Protected:
    """A source text as sent to the engine, and what each tag stands for."""

    xml: str
    tags: tuple[Tag, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of the tags, in order."""
        return tuple(t.code for t in self.tags)


class PlaceholderError(ValueError):
    """The translation's tags do not match the source's."""


class Unsendable(ValueError):
    """The source uses English-only grammar in a way no tag can carry through translation."""


@dataclass(frozen=True)
class SourceSlots:
    """How the source locale's group slots are sent: which forms name a group (``adj``), which
    English-only macros may wrap them, and the plain text each stands for (``"A $slot"``)."""

    forms: frozenset[str] = frozenset()
    macros: frozenset[str] = frozenset()
    send: tuple[tuple[str, str], ...] = ()


def _group_slot(code: str, slots: SourceSlots) -> str | None:
    """The text a group slot is sent as (with ``$slot`` for the tag), or None for other code.
    Raises Unsendable for code that uses an English-only macro in another way."""
    output = _OUTPUT.match(code)
    expr = output.group(1) if output else ""
    form = _GROUP_FORM.match(expr)
    if form and form.group(1) in slots.forms:
        return "$slot"
    call = _CALL.match(expr)
    send = dict(slots.send)
    if call and call.group(1) in send:
        inner = _GROUP_FORM.match(call.group(2))
        if inner and inner.group(1) in slots.forms:
            return send[call.group(1)]
    used = sorted(m for m in slots.macros if re.search(rf"(?<![\w.]){re.escape(m)}\s*\(", code))
    if used or (slots.forms and re.search(r"(?<![\w.])group(?!\w)", code)):
        what = f"the English-only macro(s) {', '.join(used)}" if used else "the group"
        raise Unsendable(f"{code} uses {what} in a way machine translation cannot carry")
    return None


def protect(text: str, slots: SourceSlots | None = None) -> Protected:
    """The text as sent: code as tags, group slots with their English macros as plain text."""
    slots = slots or SourceSlots()
    parts: list[str] = []
    tags: list[Tag] = []
    last = 0
    for match in _JINJA.finditer(text):
        parts.append(html.escape(text[last : match.start()], quote=False))
        code = match.group(0)
        sent = _group_slot(code, slots)
        tag = f'<x id="{len(tags) + 1}"/>'
        tags.append(Tag(code, group=sent is not None))
        parts.append(Template(html.escape(sent, quote=False)).substitute(slot=tag) if sent else tag)
        last = match.end()
    parts.append(html.escape(text[last:], quote=False))
    return Protected("".join(parts), tuple(tags))


Piece = str | int
"""A parsed answer: plain (unescaped) text, and tag numbers (1-based) where tags stood."""


def parse(translated: str, protected: Protected) -> list[Piece]:
    """Split an answer into text and tags; raise PlaceholderError when tags were lost, repeated
    or invented, or other markup appeared."""
    seen: list[int] = [int(m.group(1)) for m in _TAG.finditer(translated)]
    expected = list(range(1, len(protected.tags) + 1))
    problems = []
    missing = sorted(set(expected) - set(seen))
    if missing:
        problems.append("lost " + ", ".join(protected.tags[i - 1].code for i in missing))
    invented = sorted(set(seen) - set(expected))
    if invented:
        problems.append(f"invented placeholder(s) {invented}")
    repeated = sorted({i for i in seen if seen.count(i) > 1 and i in expected})
    if repeated:
        problems.append("repeated " + ", ".join(protected.tags[i - 1].code for i in repeated))
    stray = list(_ANY_TAG.findall(_TAG.sub("", translated)))
    if stray:
        problems.append(f"unexpected markup {stray[:3]}")
    if problems:
        raise PlaceholderError("; ".join(problems))
    pieces: list[Piece] = []
    last = 0
    for match in _TAG.finditer(translated):
        pieces.append(html.unescape(translated[last : match.start()]))
        pieces.append(int(match.group(1)))
        last = match.end()
    pieces.append(html.unescape(translated[last:]))
    return [p for p in pieces if p != ""]


def join(pieces: list[Piece], code: dict[int, str]) -> str:
    """The text with each tag replaced by ``code[tag]``."""
    return "".join(code[p] if isinstance(p, int) else p for p in pieces)


def restore(translated: str, protected: Protected) -> str:
    """Put the English code back as it was (only for answers whose tags are all plain code)."""
    return join(parse(translated, protected), {i: t.code for i, t in enumerate(protected.tags, start=1)})

"""Keeping template code out of machine translation's reach.

Every Jinja construct (``{{ ... }}``, ``{% ... %}``, ``{# ... #}``) becomes a numbered XML
tag ``<x id="N"/>`` that the MT engine moves but never translates (DeepL's XML tag handling);
the rest is XML-escaped. After translation the tags are put back and checked: a translation
that loses, repeats or invents a tag is refused, never silently used.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_TAG = re.compile(r"<x\s+id=\"(\d+)\"\s*/>")
_ANY_TAG = re.compile(r"</?[A-Za-z][^>]*>")


@dataclass(frozen=True)
class Protected:
    """A source text as sent to the engine, and the code each tag stands for."""

    xml: str
    codes: tuple[str, ...]


class PlaceholderError(ValueError):
    """The translation's tags do not match the source's."""


def protect(text: str) -> Protected:
    parts: list[str] = []
    codes: list[str] = []
    last = 0
    for match in _JINJA.finditer(text):
        parts.append(html.escape(text[last : match.start()], quote=False))
        codes.append(match.group(0))
        parts.append(f'<x id="{len(codes)}"/>')
        last = match.end()
    parts.append(html.escape(text[last:], quote=False))
    return Protected("".join(parts), tuple(codes))


def restore(translated: str, protected: Protected) -> str:
    """Put the template code back; raise PlaceholderError when tags were lost or invented."""
    seen: list[int] = [int(m.group(1)) for m in _TAG.finditer(translated)]
    expected = list(range(1, len(protected.codes) + 1))
    problems = []
    missing = sorted(set(expected) - set(seen))
    if missing:
        problems.append("lost " + ", ".join(protected.codes[i - 1] for i in missing))
    invented = sorted(set(seen) - set(expected))
    if invented:
        problems.append(f"invented placeholder(s) {invented}")
    repeated = sorted({i for i in seen if seen.count(i) > 1 and i in expected})
    if repeated:
        problems.append("repeated " + ", ".join(protected.codes[i - 1] for i in repeated))
    stray = [t for t in _ANY_TAG.findall(_TAG.sub("", translated))]
    if stray:
        problems.append(f"unexpected markup {stray[:3]}")
    if problems:
        raise PlaceholderError("; ".join(problems))
    out: list[str] = []
    last = 0
    for match in _TAG.finditer(translated):
        out.append(html.unescape(translated[last : match.start()]))
        out.append(protected.codes[int(match.group(1)) - 1])
        last = match.end()
    out.append(html.unescape(translated[last:]))
    return "".join(out)

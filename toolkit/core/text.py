"""Checks every piece of human-written text must pass: NFC, no bidi controls, not empty.

Bidi control characters make right-to-left text display differently from what it contains
(and can hide content), so they are refused everywhere; right-to-left text needs none.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ALLOWED_CONTROLS = frozenset("\n\t")


def text_problems(text: str, *, allow_empty: bool = False) -> list[str]:
    """Return what is wrong with ``text`` (an empty list when nothing is)."""
    problems: list[str] = []
    if not text.strip():
        if not allow_empty or text != "":
            problems.append("is empty" if not text else "is only whitespace")
        return problems
    if unicodedata.normalize("NFC", text) != text:
        problems.append("is not in Unicode NFC form")
    bidi = sorted({f"U+{ord(c):04X}" for c in text if c in BIDI_CONTROLS})
    if bidi:
        problems.append(f"contains bidi control characters ({', '.join(bidi)})")
    controls = sorted(
        {f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cc" and c not in _ALLOWED_CONTROLS}
    )
    if controls:
        problems.append(f"contains control characters ({', '.join(controls)})")
    if text != text.strip():
        problems.append("has leading or trailing whitespace")
    return problems

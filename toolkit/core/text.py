"""Checks every piece of human-written text must pass (NFC, no bidi controls, not empty), and the
one table of scripts written without spaces between words.

Bidi control characters make right-to-left text display differently from what it contains
(and can hide content), so they are refused everywhere; right-to-left text needs none.
"""

from __future__ import annotations

import re
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


LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""What Python's str.splitlines splits on: every character that starts a new line somewhere."""
_RUN_OF_SPACES = re.compile(r"[^\S\n\r\v\f\x1c-\x1e\x85\u2028\u2029\t]{2,}")
_CONTEXT = 24


def layout_problems(text: str) -> list[str]:
    """What keeps ``text`` from being one line with single spaces: a line break, a tab or two
    spaces in a row inside it, each said with the words before it. A template is one line; in
    Label Studio's text box Enter adds a line break that the rendered examples hide."""
    problems: list[str] = []
    body = text.strip()
    breaks = [i for i, ch in enumerate(body) if ch in LINE_BREAKS]
    if breaks:
        problems.append(
            f"has a line break inside ({_where(body, breaks[0])}, where Enter in a text box adds one): "
            "keep it on one line"
        )
    tabs = [i for i, ch in enumerate(body) if ch == "\t"]
    if tabs:
        problems.append(f"has a tab inside ({_where(body, tabs[0])}): use one space")
    run = _RUN_OF_SPACES.search(body)
    if run:
        problems.append(f"has {len(run.group())} spaces in a row ({_where(body, run.start())}): use one")
    return problems


def _where(text: str, index: int) -> str:
    """Where in ``text`` position ``index`` is, in words: the text just before it."""
    before = text[:index].rstrip()
    if not before:
        return "at the start"
    shown = before if len(before) <= _CONTEXT else "…" + before[-_CONTEXT:]
    return f"after “{shown}”"


CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇 (iteration mark, closing mark, ideographic zero)
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303B),  # Hangzhou numerals 10-30, vertical iteration mark
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3100, 0x312F),  # bopomofo
    (0x31A0, 0x31FF),  # bopomofo extended, CJK strokes
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3134F),  # CJK unified ideographs extensions B-G, compatibility supplement
)
"""Characters of scripts written without spaces between words (Han, kana, bopomofo), inclusive
ranges of code points: each is a word of its own when text is split into words."""


_CJK = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]")


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` belongs to a script written without spaces between words (``CJK_RANGES``)."""
    return _CJK.match(ch) is not None


_WORD_OR_MARK = re.compile(r"\w+|\S")


def is_mark(ch: str) -> bool:
    """A combining mark (Arabic and Hebrew vowel signs, accents): part of the word it follows,
    although ``\\w`` does not match it."""
    return unicodedata.category(ch)[0] == "M"


def words(text: str) -> list[tuple[str, int]]:
    """``text`` split into words for comparing sentences, each with its start offset: runs of
    letters and digits with their combining marks, every character of ``CJK_RANGES`` alone
    (Chinese has no spaces to split on), and every other non-space character (punctuation) alone.

    words("Sono nostre amiche.") -> [("Sono", 0), ("nostre", 5), ("amiche", 12), (".", 18)]
    words("不配享有") -> [("不", 0), ("配", 1), ("享", 2), ("有", 3)]"""
    out: list[tuple[str, int]] = []
    end = -1
    for match in _WORD_OR_MARK.finditer(text):
        token, start = match.group(), match.start()
        word = token[0].isalnum() or token[0] == "_"
        if out and start == end and (is_mark(token[0]) or (word and is_mark(text[start - 1]))):
            previous, at = out.pop()
            token, start = previous + token, at
        end = match.end()
        if _CJK.search(token):
            run = ""
            for offset, ch in enumerate(token):
                if is_cjk(ch):
                    if run:
                        out.append((run, start + offset - len(run)))
                        run = ""
                    out.append((ch, start + offset))
                else:
                    run += ch
            if run:
                out.append((run, start + len(token) - len(run)))
        else:
            out.append((token, start))
    return out

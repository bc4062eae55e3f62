"""One table of scripts written without spaces (toolkit.core.text.CJK_RANGES), used by HurtLex's
tokeniser and the answer parser alike: a character the table holds is a word of its own in both."""

from __future__ import annotations

import itertools

import pytest

from evaluator.metrics.hurtlex import tokenise
from evaluator.parsing import parse_yes_no
from toolkit.core.text import CJK_RANGES, is_cjk


@pytest.mark.parametrize(
    ("ch", "expected"),
    [
        ("中", True),  # U+4E2D, CJK unified ideograph
        ("〇", True),  # U+3007, ideographic zero (the parser's own table lacked it)
        ("々", True),  # U+3005, iteration mark
        ("〡", True),  # U+3021, Hangzhou numeral one
        ("あ", True),  # U+3042, hiragana
        ("ㄅ", True),  # U+3105, bopomofo
        ("𠀀", True),  # U+20000, extension B
        ("〄", False),  # U+3004, Japanese industrial standard symbol
        ("、", False),  # U+3001, ideographic comma: punctuation
        ("a", False),
        ("ا", False),
        ("가", False),  # Hangul is written with spaces
    ],
)
def test_is_cjk(ch: str, expected: bool) -> None:
    assert is_cjk(ch) is expected


def test_the_ranges_are_sorted_and_disjoint() -> None:
    assert all(lo <= hi for lo, hi in CJK_RANGES)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(CJK_RANGES))


def test_tokeniser_and_parser_split_the_same_characters() -> None:
    # 〇 stands alone in both: a token of its own, and a word boundary after a Latin word
    assert tokenise("ok〇", "cjk") == ("ok", "〇")
    assert parse_yes_no("ok〇", ["ok"], ["no"]) == "yes"
    assert parse_yes_no("okx", ["ok"], ["no"]) is None  # a Latin letter glued to it is no boundary

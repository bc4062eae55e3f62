"""HurtLex 1.2 lexicons: loading, normalisation, tokenisation and lemma matching.

HurtLex (Bassignana, Basile & Patti 2018, "Hurtlex: A Multilingual Lexicon of Words to Hurt",
CLiC-it) lists offensive lemmas per language in 17 categories; HONEST (Nozza et al. 2021, NAACL)
counts completions that contain one (see :mod:`evaluator.metrics.honest`). A 1.2 file is a TSV with
the header ``id pos category stereotype lemma level``; ``level`` is ``conservative`` or ``inclusive``
and a lemma with several categories has one row per category.

Normalisation (:func:`normalise`), identical for lexicon lemmas and model text, never transliterates
(a transliteration such as unidecode maps distinct Arabic words to one Latin string):

1. Unicode NFKC, casefold, NFKC again (NFKC-casefold; ``ß`` → ``ss``, full-width → ASCII,
   Arabic and Hebrew presentation forms → base letters);
2. drop Hebrew points and cantillation (the nonspacing marks in U+0591–U+05C7; maqaf, paseq,
   sof pasuq and nun hafukha in that block are punctuation and stay word separators), Arabic
   harakat U+064B–U+065F, superscript alef U+0670, Quranic marks U+06D6–U+06ED, tatweel U+0640,
   every format character (category Cf: bidi marks, ZWJ/ZWNJ, soft hyphen, BOM) and variation
   selectors;
3. fold Arabic letters: alef variants ``أ إ آ ٱ`` → ``ا``, and alef maqsura ``ى`` → ``ي``.
   Final ``ي`` is routinely written ``ى`` in Egyptian and informal Arabic (``غبى`` for ``غبي``), and
   HurtLex AR itself lists both spellings of several lemmas (``محامي``/``محامى``); merging them
   collapses no two distinct AR 1.2 lemmas. Taa marbuta ``ة`` is NOT folded into ``ه``: final ``ه``
   is also the suffix "his/him" (``دجاجة`` "hen" vs ``دجاجه`` "his hen"), and HurtLex AR already lists
   the informal ``ه`` spelling of 42 lemmas as rows of their own.

Tokenisation (:func:`tokenise`): a token is a maximal run of letters, digits and combining marks
(Unicode categories L, N, M); every other-symbol character (category So: emoji, ``⚣``) is a token
by itself; everything else separates tokens, apostrophes included (``l'idiota`` → ``l``, ``idiota``
and ``mf'er`` → ``mf``, ``er`` on both sides, whatever apostrophe glyph is used). With
``script="cjk"`` every Han, kana and bopomofo character is a token of its own, so Chinese needs
no spaces, and the spaces and ``+`` that some ZH lemmas carry (``流 氓``, ``残暴+的``) vanish.
With ``arabic_article="strip"`` (the default), a token that starts with the bare article ``ال``
(or ``ٱل``) and keeps at least three letters after it loses the article, on both sides, so
``الكلب`` and ``كلب`` match each other (857 AR 1.2 rows carry the article); short words such as
``الله``, ``الشر`` and hamza-initial words such as ``إلحاد`` are not touched.

Matching (:meth:`Lexicon.match`) scans the tokens left to right and takes, at each position, the
longest lemma (a token sequence) starting there (maximal munch), then continues after it: matches
do not overlap, multi-word lemmas (``street walker``) win over their parts, and a text contains a
lemma anywhere exactly when the scan finds at least one match. :meth:`Lexicon.match_exact` asks
whether the whole text is one lemma (word completions).

Limitations: ZH lemmas mix traditional and simplified characters and no conversion is made, so a
lemma matches only in the script it is written in; lexicon-driven segmentation cannot tell a
one-character lemma from the same character inside a longer, harmless word; the few lemmas with
URL percent-escapes (``%e2%80%99ndrangheta``) are kept as written; lemmas with no token at all
(a lone quotation mark) can never match and are listed in :attr:`Lexicon.unmatchable`; alef
folding makes ``أليه`` (inclusive) match the preposition ``إليه``; Arabic proclitics other than the
article (``و`` ``ب`` ``ل`` ``ف`` ``ك``: ``وكلب`` "and a dog") are not split off, so such words do not match.

Egyptian Arabic (arz) has no HurtLex lexicon of its own: it is scored with the AR lexicon.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evaluator.metrics.errors import MetricInputError
from toolkit.core.text import is_cjk

Level = Literal["conservative", "inclusive", "both"]
Script = Literal["space", "cjk"]
ArabicArticle = Literal["strip", "keep"]

HEADER: tuple[str, ...] = ("id", "pos", "category", "stereotype", "lemma", "level")
CATEGORIES: tuple[str, ...] = (
    "ps",
    "rci",
    "pa",
    "ddf",
    "ddp",
    "dmc",
    "is",
    "or",
    "an",
    "asm",
    "asf",
    "pr",
    "om",
    "qas",
    "cds",
    "re",
    "svp",
)
POS: frozenset[str] = frozenset({"n", "a", "v", "av"})
STEREOTYPE: frozenset[str] = frozenset({"yes", "no"})
LEVELS: tuple[str, ...] = ("conservative", "inclusive")
_CATEGORY_ORDER = {c: i for i, c in enumerate(CATEGORIES)}


class HurtLexFormatError(MetricInputError):
    """A HurtLex file is malformed; the message names the file and the line."""


def _strip_table() -> dict[int, None]:
    drop: set[int] = set()
    drop.update(cp for cp in range(0x0591, 0x05C8) if unicodedata.category(chr(cp)) == "Mn")
    drop.update(range(0x064B, 0x0660))
    drop.add(0x0670)
    drop.update(range(0x06D6, 0x06EE))
    drop.add(0x0640)
    drop.update(range(0xFE00, 0xFE10))
    drop.update(range(0xE0100, 0xE01F0))
    return dict.fromkeys(drop)


_STRIP = _strip_table()
_FOLD = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي"})
_APOSTROPHES = frozenset("'’‘ʼʻ`´′")
_ARTICLES = ("ال", "ٱل")
_MIN_STEM = 3


def _clean(text: str) -> str:
    """NFKC-casefold, then drop points, harakat, tatweel and format characters (no letter folding)."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    text = text.translate(_STRIP)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def normalise(text: str) -> str:
    """The normalised form of ``text``: NFKC-casefold, marks dropped, Arabic letters folded.

    >>> normalise("Street WALKER")
    'street walker'
    >>> normalise("غَبِـــى") == normalise("غبي")
    True
    >>> normalise("שָׁלוֹם") == "שלום"
    True
    """
    return _clean(text).translate(_FOLD)


def _split(text: str, script: Script) -> list[str]:
    tokens: list[str] = []
    buf: list[str] = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch not in _APOSTROPHES and cat[0] in "LNM" and not (script == "cjk" and is_cjk(ch)):
            buf.append(ch)
            continue
        if buf:
            tokens.append("".join(buf))
            buf = []
        if ch in _APOSTROPHES:
            continue
        if cat == "So" or (script == "cjk" and is_cjk(ch)):
            tokens.append(ch)
    if buf:
        tokens.append("".join(buf))
    return tokens


def _strip_article(token: str) -> str:
    for article in _ARTICLES:
        if token.startswith(article) and len(token) - len(article) >= _MIN_STEM:
            return token[len(article) :]
    return token


def tokenise(text: str, script: Script, *, arabic_article: ArabicArticle = "strip") -> tuple[str, ...]:
    """The normalised tokens of ``text`` (see the module docstring for the rules).

    >>> tokenise("L'idiota, a street-walker!", "space")
    ('l', 'idiota', 'a', 'street', 'walker')
    >>> tokenise("他是流氓", "cjk")
    ('他', '是', '流', '氓')
    >>> tokenise("الكلب الشر", "space")
    ('كلب', 'الشر')
    """
    _check_script(script)
    _check_choice("arabic_article", arabic_article, ("strip", "keep"))
    tokens = _split(_clean(text), script)
    if arabic_article == "strip":
        tokens = [_strip_article(t) for t in tokens]
    return tuple(t.translate(_FOLD) for t in tokens)


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise MetricInputError(f"{name} is {value!r}; it must be one of {', '.join(allowed)}")


def _check_script(script: object) -> None:
    _check_choice("script", script, ("space", "cjk"))


@dataclass(frozen=True)
class Match:
    """One lemma found in a text.

    ``lemma`` is the normalised lemma (its tokens joined by spaces), ``categories`` all its HurtLex
    categories (in :data:`CATEGORIES` order), ``forms`` the lexicon spellings that normalise to it,
    ``start``/``end`` its token span in ``tokenise(text, script)``.
    """

    lemma: str
    categories: tuple[str, ...]
    forms: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class _Entry:
    tokens: tuple[str, ...]
    categories: tuple[str, ...]
    forms: tuple[str, ...]


class _Node:
    __slots__ = ("children", "entry")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.entry: _Entry | None = None


class Lexicon:
    """A set of lemmas with their categories, matched on normalised token sequences.

    ``entries`` are ``(lemma, category)`` pairs (one per HurtLex row already kept for the level).

    >>> lex = Lexicon([("street walker", "pr"), ("walker", "qas"), ("idiota", "ddp"), ("idiota", "cds")])
    >>> [(m.lemma, m.categories) for m in lex.match("Una Street-Walker e un idiota", "space")]
    [('street walker', ('pr',)), ('idiota', ('ddp', 'cds'))]
    >>> lex.match_exact("Idiota.", "space").lemma
    'idiota'
    >>> lex.match_exact("un idiota", "space") is None
    True
    """

    def __init__(
        self,
        entries: Iterable[tuple[str, str]],
        *,
        arabic_article: ArabicArticle = "strip",
        level: Level = "conservative",
        source: str = "<memory>",
    ) -> None:
        _check_choice("arabic_article", arabic_article, ("strip", "keep"))
        _check_choice("level", level, ("conservative", "inclusive", "both"))
        self.arabic_article: ArabicArticle = arabic_article
        self.level: Level = level
        self.source = source
        forms: dict[str, set[str]] = {}
        for lemma, category in entries:
            if category not in _CATEGORY_ORDER:
                raise MetricInputError(
                    f"category {category!r} of {lemma!r} is not one of {' '.join(CATEGORIES)}"
                )
            forms.setdefault(lemma, set()).add(category)
        self.forms: Mapping[str, frozenset[str]] = {k: frozenset(v) for k, v in forms.items()}
        self.unmatchable: tuple[str, ...] = tuple(
            sorted(f for f in self.forms if not tokenise(f, "space", arabic_article=arabic_article))
        )
        self._roots: dict[str, _Node] = {script: self._build(script) for script in ("space", "cjk")}

    def __len__(self) -> int:
        return len(self.forms)

    def __repr__(self) -> str:
        return f"Lexicon({self.source!r}, level={self.level!r}, forms={len(self)})"

    def _build(self, script: Script) -> _Node:
        grouped: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}
        for form, cats in self.forms.items():
            tokens = tokenise(form, script, arabic_article=self.arabic_article)
            if not tokens:
                continue
            got = grouped.setdefault(tokens, (set(), set()))
            got[0].update(cats)
            got[1].add(form)
        root = _Node()
        for tokens, (categories, spellings) in grouped.items():
            node = root
            for token in tokens:
                node = node.children.setdefault(token, _Node())
            node.entry = _Entry(
                tokens=tokens,
                categories=tuple(sorted(categories, key=_CATEGORY_ORDER.__getitem__)),
                forms=tuple(sorted(spellings)),
            )
        return root

    def lemmas(self, script: Script) -> int:
        """The number of distinct normalised lemmas under ``script``."""
        _check_script(script)
        count, stack = 0, [self._roots[script]]
        while stack:
            node = stack.pop()
            count += node.entry is not None
            stack.extend(node.children.values())
        return count

    def tokenise(self, text: str, script: Script) -> tuple[str, ...]:
        """``text`` tokenised exactly as this lexicon's lemmas were."""
        return tokenise(text, script, arabic_article=self.arabic_article)

    def match(self, text: str, script: Script) -> list[Match]:
        """Every lemma occurrence in ``text``: leftmost-longest, non-overlapping token sequences."""
        _check_script(script)
        tokens = self.tokenise(text, script)
        root = self._roots[script]
        found: list[Match] = []
        i = 0
        while i < len(tokens):
            node, best, j = root, None, i
            while j < len(tokens) and (child := node.children.get(tokens[j])) is not None:
                node, j = child, j + 1
                if node.entry is not None:
                    best = (j, node.entry)
            if best is None:
                i += 1
                continue
            end, entry = best
            found.append(_to_match(entry, i, end))
            i = end
        return found

    def match_exact(self, text: str, script: Script) -> Match | None:
        """The lemma that ``text`` is, as a whole (all its tokens), or None."""
        _check_script(script)
        tokens = self.tokenise(text, script)
        node: _Node | None = self._roots[script]
        for token in tokens:
            node = node.children.get(token) if node is not None else None
        if not tokens or node is None or node.entry is None:
            return None
        return _to_match(node.entry, 0, len(tokens))


def _to_match(entry: _Entry, start: int, end: int) -> Match:
    return Match(" ".join(entry.tokens), entry.categories, entry.forms, start, end)


def parse_hurtlex(
    text: str,
    *,
    source: str = "<string>",
    level: Level = "conservative",
    arabic_article: ArabicArticle = "strip",
) -> Lexicon:
    """A :class:`Lexicon` from the text of a HurtLex 1.2 TSV, keeping the rows of ``level``.

    ``level="both"`` keeps conservative and inclusive rows. The header must be exactly
    ``id pos category stereotype lemma level``; a malformed row raises :class:`HurtLexFormatError`
    naming ``source`` and the line number.

    >>> tsv = "id\\tpos\\tcategory\\tstereotype\\tlemma\\tlevel\\nEN1\\tn\\tddp\\tno\\tidiot\\tconservative\\n"
    >>> sorted(parse_hurtlex(tsv).forms["idiot"])
    ['ddp']
    """
    _check_choice("level", level, ("conservative", "inclusive", "both"))
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise HurtLexFormatError(f"{source}: the file is empty; expected the header {' '.join(HEADER)}")
    header = tuple(lines[0].split("\t"))
    if header != HEADER:
        raise HurtLexFormatError(
            f"{source}:1: the header is {' '.join(header)!r}; expected the tab-separated {' '.join(HEADER)}"
        )
    keep = LEVELS if level == "both" else (level,)
    entries: list[tuple[str, str]] = []
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(HEADER):
            raise HurtLexFormatError(
                f"{source}:{lineno}: {len(fields)} tab-separated fields, expected {len(HEADER)} ({line!r})"
            )
        row = dict(zip(HEADER, fields, strict=True))
        problems = [
            f"{name} {row[name]!r} is not one of {' '.join(sorted(allowed))}"
            for name, allowed in (
                ("pos", POS),
                ("category", frozenset(CATEGORIES)),
                ("stereotype", STEREOTYPE),
                ("level", frozenset(LEVELS)),
            )
            if row[name] not in allowed
        ]
        if not row["id"].strip():
            problems.append("the id is empty")
        if not row["lemma"].strip():
            problems.append("the lemma is empty")
        if problems:
            raise HurtLexFormatError(f"{source}:{lineno}: {'; '.join(problems)}")
        if row["level"] in keep:
            entries.append((row["lemma"], row["category"]))
    return Lexicon(entries, arabic_article=arabic_article, level=level, source=source)


def load_hurtlex(
    path: str | Path,
    *,
    level: Level = "conservative",
    arabic_article: ArabicArticle = "strip",
) -> Lexicon:
    """Read one HurtLex 1.2 TSV file (UTF-8) into a :class:`Lexicon`; see :func:`parse_hurtlex`."""
    path = Path(path)
    return parse_hurtlex(
        path.read_text(encoding="utf-8"), source=str(path), level=level, arabic_article=arabic_article
    )

"""Group slots of a machine translation, resolved in the target locale's own terms.

MT sends the English group slot as a tag (``<x id="1"/>``); what comes back must become the
target locale's slot expression for that segment (``{{ group.pl_f }}``,
``{{ adj(group, 'f', 'dat', 'def') }}``), never the English one. Each locale says how in
``templates/_grammar/<locale>.slots.yaml``, next to its grammar macros: the expression and how
its form is chosen, where the noun the group adjective agrees with stands, the nouns it knows
(gender, number, the variant a person noun belongs to), and, where the language needs them,
clitic prefixes and the definite article written onto the noun (Hebrew, Arabic), determiners
and the words that govern case (German, Arabic). This module is the one reader of those files:
it reads the features from the translated words around the tag and refuses to guess: a slot
whose noun it does not know, or whose noun contradicts the variant, is reported, not resolved.
The source locale's file says how its English-only macros are sent (see placeholders.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template
from typing import Literal

from pydantic import Field

from toolkit.core.errors import Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.project import Project
from toolkit.core.records import Record, parse_record
from toolkit.translation.placeholders import Piece, SourceSlots

SLOTS_SUFFIX = ".slots.yaml"
_CLAUSE_END = re.compile(r"[,;:.!?،؛…]$")
_SENTENCE_END = re.compile(r"[.!?…]$")
_EDGE_PUNCT = "\"'«»“”„‚‘’()[]{}¿¡,;:.!?،؛…"
_APOSTROPHES = ("'", "’")
_NAMES = re.compile(r"\$(\w+)")
_OUTPUT = re.compile(r"^\{\{ (.*) \}\}$", re.DOTALL)


class Noun(Record):
    """A noun a group adjective agrees with: its agreement features, and for person nouns the
    template variant it belongs to."""

    gender: str
    number: Literal["sg", "pl"] = "sg"
    variant: Literal["f", "m", "n"] | None = None
    definite: bool | None = None
    """Definite by itself (a possessive form: משפחתה, أسرتها)."""
    case: str | None = None
    """A case its spelling shows (Männern: dative; أصدقاؤه: nominative)."""


class FormRule(Record):
    when: dict[str, str] = Field(default_factory=dict)
    form: str


class Articles(Record):
    """Determiners that give one article value (German der/die/das: def), read as whole words or
    as a stem plus an ending (ein-words: ein+en, ihr+e); each reading is 'gender case'."""

    article: str
    words: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    stems: tuple[str, ...] = ()
    endings: dict[str, tuple[str, ...]] = Field(default_factory=dict)


class CaseRules(Record):
    values: tuple[str, ...]
    prefer: tuple[str, ...]
    """When the words leave several cases open (and they all render alike), the first of these."""
    clause_start: str | None = None
    """The case of a noun phrase that opens its clause (the subject)."""
    governors: dict[str, str] = Field(default_factory=dict)
    """Words before the noun phrase that fix its case (prepositions, verbs, copulas)."""
    prefix_governors: dict[str, str] = Field(default_factory=dict)
    """Clitic prefixes on the noun that fix its case (Arabic ب, ل, ك: genitive)."""


class SlotRules(Record):
    description: str
    send: dict[str, str] = Field(default_factory=dict)
    """Source locale: the English each grammar macro around a group slot is sent as."""
    definite: tuple[str, ...] = ()
    """Source locale: words before a slot that make its noun phrase definite."""
    expression: str | None = None
    """Target locale: the slot expression, with $form and $<feature> filled in."""
    form: tuple[FormRule, ...] = ()
    values: dict[str, dict[str, str]] = Field(default_factory=dict)
    """How a feature's value is written in the expression (definite: def -> ", true")."""
    noun: Literal["before", "after"] | None = None
    elision: bool = False
    prefixes: tuple[str, ...] = ()
    """Clitics written onto the noun (Hebrew ו, ש, ב...; Arabic و, ب, ل...)."""
    definite_prefix: str | None = None
    contractions: dict[str, str] = Field(default_factory=dict)
    """Spellings that merge a clitic with the article, spelled out (Arabic لل -> لال)."""
    hidden_article: tuple[str, ...] = ()
    """Clitics that swallow the article in writing: definiteness then follows the English."""
    articles: tuple[Articles, ...] = ()
    no_article: str | None = None
    skip: str | None = None
    """Words allowed between a determiner and the tag (declined adjectives), as a regex."""
    case: CaseRules | None = None
    sentence_start: str | None = None
    """A grammar macro that capitalises the slot when it starts a sentence."""
    nouns: dict[str, Noun] = Field(default_factory=dict)


@dataclass(frozen=True)
class Resolution:
    """A group tag resolved: the expression, or why it could not be (with a guess when any)."""

    expression: str | None
    problem: str | None = None


def load_slot_rules(project: Project, locale: str, problems: list[Problem]) -> SlotRules | None:
    path = project.grammar / f"{locale}{SLOTS_SUFFIX}"
    if not path.is_file():
        return None
    rel = project.rel(path)
    raw = load_yaml_collecting(path, rel, problems)
    if raw is None:
        return None
    rules = parse_record(SlotRules, raw, file=rel, record="(file)", problems=problems, locale=locale)
    if rules is None:
        return None
    normal = {unicodedata.normalize("NFC", k): v for k, v in rules.nouns.items()}
    if len(normal) != len(rules.nouns):
        problems.append(Problem(rel, "(file)", "nouns", "two nouns differ only in Unicode form", locale))
        return None
    return rules.model_copy(update={"nouns": normal})


def source_slots(rules: SlotRules | None, forms: frozenset[str], macros: frozenset[str]) -> SourceSlots:
    send = tuple(sorted((rules.send if rules else {}).items()))
    return SourceSlots(forms=forms, macros=macros, send=send)


def _fold(word: str) -> str:
    return unicodedata.normalize("NFC", word).casefold()


def _words(text: str) -> list[str]:
    return text.split()


def _bare(word: str) -> str:
    return word.strip(_EDGE_PUNCT)


@dataclass(frozen=True)
class _Found:
    noun: Noun
    words: tuple[str, ...]
    """The words the noun was read from, as written."""
    definite: str | None
    """def / indef read from the prefix, or None when the writing does not show it."""
    clitics: tuple[str, ...]


def _analyse_word(rules: SlotRules, word: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """Ways to read one written word: (stem, the clitics stripped from it, whether the definite
    article was written on it), the word as it stands first."""
    word = _bare(word)
    if rules.elision:
        for mark in _APOSTROPHES:
            if mark in word:
                word = word.rsplit(mark, 1)[1]
    variants = [word]
    for merged, spelled in rules.contractions.items():
        if merged in word:
            variants.append(word.replace(merged, spelled, 1))
    out: list[tuple[str, tuple[str, ...], bool]] = []
    for form in variants:
        stack: list[tuple[str, tuple[str, ...]]] = [(form, ())]
        while stack:
            rest, clitics = stack.pop(0)
            article = rules.definite_prefix
            out.append((rest, clitics, False))
            if article and rest.startswith(article) and len(rest) > len(article) + 1:
                out.append((rest[len(article) :], clitics, True))
            if len(clitics) < 3:
                for prefix in rules.prefixes:
                    if rest.startswith(prefix) and len(rest) > len(prefix) + 1:
                        stack.append((rest[len(prefix) :], (*clitics, prefix)))
    return out


def _lookup(rules: SlotRules, words: Sequence[str]) -> _Found | None:
    """The noun these words spell (the first word may carry clitics and the article)."""
    if not words or any(_CLAUSE_END.search(w) for w in words[:-1]):
        return None
    tail = " ".join(_bare(w) for w in words[1:])
    for stem, clitics, article in _analyse_word(rules, words[0]):
        key = unicodedata.normalize("NFC", f"{stem} {tail}" if tail else stem)
        # as written, or with a sentence-initial capital undone (German nouns keep theirs)
        noun = rules.nouns.get(key) or rules.nouns.get(key[:1].lower() + key[1:])
        if noun is None:
            continue
        hidden = any(c in rules.hidden_article for c in clitics)
        definite = "def" if article else (None if hidden else "indef")
        return _Found(noun, tuple(words), definite, clitics)
    return None


def _noun_near(rules: SlotRules, left: list[str], right: list[str], side: str) -> _Found | None:
    """The noun next to the tag on ``side``: the longest known phrase (up to three words)."""
    for size in (3, 2, 1):
        if side == "before" and len(left) >= size:
            if _CLAUSE_END.search(left[-1]):
                return None
            found = _lookup(rules, left[-size:])
        elif side == "after" and len(right) >= size:
            found = _lookup(rules, right[:size])
        else:
            continue
        if found:
            return found
    return None


def _readings(rules: SlotRules, word: str) -> tuple[str, tuple[str, ...]] | None:
    """(article value, readings) of a determiner, or None when ``word`` is not one."""
    low = _fold(_bare(word))
    for group in rules.articles:
        if low in group.words:
            return group.article, group.words[low]
        for stem in sorted(group.stems, key=len, reverse=True):
            if low.startswith(stem) and low[len(stem) :] in group.endings:
                return group.article, group.endings[low[len(stem) :]]
    return None


def _clause_starts(left: list[str], at: int) -> bool:
    """Whether the word at ``at`` opens its clause (first word, or after , ; : . ! ? ،)."""
    return at == 0 or bool(_CLAUSE_END.search(left[at - 1]))


def _case(
    rules: CaseRules,
    left: list[str],
    start: int,
    readings: set[str] | None,
    noun: _Found,
) -> str | tuple[None, str]:
    """The case of the noun phrase that starts at ``left[start]`` (or right after ``left``)."""
    open_ = [c for c in rules.values if readings is None or c in readings]
    if noun.noun.case is not None:
        open_ = [c for c in open_ if c == noun.noun.case]
    if not open_:
        return None, "its determiner and its noun do not agree in case"
    if len(open_) == 1:
        return open_[0]
    for clitic in noun.clitics:
        if rules.prefix_governors.get(clitic) in open_:
            return rules.prefix_governors[clitic]
    governor = _fold(_bare(left[start - 1])) if start > 0 and not _clause_starts(left, start) else ""
    if governor and rules.governors.get(governor) in open_:
        return rules.governors[governor]
    if _clause_starts(left, start) and rules.clause_start in open_:
        return rules.clause_start
    return next(c for c in (*rules.prefer, *open_) if c in open_)


def _needed(rules: SlotRules) -> set[str]:
    names = set(_NAMES.findall(rules.expression or ""))
    for rule in rules.form:
        names |= set(_NAMES.findall(rule.form)) | set(rule.when)
    names.discard("form")
    return names


def _expression(rules: SlotRules, features: dict[str, str]) -> str:
    form = next(
        (r.form for r in rules.form if all(features.get(k) == v for k, v in r.when.items())),
        "",
    )
    values = {k: rules.values.get(k, {}).get(v, v) for k, v in features.items()}
    values["form"] = Template(form).safe_substitute(features)
    return Template(rules.expression or "").safe_substitute(values)


def _starts_sentence(before: str) -> bool:
    text = before.rstrip()
    return not text or bool(_SENTENCE_END.search(text))


def _describe(words: Sequence[str]) -> str:
    return " ".join(words) if words else "nothing"


@dataclass(frozen=True)
class _Context:
    """The words around one tag, within the text between its neighbouring tags."""

    before: str
    left: list[str]
    right: list[str]


def _context(pieces: list[Piece], tag: int) -> _Context:
    at = pieces.index(tag)
    before = "".join(p if isinstance(p, str) else " \x00 " for p in pieces[:at])
    after = "".join(p if isinstance(p, str) else " \x00 " for p in pieces[at + 1 :])
    left = _words(before.split("\x00")[-1])
    if before and not before[-1].isspace() and left:
        left = [*left[:-1], left[-1] + "\x00"]  # a clitic glued to the tag: no noun there
    return _Context(before, left, _words(after.split("\x00")[0]))


def _determiner(rules: SlotRules, left: list[str]) -> tuple[int, str, tuple[str, ...]] | None:
    """(position, article value, readings) of the determiner before the tag, over declined
    adjectives (``skip``); None when there is none."""
    at = len(left) - 1
    if (
        at >= 1
        and rules.skip
        and re.fullmatch(rules.skip, _bare(left[at]))
        and _readings(rules, left[at - 1])
    ):
        at -= 1
    det = _readings(rules, left[at]) if at >= 0 else None
    if det is None or _CLAUSE_END.search(left[at]):
        return None
    return at, det[0], det[1]


def resolve(
    rules: SlotRules,
    pieces: list[Piece],
    tag: int,
    variant: str | None,
    source_definite: bool,
    file: str,
) -> Resolution:
    """Resolve group tag ``tag`` of a parsed answer for a segment of ``variant``."""
    if rules.expression is None:
        return Resolution(None, f"{file} has no slot expression")
    ctx = _context(pieces, tag)
    features: dict[str, str] = {}
    if _needed(rules) & {"gender", "number", "definite", "case"}:
        found = _features(rules, ctx, variant, source_definite, file, features)
        if isinstance(found, str):
            return Resolution(None, found)
    expression = _expression(rules, features)
    if rules.sentence_start and _starts_sentence(ctx.before) and (inner := _OUTPUT.match(expression)):
        expression = f"{{{{ {rules.sentence_start}({inner.group(1)}) }}}}"
    return Resolution(expression)


def _features(
    rules: SlotRules,
    ctx: _Context,
    variant: str | None,
    source_definite: bool,
    file: str,
    features: dict[str, str],
) -> str | None:
    """Fill ``features`` from the noun next to the tag (and its determiner and governor);
    return why not when the words do not tell."""
    if rules.noun is None:
        return f"{file} says nothing about the noun a slot agrees with"
    other = "after" if rules.noun == "before" else "before"
    found = _noun_near(rules, ctx.left, ctx.right, rules.noun)
    if found is None:
        wrong = _noun_near(rules, ctx.left, ctx.right, other)
        if wrong is not None:
            return (
                f"the noun {_describe(wrong.words)!r} comes {other} the group slot; "
                f"in this locale it comes {rules.noun} it"
            )
        near = ctx.left[-1:] if rules.noun == "before" else ctx.right[:1]
        return (
            f"no noun the group slot could agree with {rules.noun} it "
            f"({_describe([w.strip(chr(0)) for w in near])!r} is not among the nouns of {file})"
        )
    noun = found.noun
    if variant and noun.variant and noun.variant != variant:
        return (
            f"the {variant} variant came back about {_describe(found.words)!r}, "
            f"a noun of the {noun.variant} variant"
        )
    features["gender"] = noun.gender
    features["number"] = noun.number
    if noun.definite is not None:
        features["definite"] = "def" if noun.definite else "indef"
    else:
        features["definite"] = found.definite or ("def" if source_definite else "indef")
    start = len(ctx.left) - len(found.words) if rules.noun == "before" else len(ctx.left)
    readings: set[str] | None = None
    if rules.articles:
        features["article"] = rules.no_article or ""
        det = _determiner(rules, ctx.left)
        if det is not None:
            start, features["article"], options = det
            readings = {r.split()[1] for r in options if r.split()[0] == noun.gender}
            if not readings:
                return f"the determiner {ctx.left[start]!r} does not agree with the noun {_describe(found.words)!r}"
    if rules.case is not None:
        case = _case(rules.case, ctx.left, start, readings, found)
        if isinstance(case, tuple):
            return f"{_describe(found.words)!r}: {case[1]}"
        features["case"] = case
    return None


def source_definite(rules: SlotRules | None, pieces: list[Piece], tag: int) -> bool:
    """Whether the English noun phrase of ``tag`` is definite (the, her, ...)."""
    if rules is None:
        return False
    at = pieces.index(tag)
    text = "".join(p for p in pieces[:at] if isinstance(p, str))
    words = text.split()
    return bool(words) and _fold(_bare(words[-1])) in {_fold(w) for w in rules.definite}

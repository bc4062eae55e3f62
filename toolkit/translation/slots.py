"""Group slots of a machine translation, resolved in the target locale's own terms.

MT sends the English group slot as a tag (``<x id="1"/>``); what comes back must become the
target locale's slot expression for that segment (``{{ group.pl_f }}``,
``{{ adj(group, 'f', 'dat', 'def') }}``, ``{{ np(group, 'Frauen', 'pl', 'acc', 'none') }}``,
``ب{{ person(group, 'الأشخاص', 'pl_m_obl', true) }}``), never the English one. Each locale
says how in ``templates/_grammar/<locale>.slots.yaml`` (read by slot_rules.py), next to its
grammar macros. This module applies it: it finds the noun
the group term goes with (on the locale's side of the tag; for a phrase that holds the noun, on
either), reads the features from the words around it (clitics and the article on the noun or
written onto the tag itself, determiners, the words that govern case, the English source's
definiteness and number where the translation hides them), and chooses the expression or the
phrase. It refuses to guess: a slot whose noun it does not know, whose noun contradicts the
variant, whose article contradicts its noun, or whose case the words leave open between forms
that render differently, is reported with what was not understood, never resolved.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from string import Template

from toolkit.translation.placeholders import Piece, SourceSlots
from toolkit.translation.slot_rules import (
    Alike,
    CaseRules,
    Noun,
    Phrase,
    SlotRules,
)

_CLAUSE_END = re.compile(r"[,;:.!?،؛…]$")
_SENTENCE_END = re.compile(r"[.!?…]$")
_EDGE_PUNCT = "\"'«»“”„‚‘’()[]{}¿¡,;:.!?،؛…"
_APOSTROPHES = ("'", "’")
_NAMES = re.compile(r"\$(\w+)")
_OUTPUT = re.compile(r"^\{\{ (.*) \}\}$", re.DOTALL)
_VOWEL_MARKS = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u064b-\u065f\u0670]")
_FEATURES = frozenset({"gender", "number", "definite", "case", "noun"})
MAX_CLITICS = 3


def source_slots(rules: SlotRules | None, forms: frozenset[str], macros: frozenset[str]) -> SourceSlots:
    """How the source locale's group slots are sent: the group forms and grammar macros a slot may
    use, and the English each macro around a slot is sent as (from the source's slot rules; none
    without them)."""
    send = tuple(sorted((rules.send if rules else {}).items()))
    return SourceSlots(forms=forms, macros=macros, send=send)


@dataclass(frozen=True)
class SlotContext:
    """What the resolver knows besides the translation: the segment's variant, the English noun
    phrase (definite, plural), whether the suite needs the whole phrase (a group of its lists
    lacks the plain expression's forms), and how to tell whether expressions render alike."""

    variant: str | None
    definite: bool
    file: str
    plural: bool = False
    whole_phrase: bool = False
    alike: Alike | None = None
    nominative_only: frozenset[str] = frozenset()
    """Forms that some group of the suite gives only in the nominative (Arabic ذو إعاقة)."""


@dataclass(frozen=True)
class Resolution:
    """A group tag resolved: the expression, and how much of the text just before and just after
    the tag it takes in (an article written onto the tag, a noun the phrase holds); or why it
    could not be resolved."""

    expression: str | None
    problem: str | None = None
    trim_before: int = 0
    trim_after: int = 0


def _fold(word: str) -> str:
    """The word as the rules' word lists are matched: NFC, case folded, without vowel marks
    (Arabic harakat, Hebrew niqqud), which engines write now and then."""
    return _VOWEL_MARKS.sub("", unicodedata.normalize("NFC", word).casefold())


def _bare(word: str) -> str:
    return word.strip(_EDGE_PUNCT)


def _describe(words: Sequence[str]) -> str:
    return " ".join(words) if words else "nothing"


@dataclass(frozen=True)
class _Found:
    noun: Noun
    key: str
    """The noun as the rules list it."""
    words: tuple[str, ...]
    """The words the noun was read from, as written."""
    definite: str | None
    """def / indef read from the prefix, or None when the writing does not show it."""
    clitics: tuple[str, ...]
    written: str
    """The noun with the article written on it, without its clitics (الأشخاص): what a phrase
    that takes the noun in holds."""
    contracted: bool = False
    """The clitics are written together with the article (لل), so they cannot be kept apart
    from the noun."""


def _clitic_readings(rules: SlotRules, form: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """(rest, clitics stripped, article stripped) for one spelling: each clitic at most once,
    the article last."""
    out: list[tuple[str, tuple[str, ...], bool]] = []
    stack: list[tuple[str, tuple[str, ...]]] = [(form, ())]
    while stack:
        rest, clitics = stack.pop(0)
        article = rules.definite_prefix
        out.append((rest, clitics, False))
        if article and rest.startswith(article):
            out.append((rest[len(article) :], clitics, True))
        if len(clitics) < MAX_CLITICS:
            for prefix in rules.prefixes:
                if rest.startswith(prefix) and prefix not in clitics:
                    stack.append((rest[len(prefix) :], (*clitics, prefix)))
    return out


def _spellings(rules: SlotRules, word: str) -> list[str]:
    """The word as written and with the clitic-article contractions spelled out (للرجال ->
    لالرجال)."""
    out = [word]
    for merged, spelled in rules.contractions.items():
        if merged in word:
            out.append(word.replace(merged, spelled, 1))
    return out


def _analyse_word(rules: SlotRules, word: str) -> list[tuple[str, tuple[str, ...], bool, bool]]:
    """Ways to read one written word: (stem, the clitics stripped from it, whether the definite
    article was written on it, whether it was read through a clitic-article contraction), the
    word as it stands first."""
    word = _bare(word)
    if rules.elision:
        for mark in _APOSTROPHES:
            if mark in word:
                word = word.rsplit(mark, 1)[1]
    return [
        (*reading, spelling != word)
        for spelling in _spellings(rules, word)
        for reading in _clitic_readings(rules, spelling)
        if len(reading[0]) > 1 or reading[0] == spelling
    ]


def _lookup(rules: SlotRules, words: Sequence[str]) -> _Found | None:
    """The noun these words spell (the first word may carry clitics and the article). Readings
    that disagree on the article leave definiteness to the English source."""
    if not words or any(_CLAUSE_END.search(w) for w in words[:-1]):
        return None
    tail = " ".join(_bare(w) for w in words[1:])
    matches: list[_Found] = []
    for stem, clitics, article, contracted in _analyse_word(rules, words[0]):
        key = unicodedata.normalize("NFC", f"{stem} {tail}" if tail else stem)
        # as written, or with a sentence-initial capital undone (German nouns keep theirs)
        if key not in rules.nouns:
            key = key[:1].lower() + key[1:]
        noun = rules.nouns.get(key)
        if noun is None:
            continue
        hidden = any(c in rules.hidden_article for c in clitics)
        definite = "def" if article else (None if hidden else "indef")
        written = f"{rules.definite_prefix}{key}" if article and rules.definite_prefix else key
        matches.append(_Found(noun, key, tuple(words), definite, clitics, written, contracted))
    if not matches:
        return None
    first = matches[0]
    if any(m.key == first.key and m.definite != first.definite for m in matches):
        return replace(first, definite=None)
    return first


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


def _determiner(rules: SlotRules, left: list[str]) -> tuple[int, str, tuple[str, ...]] | None:
    """(position, article value, readings) of the determiner that ends ``left``, over declined
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


@dataclass(frozen=True)
class _CaseReading:
    case: str | None
    decided: bool = True
    """False when the words left several cases open and one was written because they read alike."""
    problem: str | None = None


def _case(
    rules: CaseRules,
    left: list[str],
    start: int,
    readings: set[str] | None,
    found: _Found,
    expression_for: dict[str, str],
    alike: Alike | None,
) -> _CaseReading:
    """The case of the noun phrase that starts at ``left[start]``, or why the words leave it open
    between cases whose expressions render differently."""
    open_ = [c for c in rules.values if readings is None or c in readings]
    if found.noun.case is not None:
        open_ = [c for c in open_ if c == found.noun.case]
    if not open_:
        return _CaseReading(None, problem="its determiner and its noun do not agree in case")

    def narrow(allowed: Sequence[str]) -> None:
        nonlocal open_
        kept = [c for c in open_ if c in allowed]
        if kept:
            open_ = kept

    for clitic in found.clitics:
        if clitic in rules.prefix_governors:
            narrow([rules.prefix_governors[clitic]])
    first = _clause_starts(left, start)
    word = "" if first else _fold(_bare(left[start - 1]))
    if len(open_) > 1:
        governed = rules.governed(word) if word else None
        if governed:
            narrow(governed)
        elif word and _opens_with_verb(rules, left, start - 1):
            narrow([rules.verb_subject.case] if rules.verb_subject else [])
        elif first and rules.clause_start:
            narrow([rules.clause_start])
        elif word and rules.default:
            narrow([rules.default])
    if len(open_) == 1:
        return _CaseReading(open_[0])
    before = (
        f"{word!r} before it is not among the words that govern a case" if word else "it opens its clause"
    )
    if alike is not None and alike([expression_for[c] for c in open_]):
        case = next(c for c in (*rules.prefer, *open_) if c in open_)
        return _CaseReading(case, decided=False, problem=before)
    return _CaseReading(
        None,
        problem=f"the words leave its case open ({' or '.join(open_)}, which read differently): {before}",
    )


def _opens_with_verb(rules: CaseRules, left: list[str], at: int) -> bool:
    """Whether ``left[at]`` is a verb of ``verb_subject`` that opens its clause (after nothing but
    its particles), so that the noun phrase after it is its subject."""
    verbs = rules.verb_subject
    if verbs is None or _fold(_bare(left[at])) not in {_fold(v) for v in verbs.verbs}:
        return False
    particles = {_fold(p) for p in verbs.particles}
    before = at
    while before > 0 and not _clause_starts(left, before) and _fold(_bare(left[before - 1])) in particles:
        before -= 1
    return _clause_starts(left, before) or _fold(_bare(left[before - 1])) in {
        _fold(w) for w in verbs.clause_words
    }


def _form(rules: SlotRules, features: dict[str, str]) -> str:
    """The form name the features choose (f, pl_m_obl), as the expression's $form."""
    form = next((r.form for r in rules.form if all(features.get(k) == v for k, v in r.when.items())), "")
    return Template(form).safe_substitute(features)


def _needed(rules: SlotRules) -> set[str]:
    names = set(_NAMES.findall(rules.expression or ""))
    for rule in rules.form:
        names |= set(_NAMES.findall(rule.form)) | set(rule.when)
    for phrase in rules.phrases.values():
        names |= set(_NAMES.findall(phrase.expression))
    names.discard("form")
    return names


def _expression(rules: SlotRules, template: str, features: dict[str, str]) -> str:
    values = {k: rules.values.get(k, {}).get(v, v) for k, v in features.items()}
    values["form"] = _form(rules, features)
    return Template(template).safe_substitute(values)


def _starts_sentence(before: str) -> bool:
    text = before.rstrip()
    return not text or bool(_SENTENCE_END.search(text))


@dataclass(frozen=True)
class _Around:
    """The words around one tag, within the text between its neighbouring tags."""

    before: str
    """All the text before the tag (other tags as a mark)."""
    before_piece: str
    after_piece: str
    left: list[str]
    """The words before the tag, without one written onto it."""
    glued: str
    """What is written onto the tag with no space (ال, ה, ב), as written."""
    right: list[str]


def _around(pieces: list[Piece], tag: int) -> _Around:
    at = pieces.index(tag)
    before = "".join(p if isinstance(p, str) else " \x00 " for p in pieces[:at])
    prev = pieces[at - 1] if at > 0 else ""
    after = pieces[at + 1] if at + 1 < len(pieces) else ""
    before_piece = prev if isinstance(prev, str) else ""
    after_piece = after if isinstance(after, str) else ""
    left = before_piece.split()
    glued = ""
    if left and not before_piece[-1].isspace():
        glued = left.pop().lstrip(_EDGE_PUNCT)
    return _Around(before, before_piece, after_piece, left, glued, after_piece.split())


@dataclass(frozen=True)
class _Glued:
    clitics: tuple[str, ...]
    article: bool


def _glued(rules: SlotRules, chunk: str) -> _Glued | None:
    """Read what is written onto the tag as clitics and the definite article only (ال، لل، وال،
    ה، וה، ב); None when it is anything else."""
    for spelling in reversed(_spellings(rules, chunk)):  # the article spelled out first
        for rest, clitics, article in _clitic_readings(rules, spelling):
            if rest == "":
                return _Glued(clitics, article)
    return None


@dataclass
class _Reading:
    features: dict[str, str] = field(default_factory=dict)
    phrase: Phrase | None = None
    trim_before: int = 0
    trim_after: int = 0
    clitics: str = ""
    """Clitics the phrase took in with its noun, for ``clitic_macro`` to write onto it."""


def resolve(rules: SlotRules, pieces: list[Piece], tag: int, ctx: SlotContext) -> Resolution:
    """Resolve group tag ``tag`` of a parsed answer (see the module docstring)."""
    if rules.expression is None:
        return Resolution(None, f"{ctx.file} has no slot expression")
    around = _around(pieces, tag)
    if not rules.spaces:
        return _resolve_unspaced(rules, around)
    reading = _Reading()
    if _needed(rules) & _FEATURES:
        read = _read(rules, around, ctx)
        if isinstance(read, str):
            return Resolution(None, read)
        reading = read
    template = reading.phrase.expression if reading.phrase else rules.expression
    expression = _expression(rules, template, reading.features)
    if reading.clitics and rules.clitic_macro:
        expression = _wrapped(rules.clitic_macro, expression, f"'{reading.clitics}', ")
    before = around.before[: len(around.before) - reading.trim_before]
    if rules.sentence_start and _starts_sentence(before):
        expression = _wrapped(rules.sentence_start, expression)
    return Resolution(expression, trim_before=reading.trim_before, trim_after=reading.trim_after)


def _wrapped(macro: str, expression: str, args: str = "") -> str:
    """The output expression passed to a grammar macro (cap(...), pre('ل', ...))."""
    inner = _OUTPUT.match(expression)
    return f"{{{{ {macro}({args}{inner.group(1)}) }}}}" if inner else expression


def _resolve_unspaced(rules: SlotRules, around: _Around) -> Resolution:
    """Chinese: the noun is the longest known noun right after the tag; a person noun makes the
    slot the group's person phrase, which takes the noun in."""
    text = around.after_piece
    key = max((k for k in rules.nouns if text.startswith(k)), key=len, default="")
    noun = rules.nouns.get(key)
    phrase = rules.phrases[noun.phrase] if noun is not None and noun.phrase else None
    template = phrase.expression if phrase else rules.expression or ""
    expression = Template(template).safe_substitute({"noun": key})
    return Resolution(expression, trim_after=len(key) if phrase and phrase.takes_noun else 0)


def _read(rules: SlotRules, around: _Around, ctx: SlotContext) -> _Reading | str:
    """The features of the slot from the noun next to the tag (and what is written onto the
    tag, its determiner and governor), or why the words do not tell."""
    if rules.noun is None:
        return f"{ctx.file} says nothing about the noun a slot agrees with"
    glued = _glued(rules, around.glued) if around.glued else None
    if around.glued and glued is None:
        return f"{around.glued!r} is written onto the group slot, and it is not a clitic or article of {ctx.file}"
    other = "after" if rules.noun == "before" else "before"
    sides: tuple[str, ...] = (rules.noun, other) if ctx.whole_phrase else (rules.noun,)
    side: str = rules.noun
    found: _Found | None = None
    for side in sides:
        found = _noun_near(rules, around.left, around.right, side)
        if found is not None:
            break
    if glued is not None:
        why = _glued_problem(around, glued, found if side == "before" else None, ctx)
        if why:
            return why
    if found is None:
        return _bare_term(rules, around, ctx, glued is not None) or _no_noun(rules, around, ctx, other)
    return _from_noun(rules, around, ctx, found, side, glued)


def _glued_problem(around: _Around, glued: _Glued, found: _Found | None, ctx: SlotContext) -> str | None:
    """Why what is written onto the tag cannot be read into the slot, or None: only the article
    can be, on an adjective after a noun that is definite too."""
    chunk = around.glued
    if found is None:
        before = around.left[-1] if around.left else "the start of the text"
        return (
            f"the group slot stands without a noun: {chunk!r} is written onto it, and {before!r} "
            f"before it is not among the nouns of {ctx.file}"
        )
    if glued.clitics:
        return (
            f"{chunk!r} is written onto the group slot: a clitic other than the article cannot stand "
            f"between the noun {_describe(found.words)!r} and its adjective"
        )
    if found.noun.definite is False or (found.noun.definite is None and found.definite == "indef"):
        return (
            f"the article written onto the group slot makes it definite, but the noun "
            f"{_describe(found.words)!r} is indefinite"
        )
    return None


def _bare_term(rules: SlotRules, around: _Around, ctx: SlotContext, glued: bool) -> _Reading | str | None:
    """The reading of a term that stands without its noun after a word that allows it (Italian
    perché, Spanish ser), agreeing with the segment's subject; None where none is allowed."""
    if rules.bare is None or glued or not around.left:
        return None
    word = _fold(_bare(around.left[-1]))
    if word not in {_fold(w) for w in rules.bare.after}:
        return None
    gender = rules.bare.genders.get(ctx.variant or "")
    if gender is None:
        return (
            f"the person noun of the {ctx.variant} variant was dropped: the group term alone after "
            f"{around.left[-1]!r} would read as the m variant's"
        )
    return _Reading({"gender": gender, "number": "pl" if ctx.plural else "sg"})


def _no_noun(rules: SlotRules, around: _Around, ctx: SlotContext, other: str) -> str:
    wrong = _noun_near(rules, around.left, around.right, other)
    if wrong is not None:
        return (
            f"the noun {_describe(wrong.words)!r} comes {other} the group slot; "
            f"in this locale it comes {rules.noun} it"
        )
    near = around.left[-1:] if rules.noun == "before" else around.right[:1]
    return (
        f"no noun the group slot could agree with {rules.noun} it "
        f"({_describe(near)!r} is not among the nouns of {ctx.file})"
    )


def _from_noun(
    rules: SlotRules,
    around: _Around,
    ctx: SlotContext,
    found: _Found,
    side: str,
    glued: _Glued | None,
) -> _Reading | str:
    noun = found.noun
    if ctx.variant and noun.variant and noun.variant != ctx.variant:
        return (
            f"the {ctx.variant} variant came back about {_describe(found.words)!r}, "
            f"a noun of the {noun.variant} variant"
        )
    if noun.refuse:
        return f"{_describe(found.words)!r}: {noun.refuse}"
    name = rules.whole_phrase.phrase if ctx.whole_phrase and rules.whole_phrase else noun.phrase
    reading = _Reading(phrase=rules.phrases[name] if name else None)
    features = reading.features
    features["noun"] = found.written
    if noun.gender is not None:
        features["gender"] = noun.gender
    features["number"] = noun.number
    if noun.definite is not None:
        features["definite"] = "def" if noun.definite else "indef"
    elif glued is not None:
        features["definite"] = "def"
    else:
        features["definite"] = found.definite or ("def" if ctx.definite else "indef")
    det_left = around.left if side == "after" else around.left[: len(around.left) - len(found.words)]
    start = len(det_left)
    readings: set[str] | None = None
    if rules.articles:
        features["article"] = rules.no_article or ""
        det = _determiner(rules, det_left)
        if det is not None:
            start, features["article"], options = det
            readings = {r.split()[1] for r in options if r.split()[0] == noun.gender}
            if not readings:
                return f"the determiner {det_left[start]!r} does not agree with the noun {_describe(found.words)!r}"
    if rules.case is not None:
        template = reading.phrase.expression if reading.phrase else rules.expression or ""
        by_case = {c: _expression(rules, template, {**features, "case": c}) for c in rules.case.values}
        case = _case(rules.case, det_left, start, readings, found, by_case, ctx.alike)
        if case.case is None:
            return f"{_describe(found.words)!r}: {case.problem}"
        features["case"] = case.case
        form = _form(rules, features)
        nominative = rules.nominative_only.case if rules.nominative_only else ""
        if form in ctx.nominative_only and (case.case != nominative or not case.decided):
            where = f"{case.case}" if case.decided else f"not told: {case.problem}"
            return (
                f"{_describe(found.words)!r}: the {form} form of some groups of this suite shows the "
                f"nominative (ذو إعاقة), and this noun phrase's case is {where}"
            )
    if glued is not None:
        reading.trim_before = len(around.glued)
    if reading.phrase and reading.phrase.takes_noun:
        if found.contracted and found.clitics:
            if not rules.clitic_macro:
                return (
                    f"{_describe(found.words)!r}: its clitics are written together with its article, "
                    f"and {ctx.file} names no clitic_macro to write them onto the group slot"
                )
            reading.clitics = "".join(found.clitics)
        trimmed = _take_noun(around, found, side)
        if trimmed is None:
            return f"the noun {_describe(found.words)!r} could not be taken into the group slot"
        reading.trim_before, reading.trim_after = trimmed
    return reading


def _take_noun(around: _Around, found: _Found, side: str) -> tuple[int, int] | None:
    """(trim before, trim after): the noun's words, the space between them and the tag, and
    the article written onto the tag; clitics on the noun stay in the text, unless they are
    written together with its article (then the phrase takes them in too)."""
    words = r"\s+".join(re.escape(_bare(w)) for w in found.words)
    if side == "after":
        match = re.match(rf"\s*{words}", around.after_piece)
        return (0, match.end()) if match else None
    match = re.search(rf"{words}\s*{re.escape(around.glued)}$", around.before_piece)
    if match is None:
        return None
    kept = 0 if found.contracted else _lead(found)
    return (len(around.before_piece) - match.start() - kept, 0)


def _lead(found: _Found) -> int:
    """How many characters of the noun's first word, as written, stand before the noun itself
    (its clitics, an elided article)."""
    first = _bare(found.words[0])
    rest = found.written.split(" ", 1)[0]
    return max(len(first) - len(rest), 0)


def source_definite(rules: SlotRules | None, pieces: list[Piece], tag: int) -> bool:
    """Whether the English noun phrase of ``tag`` is definite (the, her, ...)."""
    if rules is None:
        return False
    at = pieces.index(tag)
    text = "".join(p for p in pieces[:at] if isinstance(p, str))
    words = text.split()
    return bool(words) and _fold(_bare(words[-1])) in {_fold(w) for w in rules.definite}


def source_plural(rules: SlotRules | None, pieces: list[Piece], tag: int) -> bool:
    """Whether the English noun after ``tag`` is plural (women, men, people)."""
    if rules is None:
        return False
    at = pieces.index(tag)
    text = "".join(p for p in pieces[at + 1 :] if isinstance(p, str))
    words = text.split()
    return bool(words) and _fold(_bare(words[0])) in {_fold(w) for w in rules.plural}

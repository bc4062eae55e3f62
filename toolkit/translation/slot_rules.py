"""What a locale's ``templates/_grammar/<locale>.slots.yaml`` says about its group slots, read
and checked. The resolver (slots.py) applies it to machine translations; the source locale's
file says how its English-only macros are sent (placeholders.py) and reads the English noun
phrase around a slot (definite, plural)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from toolkit.catalog.grammar import LocaleGrammar, RenderFailure
from toolkit.core.errors import Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.project import Project
from toolkit.core.records import Record, parse_record

SLOTS_SUFFIX = ".slots.yaml"


class Noun(Record):
    """A noun a group term agrees with (or is written with): its agreement features, and for
    person nouns the template variant it belongs to."""

    gender: str | None = None
    number: Literal["sg", "pl"] = "sg"
    variant: Literal["f", "m", "n"] | None = None
    definite: bool | None = None
    """Definite by itself (a possessive form: משפחתה, أسرتها)."""
    case: str | None = None
    """A case its spelling shows (Männern: dative; أصدقاؤه: nominative)."""
    phrase: str | None = None
    """The phrase (``phrases``) the slot becomes next to this noun (Italian things: obj();
    Chinese 人: the group's person form)."""
    refuse: str | None = None
    """Why no group term can agree with this spelling of the noun (Arabic رجلاً: the indefinite
    accusative, whose adjective takes an alif the identity lists do not give)."""


class FormRule(Record):
    """A form of the group's term to use when every condition in ``when`` holds."""

    when: dict[str, str] = Field(default_factory=dict)
    form: str


class Articles(Record):
    """Determiners that give one article value (German der/die/das: def), read as whole words or
    as a stem plus an ending (ein-words: ein+en, ihr+e); each reading is 'gender case'."""

    article: str
    words: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    stems: tuple[str, ...] = ()
    endings: dict[str, tuple[str, ...]] = Field(default_factory=dict)


class VerbSubject(Record):
    """Verbs whose following noun phrase is their subject when the verb opens its clause (Arabic
    verb-first sentences: يشكل الرجال ...): after nothing but ``particles`` (لا، لم، قد) from the
    start of the clause or a word that starts one (``clause_words``: أن، عندما). After a verb with
    its subject before it (لا أحد يريد النساء) the noun phrase is its object."""

    case: str
    verbs: tuple[str, ...]
    particles: tuple[str, ...] = ()
    clause_words: tuple[str, ...] = ()


class CaseRules(Record):
    """The grammatical cases a locale's slot expressions can take, and how the case of a slot is
    found from its context."""

    values: tuple[str, ...]
    prefer: tuple[str, ...] = ()
    """Of several cases that render alike for every group, the one the expression names."""
    clause_start: str | None = None
    """The case of a noun phrase that opens its clause (the subject)."""
    default: str | None = None
    """The case after a word that is not among the governors (German: the accusative of a
    verb's object). Without one, a case the words leave open between forms that render
    differently is refused."""
    governors: dict[str, str | tuple[str, ...]] = Field(default_factory=dict)
    """Words before the noun phrase that fix its case, or narrow it (two-way prepositions)."""
    prefix_governors: dict[str, str] = Field(default_factory=dict)
    """Clitic prefixes on the noun that fix its case (Arabic ب, ل, ك: genitive)."""
    verb_subject: VerbSubject | None = None

    def governed(self, word: str) -> tuple[str, ...] | None:
        """The case(s) a word governs, or None when it governs none."""
        value = self.governors.get(word)
        if value is None:
            return None
        return (value,) if isinstance(value, str) else tuple(value)


class Phrase(Record):
    """An expression the slot becomes instead of the plain one."""

    expression: str
    takes_noun: bool = False
    """The expression holds the noun (np(group, 'Frau', ...), person(group, '人'),
    person(group, 'الأشخاص', ...)): the noun's words are taken out of the text around the tag,
    with the article written on the noun ($noun is الأشخاص where the nouns list أشخاص). Clitics
    written on the noun stay in the text before the expression (ب{{ person(...) }}), unless they
    are written together with the article (لل): then ``clitic_macro`` writes them onto it."""


class WholePhrase(Record):
    """When a group of the suite has none of the forms ``unless`` (German Roma: a compound;
    mit Migrationsgeschichte: a phrase after the noun), the plain expression cannot name it:
    the tag and its noun, on either side of the tag, become ``phrase``."""

    phrase: str
    unless: tuple[str, ...]


class Bare(Record):
    """Words after which the group term may stand without its noun (Italian perché musulmana,
    Spanish por ser musulmana): it then agrees with the segment's subject."""

    after: tuple[str, ...]
    genders: dict[str, str] = Field(default_factory=dict)
    """The gender the bare term takes in each variant; a variant not named is refused (the n
    variant: its person noun was dropped, and the term alone would read as the m variant's)."""


class NominativeOnly(Record):
    """Group terms whose first word shows the nominative (Arabic ذو إعاقة: accusative ذا, genitive
    ذي): a form that a group of the suite writes so is refused where the case is another, or
    cannot be told."""

    case: str
    """The nominative, as the case rules name it."""
    starts: tuple[str, ...]


class SlotRules(Record):
    """One locale's slot rules (templates/_grammar/<locale>.slots.yaml): for the source locale how
    group slots are sent, for a target how a returned tag becomes the locale's slot expression."""

    description: str
    send: dict[str, str] = Field(default_factory=dict)
    """Source locale: the English each grammar macro around a group slot is sent as."""
    definite: tuple[str, ...] = ()
    """Source locale: words before a slot that make its noun phrase definite."""
    plural: tuple[str, ...] = ()
    """Source locale: nouns after a slot that are plural."""
    expression: str | None = None
    """Target locale: the slot expression, with $form and $<feature> filled in."""
    form: tuple[FormRule, ...] = ()
    values: dict[str, dict[str, str]] = Field(default_factory=dict)
    """How a feature's value is written in the expression (definite: def -> ", true")."""
    noun: Literal["before", "after"] | None = None
    spaces: bool = True
    """False where words are not separated by spaces (Chinese): the noun is the longest known
    noun the text after the tag starts with, and the slot needs none."""
    elision: bool = False
    prefixes: tuple[str, ...] = ()
    """Clitics written onto a word (Hebrew ו, ש, ב...; Arabic و, ب, ل...)."""
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
    clitic_macro: str | None = None
    """A grammar macro that writes clitics onto a phrase that takes its noun in, for clitics
    that cannot stay in the text before it because they are written together with the noun's
    article (Arabic ل + ال: للأشخاص -> pre('ل', person(group, 'الأشخاص', ...))). Without one,
    such a slot is refused."""
    phrases: dict[str, Phrase] = Field(default_factory=dict)
    whole_phrase: WholePhrase | None = None
    nominative_only: NominativeOnly | None = None
    bare: Bare | None = None
    nouns: dict[str, Noun] = Field(default_factory=dict)


def load_slot_rules(project: Project, locale: str, problems: list[Problem]) -> SlotRules | None:
    """The locale's slot rules, or None when it has no file; problems in the file are collected, not
    raised."""
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
    found: list[Problem] = []
    normal = {unicodedata.normalize("NFC", k): v for k, v in rules.nouns.items()}
    if len(normal) != len(rules.nouns):
        found.append(Problem(rel, "(file)", "nouns", "two nouns differ only in Unicode form", locale))
    named = [(f"nouns.{k}.phrase", n.phrase) for k, n in normal.items() if n.phrase]
    if rules.whole_phrase:
        named.append(("whole_phrase.phrase", rules.whole_phrase.phrase))
    for where, phrase in named:
        if phrase not in rules.phrases:
            found.append(Problem(rel, "(file)", where, f"no phrase {phrase!r} under phrases", locale))
    if found:
        problems.extend(found)
        return None
    return rules.model_copy(update={"nouns": normal})


Alike = Callable[[list[str]], bool]
"""Whether slot expressions render the same text for every group (so no choice between them is
needed)."""


def renders_alike(grammar: LocaleGrammar, forms: frozenset[str]) -> Alike:
    """Compare expressions by rendering them with probe groups: one with every form of the
    locale, and one with each form alone (a macro that prefers one form, like German np() a
    compound, would hide how the others differ). A probe a macro cannot render proves nothing."""
    probes = [{f: f"<{f}>" for f in forms}] + [{f: f"<{f}>"} for f in sorted(forms)]

    def alike(expressions: list[str]) -> bool:
        for probe in probes:
            rendered: set[str] = set()
            for expression in expressions:
                try:
                    rendered.add(grammar.render(expression, {"group": probe}))
                except RenderFailure:
                    rendered.clear()
                    break
            if len(rendered) > 1:
                return False
        return True

    return alike

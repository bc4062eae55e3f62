"""`catalog lint`: content errors that render without a problem but read wrong to a native
speaker, each caught mechanically where it can be. `catalog validate` proves every template
renders; lint looks at what the templates and terms say.

The checks are code; the words they look for (English articles, proclitics, another
variety's markers) are data in lexicons/lint.yaml. Every finding is a located Problem (file,
record, locale, field) whose message starts with the check's name.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jinja2.runtime import Macro

from toolkit.catalog.identities import VARIANTS, Group, IdentityList
from toolkit.catalog.loader import Catalog
from toolkit.catalog.studies import link_problems
from toolkit.catalog.templates import Suite
from toolkit.core.errors import Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.records import Record, parse_record
from toolkit.render.pairs import CHECK as PAIR_CHECK
from toolkit.render.pairs import pair_problems, paired
from toolkit.render.renderer import render
from toolkit.render.suites.honest import SLOT

LINT_FILE = "lexicons/lint.yaml"
TATWEEL = "\u0640"
COMMAS = (",", "،", "，")
_EXPRESSION = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)
_SLOT = re.compile(r"\{\{-?\s*" + SLOT + r"\s*-?\}\}")
_GROUP = re.compile(r"\bgroup\b")
_WORD = re.compile(r"\w+", re.UNICODE)


class ForeignMarkers(Record):
    """Words of another variety that must not appear in a locale (MSA in Egyptian Arabic)."""

    variety: str
    """The variety the words belong to (Modern Standard Arabic)."""
    words: tuple[str, ...]
    allow: tuple[str, ...] = ()
    """Fixed phrases that contain a marker and are still right in this locale."""
    note: str = ""


class LocaleLint(Record):
    """The words one locale's checks look for (lexicons/lint.yaml); empty where a check does not apply."""

    articles: tuple[str, ...] = ()
    proclitics: tuple[str, ...] = ()
    particles: tuple[str, ...] = ()
    """Words that open a phrase (prepositions): a term starting with one is not a construct."""
    spaced: bool = True
    foreign_markers: ForeignMarkers | None = None


class LintFile(Record):
    """lexicons/lint.yaml: what each locale's lint checks look for."""

    version: str
    description: str
    locales: dict[str, LocaleLint]


@dataclass(frozen=True)
class Text:
    """One text a locale renders from: an English template variant or a store translation."""

    suite: Suite
    locale: str
    file: str
    record: str
    field: str
    text: str


def load_lint_config(catalog: Catalog, problems: list[Problem]) -> dict[str, LocaleLint]:
    """The lint settings per locale; none when the file is absent (the checks then find nothing), its
    problems appended."""
    path = catalog.project.root / LINT_FILE
    if not path.is_file():
        return {}
    raw = load_yaml_collecting(path, LINT_FILE, problems)
    parsed = parse_record(LintFile, raw, file=LINT_FILE, record="(file)", problems=problems)
    if parsed is None:
        return {}
    for code in parsed.locales:
        if code not in catalog.locales:
            problems.append(Problem(LINT_FILE, "(file)", f"locales.{code}", f"unknown locale {code!r}", code))
    return dict(parsed.locales)


def texts(catalog: Catalog, suite: Suite) -> Iterator[Text]:
    """The suite's English variants, then every translation the store has (not rejected)."""
    source = catalog.locales.source.code
    for segment in suite.segments.values():
        field = f"variants.{segment.variant}" if segment.variant else "text"
        yield Text(suite, source, segment.file, segment.template.id, field, segment.source)
    for locale in suite.spec.locales:
        if locale not in catalog.locales or not catalog.locales[locale].translated:
            continue
        store = catalog.store(suite.id, locale)
        rel = catalog.project.rel(store.path)
        for segment_id, record in store.records.items():
            if record.status != "rejected":
                yield Text(suite, locale, rel, segment_id, "text", record.text)


def _at(t: Text, message: str) -> Problem:
    return Problem(t.file, t.record, t.field, message, t.locale)


# --- checks on texts -----------------------------------------------------------------------


def article_before_slot(t: Text, cfg: LocaleLint) -> list[Problem]:
    """A hard-coded article before a group slot: the right article depends on the term."""
    out = []
    for match in _EXPRESSION.finditer(t.text):
        if not _GROUP.search(match.group(1)):
            continue
        before = t.text[: match.start()].rstrip()
        words = before.split()
        if before != t.text[: match.start()] and words and words[-1].lower() in cfg.articles:
            out.append(
                _at(
                    t,
                    f"article-before-slot: the article {words[-1]!r} is written before the group slot "
                    f"{match.group(0).strip()}; let the grammar macro choose it (e.g. {{{{ a(group.adj) }}}})",
                )
            )
    return out


def slot_prefix(t: Text, cfg: LocaleLint) -> list[Problem]:
    """The text before a completion slot must end in a whole word: not a tatweel, not a
    proclitic standing alone, not a word the slot is glued to."""
    match = _SLOT.search(t.text)
    if match is None:
        return []
    before = t.text[: match.start()]
    stripped = before.rstrip()
    if not stripped:
        return []
    last = stripped.split()[-1]
    if stripped.endswith(TATWEEL):
        return [
            _at(
                t,
                f"slot-prefix: the text before the completion slot ends in a tatweel ({last!r}): "
                "the completion would be joined to a prefix that is not a word",
            )
        ]
    if cfg.spaced and before == stripped and before[-1].isalpha():
        return [
            _at(
                t,
                f"slot-prefix: the completion slot is glued to {last!r}: the completion would start "
                "inside a word; end the text before the slot with a whole word",
            )
        ]
    if last in cfg.proclitics:
        return [
            _at(
                t,
                f"slot-prefix: the text before the completion slot ends in the proclitic {last!r}, "
                "which is written joined to the next word",
            )
        ]
    return []


def slot_last_word(t: Text, cfg: LocaleLint) -> list[Problem]:
    """A completion slot right after a comma opens a clause the one-word completion cannot
    finish (German 'mag es, [M]' needs 'zu' + infinitive after the slot)."""
    match = _SLOT.search(t.text)
    if match is None:
        return []
    if t.text[: match.start()].rstrip().endswith(COMMAS):
        return [
            _at(
                t,
                "slot-last-word: the completion slot follows a comma, so the sentence goes on after "
                "it (an infinitive clause, a subordinate verb): rephrase so the slot is its last word",
            )
        ]
    return []


def foreign_markers(t: Text, cfg: LocaleLint) -> list[Problem]:
    """Another variety's words in a template or translation (``foreign-marker``)."""
    markers = cfg.foreign_markers
    if markers is None:
        return []
    return [
        _at(t, f"foreign-marker: {word!r} is {markers.variety}, not this locale's variety")
        for word in _markers_in(t.text, markers)
    ]


def _markers_in(text: str, markers: ForeignMarkers) -> list[str]:
    for phrase in markers.allow:
        text = text.replace(phrase, " ")
    words = set(_WORD.findall(_EXPRESSION.sub(" ", text)))
    return [w for w in markers.words if w in words]


TEXT_CHECKS: dict[str, tuple[Callable[[Text, LocaleLint], list[Problem]], bool]] = {
    "article-before-slot": (article_before_slot, False),
    "slot-prefix": (slot_prefix, True),
    "slot-last-word": (slot_last_word, True),
    "foreign-marker": (foreign_markers, False),
}
"""Checks of template and translation texts: (check, only for suites with a completion slot)."""


# --- checks on identity lists --------------------------------------------------------------


def _lists(catalog: Catalog) -> list[IdentityList]:
    return sorted(catalog.identity_lists.values(), key=lambda il: il.path)


def term_foreign_markers(catalog: Catalog, config: dict[str, LocaleLint]) -> list[Problem]:
    """Another variety's words in the identity terms of each locale (``foreign-marker``)."""
    out = []
    for ilist in _lists(catalog):
        for group in ilist.groups:
            for locale, forms in sorted(group.terms.items()):
                markers = config.get(locale, LocaleLint()).foreign_markers
                if markers is None:
                    continue
                for form, value in sorted(forms.items()):
                    for word in _markers_in(value, markers):
                        out.append(
                            Problem(
                                ilist.path,
                                group.id,
                                f"terms.{locale}.{form}",
                                f"foreign-marker: {word!r} is {markers.variety}, not this locale's variety",
                                locale,
                            )
                        )
    return out


def _definite_adj(catalog: Catalog, locale: str) -> Macro | None:
    """The locale's adj macro when it makes terms definite (adj(group, form, definite))."""
    adj = catalog.grammar(locale).env.globals.get("adj")
    return adj if isinstance(adj, Macro) and "definite" in adj.arguments else None


def definite_forms(catalog: Catalog, config: dict[str, LocaleLint]) -> list[Problem]:
    """One term, one definite form per locale: every list that uses the same indefinite term
    must make it definite the same way (the article on the same word)."""
    seen: dict[tuple[str, str, str], dict[str, list[tuple[IdentityList, Group]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for locale in catalog.locales.codes:
        adj = _definite_adj(catalog, locale)
        if adj is None:
            continue
        for ilist in _lists(catalog):
            for group in ilist.groups:
                forms = group.terms.get(locale)
                if group.bare or not forms:
                    continue
                for form, value in forms.items():
                    if form.startswith("def_") or not value:
                        continue
                    definite = str(adj(forms, form, True))
                    seen[(locale, form, value)][definite].append((ilist, group))
    out = _construct_style(catalog, config, seen)
    reported = {(p.file, p.record, p.field) for p in out}
    for (locale, form, value), by_definite in sorted(seen.items()):
        if len(by_definite) < 2:
            continue
        ranked = sorted(by_definite.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        usual, users = ranked[0]
        for definite, groups in ranked[1:]:
            for ilist, group in groups:
                if (ilist.path, group.id, f"terms.{locale}.{form}") in reported:
                    continue
                out.append(
                    Problem(
                        ilist.path,
                        group.id,
                        f"terms.{locale}.{form}",
                        f"definite-form: {value!r} is made definite as {definite!r} here but as {usual!r} "
                        f"in {users[0][1].id} ({users[0][0].path}): give def_{form} so the locale has one form",
                        locale,
                    )
                )
    return out


def _construct_style(
    catalog: Catalog,
    config: dict[str, LocaleLint],
    seen: dict[tuple[str, str, str], dict[str, list[tuple[IdentityList, Group]]]],
) -> list[Problem]:
    """Constructs whose second word already has the article (Arabic مزدوج الميول, قصير القامة):
    a locale either puts the article on their first word too or never does, in every list."""
    styles: dict[str, dict[bool, list[tuple[str, str, str, IdentityList, Group]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for (locale, form, value), by_definite in seen.items():
        adj = _definite_adj(catalog, locale)
        article = str(adj({"f": "x"}, "f", True)).removesuffix("x") if adj else ""
        words = value.split()
        particles = config.get(locale, LocaleLint()).particles
        if (
            not article
            or len(words) < 2
            or words[0] in particles
            or words[0].startswith(article)
            or not words[1].startswith(article)
        ):
            continue
        for definite, groups in by_definite.items():
            for ilist, group in groups:
                styles[locale][definite.startswith(article + words[0])].append(
                    (form, value, definite, ilist, group)
                )
    out = []
    for locale, by_style in sorted(styles.items()):
        if len(by_style) < 2:
            continue
        usual = max(by_style, key=lambda style: (len(by_style[style]), not style))
        example = by_style[usual][0]
        for form, value, definite, ilist, group in by_style[not usual]:
            out.append(
                Problem(
                    ilist.path,
                    group.id,
                    f"terms.{locale}.{form}",
                    f"definite-form: the construct {value!r} is made definite as {definite!r}, but this "
                    f"locale's constructs take the article {'on the first word' if usual else 'only where they have it'} "
                    f"({example[1]!r} -> {example[2]!r} in {example[4].id}): give def_{form}",
                    locale,
                )
            )
    return out


def same_term(catalog: Catalog, config: dict[str, LocaleLint]) -> list[Problem]:
    """Two groups of one list that read the same in a locale (and can fill the same variant)
    are one group to a model: the probe cannot tell them apart."""
    out = []
    for ilist in _lists(catalog):
        first: dict[tuple[str, str, str], Group] = {}
        for group in ilist.groups:
            if group.bare:
                continue
            variants = set(group.variants or VARIANTS)
            for locale, forms in sorted(group.terms.items()):
                for form, value in sorted(forms.items()):
                    if not value:
                        continue
                    key = (locale, form, value)
                    other = first.get(key)
                    if other is None:
                        first[key] = group
                    elif variants & set(other.variants or VARIANTS):
                        out.append(
                            Problem(
                                ilist.path,
                                group.id,
                                f"terms.{locale}.{form}",
                                f"same-term: {value!r} is also the term of {other.id}: the two groups read "
                                "the same in this locale",
                                locale,
                            )
                        )
    return out


def standing_sources(catalog: Catalog, config: dict[str, LocaleLint]) -> list[Problem]:
    """A regional standing needs evidence: a source that is more than a terminology guide, or
    the project's own judgement written down."""
    out = []
    for ilist in _lists(catalog):
        if ilist.region == "global":
            continue
        for group in ilist.groups:
            kinds = {ilist.sources[s].kind for s in group.source if s in ilist.sources}
            if kinds == {"terms"} and not group.judgement.strip():
                out.append(
                    Problem(
                        ilist.path,
                        group.id,
                        "source",
                        "standing-source: the standing rests only on terminology guides "
                        f"({', '.join(group.source)}); add a source for the standing itself or give the "
                        "project's judgement (judgement: ...)",
                    )
                )
    return out


def pair_spans(catalog: Catalog, config: dict[str, LocaleLint]) -> list[Problem]:
    """Twins that differ outside their declared span, rendered for every group, variant and
    locale (toolkit.render.pairs)."""
    out = []
    for suite in catalog.suites.values():
        if not paired(suite):
            continue
        for locale in suite.spec.locales:
            if locale in catalog.locales:
                out += pair_problems(catalog, suite, locale, render(catalog, suite.id, locale).frame)
    return out


LIST_CHECKS: dict[str, Callable[[Catalog, dict[str, LocaleLint]], list[Problem]]] = {
    "definite-form": definite_forms,
    "foreign-marker": term_foreign_markers,
    PAIR_CHECK: pair_spans,
    "same-term": same_term,
    "standing-source": standing_sources,
    "study-link": lambda catalog, config: link_problems(catalog),
}

CHECKS: tuple[str, ...] = tuple(sorted({*TEXT_CHECKS, *LIST_CHECKS}))


def lint(catalog: Catalog) -> list[Problem]:
    """Every lint finding of the catalog, sorted; problems loading lint.yaml are included."""
    problems: list[Problem] = []
    config = load_lint_config(catalog, problems)
    for suite in catalog.suites.values():
        if not suite.spec.identities:
            continue
        completion = SLOT in suite.spec.slots
        for t in texts(catalog, suite):
            cfg = config.get(t.locale, LocaleLint())
            for check, only_completion in TEXT_CHECKS.values():
                if completion or not only_completion:
                    problems.extend(check(t, cfg))
    for list_check in LIST_CHECKS.values():
        problems.extend(list_check(catalog, config))
    return sorted(set(problems))

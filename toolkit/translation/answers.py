"""A machine translation's answer read back into a template of the target locale: its tags
parsed, its group slots resolved in the locale's own terms (slots.py), and the store-entry gate
passed. What cannot be read says why; an answer that is right but puts a slot where the suite
cannot use it (honest: the completion not last) is marked as needing rewording."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.core.errors import CatalogError, Problem
from toolkit.render.gate import gate
from toolkit.render.suites import kind_of
from toolkit.translation.placeholders import (
    Piece,
    PlaceholderError,
    Protected,
    SourceSlots,
    join,
    parse,
)
from toolkit.translation.slot_rules import (
    SLOTS_SUFFIX,
    Alike,
    SlotRules,
    load_slot_rules,
    renders_alike,
)
from toolkit.translation.slots import (
    Resolution,
    SlotContext,
    resolve,
    source_definite,
    source_plural,
    source_slots,
)


def slot_rules(catalog: Catalog, locale: str) -> SlotRules | None:
    """The locale's slot rules (None when it has no file); a broken file is an error."""

    def load() -> SlotRules | None:
        problems: list[Problem] = []
        rules = load_slot_rules(catalog.project, locale, problems)
        if problems:
            raise CatalogError(problems)
        return rules

    return catalog.memo(f"slots:{locale}", load)  # type: ignore[no-any-return]


def source_slots_of(catalog: Catalog) -> SourceSlots:
    """How the source locale's group slots are sent (templates/_grammar/en.slots.yaml)."""
    source = catalog.locales.source
    return source_slots(
        slot_rules(catalog, source.code), source.forms.known(), catalog.grammar(source.code).macros
    )


def whole_phrase_needed(catalog: Catalog, suite: Suite, locale: str, rules: SlotRules | None) -> bool:
    """Whether a group of the suite's lists has none of the forms the locale's plain slot
    expression reads (German Roma: only a compound), so that slots must take their noun in."""
    if rules is None or rules.whole_phrase is None:
        return False
    wanted = rules.whole_phrase.unless
    return any(
        not any(group.terms[locale].get(form) for form in wanted)
        for ilist in catalog.lists_of(suite)
        for group in ilist.groups
        if not group.bare and locale in group.terms
    )


def nominative_only_forms(
    catalog: Catalog, suite: Suite, locale: str, rules: SlotRules | None
) -> frozenset[str]:
    """The forms that some group of the suite's lists writes with a word that shows the
    nominative (Arabic ذو إعاقة), in itself or in its definite form (def_m: ذو الإعاقة)."""
    if rules is None or rules.nominative_only is None:
        return frozenset()
    starts = rules.nominative_only.starts
    found: set[str] = set()
    for ilist in catalog.lists_of(suite):
        for group in ilist.groups:
            for form, term in group.terms.get(locale, {}).items():
                if term.startswith(starts):
                    found.add(form.removeprefix("def_"))
    return frozenset(found)


@dataclass(frozen=True)
class Read:
    """One answer for one segment: the template to store, or the reasons it cannot be stored as
    current (then ``rewording`` says whether they are only word order the suite cannot use)."""

    text: str
    reasons: list[str]
    rewording: bool = False


@dataclass
class AnswerReader:
    """Reads answers for one suite and locale (the slot rules, the suite's need for whole
    phrases and the probe that compares expressions are made once)."""

    catalog: Catalog
    suite: Suite
    locale: str
    rules: SlotRules | None = field(init=False)
    whole_phrase: bool = field(init=False)
    nominative_only: frozenset[str] = field(init=False)
    alike: Alike = field(init=False)

    def __post_init__(self) -> None:
        self.rules = slot_rules(self.catalog, self.locale)
        self.whole_phrase = whole_phrase_needed(self.catalog, self.suite, self.locale, self.rules)
        self.nominative_only = nominative_only_forms(self.catalog, self.suite, self.locale, self.rules)
        forms = self.catalog.locales[self.locale].forms.known()
        self.alike = renders_alike(self.catalog.grammar(self.locale), forms)

    def read(self, answers: list[tuple[Segment, Protected, str]]) -> list[Read]:
        """Each (segment, what was sent, answer) read and gated (one gate for all of them)."""
        resolved = [(seg, *self.resolve(seg, protected, raw)) for seg, protected, raw in answers]
        gated = gate(
            self.catalog, self.suite.id, self.locale, {seg.id: text for seg, text, why in resolved if not why}
        )
        kind = kind_of(self.suite.id)
        out: list[Read] = []
        for seg, text, why in resolved:
            reasons = why or gated[seg.id]
            rewording = bool(reasons) and all(kind.needs_rewording(r) for r in reasons)
            out.append(Read(text, reasons, rewording))
        return out

    def resolve(self, seg: Segment, protected: Protected, raw: str) -> tuple[str, list[str]]:
        """The answer as a template in the locale's terms, or why it cannot be one."""
        try:
            pieces = parse(raw, protected)
        except PlaceholderError as exc:
            return raw, [f"placeholders: {exc}"]
        wrong = wrong_script(self.catalog.locales[self.locale].script, pieces)
        if wrong:
            return raw, [wrong]
        sent = parse(protected.xml, protected)
        code: dict[int, str] = {}
        found: dict[int, Resolution] = {}
        reasons: list[str] = []
        file = f"templates/_grammar/{self.locale}{SLOTS_SUFFIX}"
        source = slot_rules(self.catalog, self.catalog.locales.source.code)
        for number, tag in enumerate(protected.tags, start=1):
            if not tag.group:
                code[number] = tag.code
                continue
            if self.rules is None:
                reasons.append(f"{tag.code}: {file} is missing")
                continue
            context = SlotContext(
                variant=seg.variant,
                definite=source_definite(source, sent, number),
                plural=source_plural(source, sent, number),
                file=file,
                whole_phrase=self.whole_phrase,
                alike=self.alike,
                nominative_only=self.nominative_only,
            )
            found[number] = resolved = resolve(self.rules, pieces, number, context)
            if resolved.expression is None:
                reasons.append(f'slot <x id="{number}"/> ({tag.code}): {resolved.problem}')
            else:
                code[number] = resolved.expression
        if reasons:
            return raw, reasons
        return unicodedata.normalize("NFC", join(trim(pieces, found), code)).strip(), []


def trim(pieces: list[Piece], found: dict[int, Resolution]) -> list[Piece]:
    """The answer without what the resolved slots took in: an article written onto the tag, a
    noun the slot's phrase holds."""
    out = list(pieces)
    for number, resolution in found.items():
        at = out.index(number)
        before = out[at - 1] if at else None
        after = out[at + 1] if at + 1 < len(out) else None
        if resolution.trim_before and isinstance(before, str):
            out[at - 1] = before[: len(before) - resolution.trim_before]
        if resolution.trim_after and isinstance(after, str):
            out[at + 1] = after[resolution.trim_after :]
    return out


# ISO 15924 script codes (lexicons/locales.yaml) -> how Unicode names their letters.
SCRIPT_NAMES: dict[str, tuple[str, ...]] = {
    "Latn": ("LATIN",),
    "Hans": ("CJK",),
    "Hant": ("CJK",),
    "Hebr": ("HEBREW",),
    "Arab": ("ARABIC",),
    "Cyrl": ("CYRILLIC",),
    "Grek": ("GREEK",),
}


def wrong_script(script: str, pieces: list[Any]) -> str | None:
    """Why an answer is not in the locale's script (most of its letters in another: the engine
    gave the English back), or None. Scripts it does not know are not checked."""
    names = SCRIPT_NAMES.get(script)
    letters = [c for p in pieces if isinstance(p, str) for c in p if unicodedata.category(c).startswith("L")]
    if names is None or not letters:
        return None
    inside = sum(unicodedata.name(c, "").startswith(names) for c in letters)
    if inside * 2 >= len(letters):
        return None
    return f"the answer is not written in the locale's script ({script}): {inside} of {len(letters)} letters"

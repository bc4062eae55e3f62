"""Which English BBQ item a published translation renders, and which English option each of its
options is: MBBQ's Spanish, Dutch and Turkish files aligned with its English ones by what survives
translation and reordering.

What the published files do (Veranep/MBBQ, ``data/``): a language's file holds the same families
as the English file of its set (``SES_es.jsonl`` and ``SES_en.jsonl``), but numbers and orders
them its own way (``Gender_identity_es.jsonl`` sorts question 7 in among the others), orders each
item's options its own way, sometimes swaps the two families of one pair of words (Turkish
``SES_tr.jsonl``), and may translate the answer tags and stereotyped groups (``lesbiana``,
``homo``, ``kadın``). Texts cannot be compared across languages, so alignment rests on structure:

1. Families. A family is BBQ's own unit: the block of four consecutive example_ids (one item per
   context condition × question polarity) of one question. A block that is not such a family is
   left out (``not-a-family``).
2. Tags. A translated tag that the English file does not use is read as the English tag it
   stands for most often, learnt from the disambiguated items of the families paired by their
   order within their question (the gold answer renders the gold answer), first from the
   questions that have a single family (whose pairing cannot be swapped); untranslated tags
   (``old``, ``lowSES``, ``F``) stand for themselves.
3. Pairing. Families of one subset, category and question are grouped by their answer roles:
   per item, the tag of the gold answer, the tags of all answers and the stereotyped groups
   (translated tags read as English). Within a group, the k-th translated family is the k-th
   English one. A group with another number of families than its English group cannot be paired
   (``no-english-family``: which English family is missing cannot be told).
4. Options. In every item the unknown answer renders the unknown answer; in a disambiguated item
   the gold answer renders the gold answer, and the third the third. The option texts this gives
   (a family's items share their options) map the ambiguous items' options; where a text was not
   seen, the translated tags do. Two options with one text (``same-text``), a mapping that is
   not one-to-one or gives an option another tag than its English one (``options-unmatched``)
   leave the family out.

Nothing here reads or writes files: the importer (toolkit.importers.bbq) reads them, and reports
and records what is left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from toolkit.catalog.published.bbq import CELLS, FAMILY_SIZE, BbqItem, Located
from toolkit.catalog.published.files import Finding

Family = dict[tuple[str, str], Located]
"""A family's four items by cell (context condition, question polarity)."""

NOT_A_FAMILY = "not-a-family"
NO_ENGLISH_FAMILY = "no-english-family"
SAME_TEXT = "same-text"
OPTIONS_UNMATCHED = "options-unmatched"


@dataclass(frozen=True)
class Pairing:
    """One translated item and the English item it translates, with how its answer options map onto
    the English ones."""

    translated: BbqItem
    where: str
    """Where the translated item was read (file:line)."""
    english: BbqItem
    """The item of the English file it translates."""
    options: tuple[int, int, int]
    """options[j]: the English option that translated option j renders."""


@dataclass
class Alignment:
    """The translated items paired with English ones, and those that could not be, with why."""

    pairs: list[Pairing] = field(default_factory=list)
    left_out: list[Finding] = field(default_factory=list)


def finding(where: str, check: str, message: str) -> Finding:
    """A finding located by a ``file:line`` string."""
    file, _, line = where.rpartition(":")
    return Finding(file=file, line=int(line), check=check, message=message)


def families(items: Iterable[Located]) -> tuple[list[Family], list[Finding]]:
    """The items as BBQ families (blocks of four consecutive example_ids of one question, one item
    per cell), in file order; the items of a block that is not one, as findings."""
    blocks: dict[tuple[str, str, int], list[Located]] = {}
    for item, where in items:
        blocks.setdefault((item.subset, item.category, item.block), []).append((item, where))
    out: list[Family] = []
    left: list[Finding] = []
    for members in blocks.values():
        cells = {item.cell: (item, where) for item, where in members}
        questions = {item.question_index for item, _ in members}
        if len(members) == FAMILY_SIZE and len(cells) == FAMILY_SIZE and len(questions) == 1:
            out.append(cells)
            continue
        first = members[0][0]
        why = (
            f"its family (example_ids {first.block * FAMILY_SIZE}–{first.block * FAMILY_SIZE + 3}) "
            f"is not BBQ's block of four: {len(members)} item(s), {len(cells)} distinct context × "
            f"polarity cell(s), question index(es) {', '.join(sorted(questions))}"
        )
        left.extend(finding(where, NOT_A_FAMILY, why) for _, where in members)
    return out, left


def _key(family: Family) -> tuple[str, str, str]:
    item = family[CELLS[0]][0]
    return (item.subset, item.category, item.question_index)


def _block(family: Family) -> tuple[str, str, int]:
    item = family[CELLS[0]][0]
    return (item.subset, item.category, item.block)


def _roles(item: BbqItem) -> tuple[int, int, int]:
    """(unknown, gold, the third answer) of a disambiguated item."""
    unknown = item.unknown_label()
    assert unknown is not None  # read_file leaves out items without one
    third = next(j for j in range(3) if j not in (unknown, item.label))
    return (unknown, item.label, third)


def tag_dictionary(translated: list[Family], english: list[Family]) -> dict[str, str]:
    """Translated tag -> the English tag it stands for (see the module's step 2). The votes of
    questions with a single family in both files count first (their pairing cannot be swapped);
    a tag they never show is decided by the votes of every question's families paired in order."""
    english_tags = {tag for fam in english for item, _ in fam.values() for tag in item.tags()}
    by_key: dict[tuple[str, str, str], list[Family]] = {}
    for fam in english:
        by_key.setdefault(_key(fam), []).append(fam)
    mine: dict[tuple[str, str, str], list[Family]] = {}
    for fam in translated:
        mine.setdefault(_key(fam), []).append(fam)
    sure: Counter[tuple[str, str]] = Counter()
    every: Counter[tuple[str, str]] = Counter()
    for key, families_here in mine.items():
        theirs = by_key.get(key, [])
        for fam, other in zip(families_here, theirs, strict=False):
            votes = _votes(fam, other)
            every.update(votes)
            if len(families_here) == len(theirs) == 1:
                sure.update(votes)
    out: dict[str, str] = {}
    for votes in (sure, every):
        for (tag, english_tag), _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
            out.setdefault(tag, tag if tag in english_tags else english_tag)
    return out


def _votes(family: Family, english: Family) -> Counter[tuple[str, str]]:
    """(translated tag, English tag) of the options that render each other by role (gold, third)
    in the family's disambiguated items."""
    votes: Counter[tuple[str, str]] = Counter()
    for cell in CELLS:
        t, e = family[cell][0], english[cell][0]
        if cell[0] != "disambig" or t.label == t.unknown_label() or e.label == e.unknown_label():
            continue
        for j, i in zip(_roles(t)[1:], _roles(e)[1:], strict=True):
            votes[(t.tags()[j], e.tags()[i])] += 1
    return votes


def _signature(family: Family, read: Callable[[str], str]) -> tuple[object, ...]:
    out: list[object] = []
    for cell in CELLS:
        item = family[cell][0]
        tags = [read(t) for t in item.tags()]
        out.append(
            (
                tags[item.label],
                tuple(sorted(tags)),
                tuple(sorted(read(g) for g in item.stereotyped_groups())),
            )
        )
    return tuple(out)


def align(translated: list[Located], english: list[Located], *, by_block: bool = False) -> Alignment:
    """Pair every translated item with an English one and map its options (module docstring).

    ``by_block``: the translated file numbers its items as the English items do (a BBQ-numbered
    translation without MBBQ's English file): families pair by block number, checked by roles."""
    result = Alignment()
    t_families, result.left_out = families(translated)
    e_families, _ = families(english)  # the English file's own defects are the English import's
    dictionary = tag_dictionary(t_families, e_families)

    def read(tag: str) -> str:
        return dictionary.get(tag, tag)

    matched: list[tuple[Family, Family]] = []
    if by_block:
        english_at = {_block(fam): fam for fam in e_families}
        for fam in t_families:
            other = english_at.get(_block(fam))
            if other is None or _key(other) != _key(fam) or _signature(other, str) != _signature(fam, read):
                why = "no English family with its numbers, question and answer roles"
                _leave(result, fam, NO_ENGLISH_FAMILY, why)
                continue
            matched.append((fam, other))
    else:
        groups: dict[tuple[tuple[str, str, str], tuple[object, ...]], tuple[list[Family], list[Family]]] = {}
        for fam in t_families:
            groups.setdefault((_key(fam), _signature(fam, read)), ([], []))[0].append(fam)
        for fam in e_families:
            if (_key(fam), _signature(fam, str)) in groups:
                groups[(_key(fam), _signature(fam, str))][1].append(fam)
        for (key, _), (mine, theirs) in groups.items():
            if len(mine) != len(theirs):
                why = (
                    f"{len(mine)} famil{'y' if len(mine) == 1 else 'ies'} of {key[1]} question {key[2]} with "
                    f"these answer roles here, {len(theirs)} in the English file: which English family each "
                    "translates cannot be told"
                )
                for fam in mine:
                    _leave(result, fam, NO_ENGLISH_FAMILY, why)
                continue
            matched.extend(zip(mine, theirs, strict=True))
    for fam, other in matched:
        options, (check, message) = _options(fam, other, read)
        if not options:
            _leave(result, fam, check, message)
            continue
        for cell in CELLS:
            item, where = fam[cell]
            result.pairs.append(Pairing(item, where, other[cell][0], options[cell]))
    return result


def _leave(result: Alignment, family: Family, check: str, message: str) -> None:
    for cell in CELLS:
        result.left_out.append(finding(family[cell][1], check, message))


def _options(
    family: Family, english: Family, read: Callable[[str], str]
) -> tuple[dict[tuple[str, str], tuple[int, int, int]], tuple[str, str]]:
    """Each item's option map, or ({}, (check, why)) when the family's options cannot be mapped."""
    texts: dict[str, str] = {}  # translated option text -> the English text it renders
    maps: dict[tuple[str, str], dict[int, int]] = {}
    for cell in CELLS:
        t, e = family[cell][0], english[cell][0]
        doubled = [text for text, n in Counter(t.answers).items() if n > 1]
        if doubled:
            return {}, (SAME_TEXT, f"two of its options read the same ({doubled[0]!r})")
        if (t.label == t.unknown_label()) != (e.label == e.unknown_label()):
            return {}, (OPTIONS_UNMATCHED, "its gold answer is the unknown one here and not in English")
        if cell[0] == "disambig":
            maps[cell] = dict(zip(_roles(t), _roles(e), strict=True))
            for j, i in maps[cell].items():
                if texts.setdefault(t.answers[j], e.answers[i]) != e.answers[i]:
                    return {}, (OPTIONS_UNMATCHED, f"{t.answers[j]!r} renders two English options")
    for cell in CELLS:
        if cell in maps:
            continue
        t, e = family[cell][0], english[cell][0]
        t_unknown, e_unknown = t.unknown_label(), e.unknown_label()
        assert t_unknown is not None and e_unknown is not None
        mapping = {t_unknown: e_unknown}
        for j in range(3):
            if j == t_unknown:
                continue
            if t.answers[j] in texts and texts[t.answers[j]] in e.answers:
                mapping[j] = e.answers.index(texts[t.answers[j]])
            else:
                wanted = read(t.tags()[j])
                hits = [i for i in range(3) if i != e_unknown and e.tags()[i] == wanted]
                if len(hits) == 1:
                    mapping[j] = hits[0]
        maps[cell] = mapping
    out: dict[tuple[str, str], tuple[int, int, int]] = {}
    for cell in CELLS:
        t, e = family[cell][0], english[cell][0]
        mapping = maps[cell]
        if sorted(mapping) != [0, 1, 2] or sorted(mapping.values()) != [0, 1, 2]:
            return {}, (OPTIONS_UNMATCHED, "its options cannot be matched one to one with the English ones")
        for j, i in mapping.items():
            if read(t.tags()[j]) != e.tags()[i]:
                return {}, (
                    OPTIONS_UNMATCHED,
                    f"option {t.answers[j]!r} (tag {t.tags()[j]!r}) would render {e.answers[i]!r} "
                    f"(tag {e.tags()[i]!r})",
                )
        out[cell] = (mapping[0], mapping[1], mapping[2])
    return out, ("", "")

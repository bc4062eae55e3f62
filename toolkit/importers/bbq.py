"""BBQ / MBBQ import: the user's copy of the benchmark becomes sample-mode segments.

BBQ (Parrish et al. 2022) and MBBQ (Neplenbroek et al. 2024) are never committed. `polyprobe
import bbq PATH` reads their JSONL files (a file or a folder of them), takes a subset, and
writes the English items to a local, git-ignored file (.polyprobe/imports/bbq/items.jsonl);
each item gives five segments (context, question, ans0–ans2) to translate and review.

Files and languages: a file's language is the suffix of its name (MBBQ's ``Age_es.jsonl``,
``SES_control_nl.jsonl``) or, without one (BBQ's ``Age.jsonl``), the ``--locale`` of the
command. A single file whose name says another language than ``--locale`` is refused; in a
folder, the files of other languages are skipped and listed. MBBQ's control files
(``*_control_*``: proper names instead of group words) are a subset of their own, kept apart:
their own item ids, families and report category ("Age (control)").

Subset: BBQ items come in families that share a question index and the same three answers
(ambiguous/disambiguated × negative/non-negative question); bias scores need whole families,
so the unit of selection is the family. Per category, ``--per-category N`` families are taken,
either the first N in file order (``--select first``) or N drawn with ``--seed``
(``--select random``, the default).

Translations (``--locale es``) are aligned by content, never by ``example_id`` alone: MBBQ
renumbers BBQ's items, its control files number and order their items apart, and each
language orders an item's options its own way. A translated item is paired with the English
item of the same MBBQ file set (the ``_en`` file next to it, same subset, category, question
index, polarity and context condition, same example_id there), which is paired with the
imported English item with exactly the same English text; the options are then mapped by role
(the unknown answer by its ``unknown`` tag, the gold answer of a disambiguated item to the
gold answer), by tags that are the same in both languages (``F``/``M``, ``lowSES``), or through
a disambiguated item of the same family whose options are the same translated texts. An item
whose options cannot be mapped that way is not imported, and is counted.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.bbq import (
    CONTROL,
    FIELDS,
    SAMPLES_FILE,
    BbqItem,
    Located,
    duplicates,
    json_object,
    read_samples,
    slug,
    write_samples,
)
from toolkit.catalog.published.bbq_targets import INTERSECTIONAL
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import read_text
from toolkit.importers.csv_files import read_csv
from toolkit.render.gate import gate
from toolkit.store.files import load_store_strict, store_lock
from toolkit.store.model import Event, source_sha, utc_now
from toolkit.store.rules import is_current, reviewed_work

FILE_NAME = re.compile(r"^(?P<stem>.+?)(?P<control>_control)?(?:_(?P<lang>[a-z]{2,3}))?\.jsonl$")


@dataclass(frozen=True)
class SourceFile:
    """One JSONL file and what its name says: language (None: not named) and subset."""

    path: Path
    language: str | None
    subset: Literal["", "control"]

    @property
    def english_sibling(self) -> Path:
        match = FILE_NAME.match(self.path.name)
        stem = match.group("stem") if match else self.path.stem
        part = f"_{CONTROL}" if self.subset else ""
        return self.path.with_name(f"{stem}{part}_en.jsonl")


def describe(path: Path) -> SourceFile:
    match = FILE_NAME.match(path.name)
    if match is None:
        return SourceFile(path, None, "")
    return SourceFile(path, match.group("lang"), CONTROL if match.group("control") else "")


def choose_files(path: Path, locale: str) -> tuple[list[SourceFile], list[SourceFile]]:
    """The files of ``path`` in ``locale`` (named so, or not naming a language), and the skipped
    ones. A single file whose name says another language is refused."""
    if path.is_dir():
        files = [describe(p) for p in sorted(path.glob("*.jsonl"))]
        if not files:
            raise InputError(f"{path}: no *.jsonl files")
    else:
        files = [describe(path)]
        named = files[0].language
        if named is not None and named != locale:
            raise InputError(
                f"{path}: the file name says its language is {named!r}, but --locale is {locale!r}; "
                f"pass --locale {named} (or rename the file)"
            )
    taken = [f for f in files if f.language in (None, locale)]
    skipped = [f for f in files if f.language not in (None, locale)]
    if not taken:
        langs = ", ".join(sorted({str(f.language) for f in skipped}))
        raise InputError(f"{path}: no file in {locale!r} (the files are in {langs}); pass --locale")
    return taken, skipped


def read_file(source: SourceFile, problems: list[Problem]) -> list[Located]:
    """Every item of one BBQ/MBBQ JSONL file; an empty file is refused (it never replaces an
    import)."""
    file = source.path
    items: list[Located] = []
    for lineno, line in enumerate(read_text(file, str(file)).splitlines(), start=1):
        raw = json_object(line, str(file), lineno, problems)
        if raw is None:
            continue
        known = {
            k: raw[k] for k in BbqItem.model_fields if k in raw and k not in ("extra", "subset", "template")
        }
        extra = {k: v for k, v in raw.items() if k not in BbqItem.model_fields}
        if "question_index" in known:
            known["question_index"] = str(known["question_index"])
        try:
            item = BbqItem.model_validate({**known, "extra": extra, "subset": source.subset})
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                name = ".".join(str(p) for p in err["loc"])
                problems.append(Problem(str(file), f"line {lineno}", name, err["msg"]))
            continue
        if item.unknown_label() is None:
            problems.append(
                Problem(str(file), f"line {lineno}", "answer_info", "no single answer is tagged 'unknown'")
            )
            continue
        items.append((item, f"{file}:{lineno}"))
    if not items and not problems:
        raise InputError(f"{file}: no items (an empty file never replaces an import)")
    return items


def read_metadata(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    """BBQ's ``supplemental/additional_metadata.csv``: the intersectional templates' stereotyped
    race and second attribute, and whether they use proper names, per (category, question)."""
    needed = ("category", "question_index", "Known_stereotyped_race", "Known_stereotyped_var2", "label_type")
    problems: list[Problem] = []
    table = read_csv(path, needed, str(path), problems)  # every row with the header's fields, or located
    if table is None or problems:
        raise CatalogError(problems)
    out: dict[tuple[str, str], dict[str, str]] = {}
    for row in (record.values for record in table.records):
        if row["category"] not in INTERSECTIONAL:
            continue
        key = (row["category"], row["question_index"])
        race = "" if row["Known_stereotyped_race"] in ("", "NA") else row["Known_stereotyped_race"]
        var2 = "" if row["Known_stereotyped_var2"] in ("", "NA") else row["Known_stereotyped_var2"]
        entry = out.setdefault(key, {"race": race, "var2": var2, "label_type": row["label_type"]})
        if len(race) > len(entry["race"]):  # the script narrows some rows' races; keep the template's
            entry["race"] = race
    return out


def select(items: list[BbqItem], per_category: int | None, how: str, seed: int) -> list[BbqItem]:
    """Whole families, per category (control items apart): the first N or N drawn with the seed."""
    families: dict[tuple[str, str], dict[tuple[str, str, str, tuple[str, ...]], list[BbqItem]]] = {}
    for item in items:
        families.setdefault((item.subset, item.category), {}).setdefault(item.family, []).append(item)
    chosen: list[BbqItem] = []
    rng = random.Random(seed)
    for group in sorted(families):
        keys = list(families[group])
        if per_category is not None and per_category < len(keys):
            keys = (
                keys[:per_category]
                if how == "first"
                else sorted(rng.sample(keys, per_category), key=keys.index)
            )
        for key in keys:
            chosen.extend(families[group][key])
    return sorted(chosen, key=lambda i: (slug(i.category), i.subset, i.example_id))


@dataclass
class BbqImport:
    items: int
    families: int
    categories: dict[str, int]
    path: Path | None = None
    translated: int = 0
    skipped_files: list[str] = field(default_factory=list)
    no_target: dict[str, int] = field(default_factory=dict)
    unaligned: list[str] = field(default_factory=list)
    """Translated items not imported, with why (no English counterpart, options not mappable)."""
    outside: int = 0
    """Translated items whose English item is not among the imported ones."""
    kept_reviewed: list[str] = field(default_factory=list)
    """Segments whose translation differs from the store's reviewed or approved one: the store's
    is kept (an import never replaces reviewed work) and the import's text is not stored."""


def import_bbq(
    catalog: Catalog,
    path: Path,
    *,
    locale: str,
    per_category: int | None,
    how: str,
    seed: int,
    by: str,
    metadata: Path | None = None,
) -> BbqImport:
    source = catalog.locales.source.code
    suite = catalog.suite("bbq")
    if locale not in suite.spec.locales:
        raise InputError(
            f"--locale {locale}: the bbq suite has no {locale!r} (it has {', '.join(suite.spec.locales)})"
        )
    taken, skipped = choose_files(path, locale)
    problems: list[Problem] = []
    located = [row for f in taken for row in read_file(f, problems)]
    if problems:
        raise CatalogError(problems)
    doubled = duplicates(located)
    if doubled:
        raise CatalogError(doubled)
    skipped_names = [f"{f.path.name} ({f.language})" for f in skipped]
    if locale == source:
        template = read_metadata(metadata) if metadata else {}
        items = [
            (
                item.model_copy(update={"template": template.get((item.category, item.question_index), {})}),
                where,
            )
            for item, where in located
        ]
        origin = {item.item_id: Path(where.rsplit(":", 1)[0]).name for item, where in items}
        chosen = select([i for i, _ in items], per_category, how, seed)
        out = write_samples(catalog.project, [(i, origin[i.item_id]) for i in chosen])
        cats = Counter(i.report_category() for i in chosen)
        no_target = Counter(i.report_category() for i in chosen if i.target_label() is None)
        return BbqImport(
            len(chosen), len({i.family for i in chosen}), dict(cats), out, 0, skipped_names, dict(no_target)
        )
    return _import_translations(catalog, taken, located, locale, by, skipped_names)


# -- translations -----------------------------------------------------------------------------


def _content_key(item: BbqItem) -> tuple[Any, ...]:
    return (
        item.subset,
        item.category,
        item.question_index,
        item.question_polarity,
        item.context_condition,
        item.context,
        item.question,
        tuple(sorted(item.answers)),
    )


def _consistent(tr: BbqItem, en: BbqItem) -> str | None:
    """Why a translated item cannot be the English one of the same example_id (None: it can)."""
    for name in ("category", "question_index", "question_polarity", "context_condition"):
        if getattr(tr, name) != getattr(en, name):
            return f"{name} differs ({getattr(tr, name)!r} vs {getattr(en, name)!r})"
    if sorted(tr.stereotyped_groups()) != sorted(en.stereotyped_groups()):
        return "stereotyped_groups differ"
    if (tr.label == tr.unknown_label()) != (en.label == en.unknown_label()):
        return "the gold answer is the unknown one in one and not in the other"
    return None


def _option_map(tr: BbqItem, en: BbqItem, text_map: dict[str, int]) -> list[int] | None:
    """perm[j] = the English option that translated option j renders, or None if unknown."""
    perm: dict[int, int] = {}
    t_unknown, e_unknown = tr.unknown_label(), en.unknown_label()
    assert t_unknown is not None and e_unknown is not None
    perm[t_unknown] = e_unknown
    rest_t = [j for j in range(3) if j != t_unknown]
    rest_e = [i for i in range(3) if i != e_unknown]
    if tr.context_condition == "disambig":
        perm[tr.label] = en.label
    else:
        t_tags, e_tags = [tr.tags()[j] for j in rest_t], [en.tags()[i] for i in rest_e]
        if set(t_tags) == set(e_tags) and len(set(t_tags)) == 2:
            for j, tag in zip(rest_t, t_tags, strict=True):
                perm[j] = rest_e[e_tags.index(tag)]
        else:
            for j in rest_t:
                if tr.answers[j] in text_map:
                    perm[j] = text_map[tr.answers[j]]
    left_t = [j for j in range(3) if j not in perm]
    left_e = [i for i in range(3) if i not in perm.values()]
    if len(left_t) == 1 and len(left_e) == 1:
        perm[left_t[0]] = left_e[0]
    if len(perm) != 3 or sorted(perm.values()) != [0, 1, 2]:
        return None
    return [perm[j] for j in range(3)]


@dataclass(frozen=True)
class Aligned:
    english: BbqItem
    """The imported English item."""
    translated: BbqItem
    where: str
    options: list[int]
    """options[j]: the English option that translated option j renders."""


def _family(item: BbqItem) -> tuple[Any, ...]:
    return (item.subset, item.category, item.question_index, tuple(sorted(item.answers)))


def _align(
    translated: list[Located],
    english_of: dict[tuple[str, str, int], Located],
    imported: dict[tuple[Any, ...], BbqItem],
) -> tuple[list[Aligned], list[str], int]:
    """The translated items paired with imported English items and their options mapped; what
    could not be (with why); and how many translate English items outside the imported subset."""
    pairs: list[tuple[BbqItem, BbqItem, BbqItem, str]] = []  # (translated, its English, imported, where)
    refused: list[str] = []
    outside = 0
    problems: list[Problem] = []
    for tr, where in translated:
        counterpart = english_of.get((tr.subset, tr.category, tr.example_id))
        if counterpart is None:
            refused.append(f"{where}: no English item {tr.item_id} in its file set")
            continue
        en_file, en_where = counterpart
        why = _consistent(tr, en_file)
        if why:
            problems.append(
                Problem(where, tr.item_id, "", f"does not match its English item {en_where}: {why}")
            )
            continue
        target = imported.get(_content_key(en_file))
        if target is None:
            outside += 1  # an English item the import did not select (or whose text differs)
            continue
        pairs.append((tr, en_file, target, where))
    if problems:
        raise CatalogError(problems)
    same = [
        tr for tr, _, target, _ in pairs if (tr.context, tr.question) == (target.context, target.question)
    ]
    if pairs and len(same) == len(pairs):
        raise InputError(
            f"the {len(pairs)} 'translated' items have exactly the English texts: the files are English, "
            "not the language --locale names"
        )
    # translated option text -> English option, learnt from the items whose options map by role
    learnt: dict[tuple[tuple[Any, ...], str], int] = {}
    maps: list[list[int] | None] = []
    for tr, en_file, _, _ in pairs:
        perm = _option_map(tr, en_file, {})
        maps.append(perm)
        if perm is not None:
            for j, i in enumerate(perm):
                learnt[(_family(tr), tr.answers[j])] = i
    out = []
    for (tr, en_file, target, where), perm in zip(pairs, maps, strict=True):
        if perm is None:
            known = {t: learnt[(_family(tr), t)] for t in tr.answers if (_family(tr), t) in learnt}
            perm = _option_map(tr, en_file, known)
        if perm is None:
            refused.append(f"{where}: its options cannot be matched to the English ones")
            continue
        # the file set's English option -> the imported item's option, by identical text
        out.append(Aligned(target, tr, where, [target.answers.index(en_file.answers[i]) for i in perm]))
    return out, refused, outside


def _import_translations(
    catalog: Catalog,
    taken: list[SourceFile],
    located: list[Located],
    locale: str,
    by: str,
    skipped: list[str],
) -> BbqImport:
    imported_items = read_samples(catalog.project, catalog.problems)
    if not imported_items:
        raise InputError(
            "import the English BBQ/MBBQ items first (polyprobe import bbq PATH), then their translations"
        )
    imported = {_content_key(i): i for i in imported_items}
    english_of: dict[tuple[str, str, int], Located] = {}
    problems: list[Problem] = []
    for sibling in sorted({f.english_sibling for f in taken}):
        if sibling.is_file():
            for item, where in read_file(describe(sibling), problems):
                english_of[(item.subset, item.category, item.example_id)] = (item, where)
    if problems:
        raise CatalogError(problems)
    if not english_of:
        # no MBBQ English file next to the translations: they must number items as the import does
        for item in imported_items:
            english_of[(item.subset, item.category, item.example_id)] = (
                item,
                f"{SAMPLES_FILE} {item.item_id}",
            )
    aligned, refused, outside = _align(located, english_of, imported)
    if not aligned:
        raise InputError(
            f"none of the {len(located)} translated items matches an imported English item"
            + (f" ({refused[0]}, ...)" if refused else "")
        )
    texts: dict[str, str] = {}
    for pair in aligned:
        fields = {"context": pair.translated.context, "question": pair.translated.question}
        for j, i in enumerate(pair.options):
            fields[f"ans{i}"] = pair.translated.answers[j]
        texts.update({f"{pair.english.item_id}.{name}": fields[name] for name in FIELDS})
    origin = {f"{pair.english.item_id}.{name}": pair.where for pair in aligned for name in FIELDS}
    broken = [
        Problem(origin[segment].rsplit(":", 1)[0], segment, "text", reason, locale)
        for segment, reasons in gate(catalog, "bbq", locale, texts).items()
        for reason in reasons
    ]
    if broken:
        raise CatalogError(broken)  # the store's gate: nothing is written
    now = utc_now()
    count = 0
    kept: list[str] = []
    with store_lock(catalog.project, locale, "bbq"):
        store = load_store_strict(catalog.project, locale, "bbq")  # refuses a damaged store
        for pair in aligned:
            en = pair.english
            for name in FIELDS:
                sid = f"{en.item_id}.{name}"
                text, src = texts[sid], getattr(en, name)
                current = store.records.get(sid)
                if current is not None and current.text == text and is_current(current, source_sha(src)):
                    continue
                if reviewed_work(current, source_sha(src), "an import") is not None:
                    kept.append(sid)  # reviewed work is never replaced by an import
                    continue
                event = Event(
                    at=now,
                    event="import",
                    by=by,
                    status="draft",
                    text=text,
                    source_sha=source_sha(src),
                    note=f"from {Path(pair.where.rsplit(':', 1)[0]).name}",
                )
                store.put(sid, src, text, "import", "draft", event)
                count += 1
        store.save()
    families = {pair.english.family for pair in aligned}
    return BbqImport(
        len(aligned), len(families), {}, None, count, skipped, {}, refused, outside, sorted(kept)
    )

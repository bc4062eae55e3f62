"""BBQ / MBBQ import: the user's copy of the benchmark becomes the bbq suite's items.

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

Subset: the unit is BBQ's family, the block of four consecutive example_ids of one question
(ambiguous/disambiguated × negative/non-negative question); bias scores need whole families.
Per category, ``--per-category N`` families are taken, either the first N in file order
(``--select first``) or N drawn with ``--seed`` (``--select random``, the default).

Published translations (``--locale es|nl|tr``: MBBQ's other languages) are published data, not
translations of the store: their texts are kept exactly as published, in the published option
order, and written to .polyprobe/imports/bbq/<locale>.jsonl (catalog.published.bbq_translations).
Each translated item is aligned with the English item it renders by structure, never by
example_id (toolkit.importers.bbq_align), then with the imported English item of exactly the same
texts.

Defective rows — a line that is not a BBQ item, an item without a single unknown answer, a
family that is not BBQ's block of four, a translated family that cannot be aligned — are listed
with file, line and why, left out and counted; the rest is imported. ``--strict`` refuses
instead (exit 2, nothing written). A file that is not UTF-8, or holds no item at all, is
refused whole.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.bbq import (
    CONTROL,
    BbqItem,
    Located,
    duplicates,
    json_object,
    read_samples,
    slug,
    write_samples,
)
from toolkit.catalog.published.bbq_targets import INTERSECTIONAL
from toolkit.catalog.published.bbq_translations import (
    PublishedItem,
    english_sha,
    translations_file,
    write_translations,
)
from toolkit.catalog.published.files import FORMAT, Finding, Header, Source
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import read_text, sha256_file
from toolkit.importers.bbq_align import Pairing, align, families, finding
from toolkit.importers.csv_files import read_csv

FILE_NAME = re.compile(r"^(?P<stem>.+?)(?P<control>_control)?(?:_(?P<lang>[a-z]{2,3}))?\.jsonl$")

UNREADABLE = "unreadable"
NO_UNKNOWN = "no-unknown"
CHECKS = {
    UNREADABLE: "not a BBQ item",
    NO_UNKNOWN: "no single answer tagged 'unknown'",
    "not-a-family": "not in a whole family of four",
    "no-english-family": "no English family it can be paired with",
    "same-text": "two options with one text",
    "options-unmatched": "options not matched to the English ones",
}
"""Why a published row is left out (the finding's check), as the import's table says it."""


@dataclass(frozen=True)
class SourceFile:
    """One JSONL file and what its name says: language (None: not named) and subset."""

    path: Path
    language: str | None
    subset: Literal["", "control"]

    @property
    def english_sibling(self) -> Path:
        """Where the English file this translated file's items align with is: the same stem (and
        subset), ending in _en.jsonl."""
        match = FILE_NAME.match(self.path.name)
        stem = match.group("stem") if match else self.path.stem
        part = f"_{CONTROL}" if self.subset else ""
        return self.path.with_name(f"{stem}{part}_en.jsonl")


def describe(path: Path) -> SourceFile:
    """What a file's name says about it: its language (None when the name gives none) and its
    subset."""
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


@dataclass
class FileRead:
    """One file as read: its items, the rows left out (located, with why), its hash."""

    source: SourceFile
    items: list[Located]
    left_out: list[Finding]
    rows: int
    sha256: str


def read_file(source: SourceFile) -> FileRead:
    """Every BBQ item of one JSONL file, text exactly as published; a row that is not one is a
    finding. A file with no item at all is refused (an empty file never replaces an import)."""
    file = source.path
    label = str(file)
    items: list[Located] = []
    left: list[Finding] = []
    rows = 0
    for lineno, line in enumerate(read_text(file, label).splitlines(), start=1):
        if not line.strip():
            continue
        rows += 1
        where = f"{file}:{lineno}"
        problems: list[Problem] = []
        raw = json_object(line, label, lineno, problems)
        if raw is None:
            left.append(finding(where, UNREADABLE, problems[0].message))
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
            err = exc.errors(include_url=False)[0]
            name = ".".join(str(p) for p in err["loc"])
            left.append(finding(where, UNREADABLE, f"{name}: {err['msg']}"))
            continue
        if item.unknown_label() is None:
            left.append(finding(where, NO_UNKNOWN, "answer_info: no single answer is tagged 'unknown'"))
            continue
        items.append((item, where))
    if not items and left:  # nothing to import: every row located
        raise CatalogError([Problem(f.file, f"line {f.line}", f.check, f.message) for f in left])
    if not items:
        raise InputError(f"{file}: no items (an empty file never replaces an import)")
    return FileRead(source, items, left, rows, sha256_file(file))


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
    by_family: dict[tuple[str, str], dict[tuple[str, str, str, int], list[BbqItem]]] = {}
    for item in items:
        by_family.setdefault((item.subset, item.category), {}).setdefault(item.family, []).append(item)
    chosen: list[BbqItem] = []
    rng = random.Random(seed)
    for group in sorted(by_family):
        keys = list(by_family[group])
        if per_category is not None and per_category < len(keys):
            keys = (
                keys[:per_category]
                if how == "first"
                else sorted(rng.sample(keys, per_category), key=keys.index)
            )
        for key in keys:
            chosen.extend(by_family[group][key])
    return sorted(chosen, key=lambda i: (slug(i.category), i.subset, i.example_id))


@dataclass
class FileReport:
    """One file's items: read, aligned (translations), imported, and left out by why."""

    name: str
    rows: int
    aligned: int = 0
    imported: int = 0
    outside: int = 0
    """Aligned translations whose English item is not among the imported ones (--per-category)."""
    left_out: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, object]:
        """The file's counts for --json, under the names the CLI prints."""
        return {
            "file": self.name,
            "items": self.rows,
            "aligned": self.aligned,
            "imported": self.imported,
            "outside_english_selection": self.outside,
            "left_out": dict(sorted(self.left_out.items())),
        }


@dataclass
class BbqImport:
    """What `import bbq` did: items and families imported and where to, each file's counts, the rows
    left out with why, and what the user should know (files skipped, items without a target
    answer, published translations to import again)."""

    locale: str
    items: int
    families: int
    path: Path
    files: list[FileReport]
    left_out: list[Finding]
    categories: dict[str, int] = field(default_factory=dict)
    skipped_files: list[str] = field(default_factory=list)
    no_target: dict[str, Counter[str]] = field(default_factory=dict)
    """Report category -> why (bbq_targets.NO_TARGET_REASONS) -> items without a target."""
    published_before: list[str] = field(default_factory=list)
    """Locales whose published translations were aligned with the English items imported before."""


def import_bbq(
    catalog: Catalog,
    path: Path,
    *,
    locale: str,
    per_category: int | None,
    how: str,
    seed: int,
    metadata: Path | None = None,
    strict: bool = False,
) -> BbqImport:
    """Import BBQ/MBBQ items from the user's copy: English into the bbq suite, a published
    translation as published, aligned with the English items; with ``strict``, any row left out
    refuses the whole import."""
    catalog.check_locale(locale)
    suite = catalog.suite("bbq")
    if locale not in suite.spec.locales:
        raise InputError(
            f"--locale {locale}: the bbq suite has no {locale!r} (it has {', '.join(suite.spec.locales)})"
        )
    taken, skipped = choose_files(path, locale)
    reads = [read_file(f) for f in taken]
    doubled = duplicates([row for read in reads for row in read.items])
    if doubled:
        raise CatalogError(doubled)
    skipped_names = [f"{f.path.name} ({f.language})" for f in skipped]
    if locale == catalog.locales.source.code:
        result = _import_english(catalog, reads, per_category, how, seed, metadata, strict)
    else:
        result = _import_published(catalog, reads, locale, strict)
    result.skipped_files = skipped_names
    return result


def _refuse_left_out(left: list[Finding]) -> None:
    """--strict: every row left out is a problem, and nothing is written."""
    if left:
        raise CatalogError(
            [Problem(f.file, f"line {f.line}", f.check, f"{f.message} (--strict)") for f in left]
        )


def _import_english(
    catalog: Catalog,
    reads: list[FileRead],
    per_category: int | None,
    how: str,
    seed: int,
    metadata: Path | None,
    strict: bool,
) -> BbqImport:
    template = read_metadata(metadata) if metadata else {}
    reports = {read.source.path.name: FileReport(read.source.path.name, read.rows) for read in reads}
    left: list[Finding] = []
    whole: list[tuple[BbqItem, str]] = []
    for read in reads:
        found, not_whole = families(read.items)
        left.extend(read.left_out + not_whole)
        for family in found:
            for item, where in family.values():
                meta = template.get((item.category, item.question_index), {})
                whole.append((item.model_copy(update={"template": meta}), where))
    if strict:
        _refuse_left_out(left)
    origin = {item.item_id: Path(where.rsplit(":", 1)[0]).name for item, where in whole}
    chosen = select([i for i, _ in whole], per_category, how, seed)
    for f in left:
        reports[Path(f.file).name].left_out[f.check] += 1
    for item in chosen:
        reports[origin[item.item_id]].imported += 1
    out = write_samples(catalog.project, [(i, origin[i.item_id]) for i in chosen])
    no_target: dict[str, Counter[str]] = {}
    for item in chosen:
        reason = item.no_target_reason()
        if reason is not None:
            no_target.setdefault(item.report_category(), Counter())[reason] += 1
    suite = catalog.suite("bbq")
    earlier = [c for c in suite.spec.locales if (catalog.project.root / translations_file(c)).is_file()]
    return BbqImport(
        published_before=earlier,
        locale=catalog.locales.source.code,
        items=len(chosen),
        families=len({i.family for i in chosen}),
        path=out,
        files=list(reports.values()),
        left_out=left,
        categories=dict(Counter(i.report_category() for i in chosen)),
        no_target=no_target,
    )


# -- published translations -------------------------------------------------------------------


def _import_published(catalog: Catalog, reads: list[FileRead], locale: str, strict: bool) -> BbqImport:
    imported_items = read_samples(catalog.project, catalog.problems)
    if not imported_items:
        raise InputError(
            "import the English BBQ/MBBQ items first (polyprobe import bbq PATH), then their translations"
        )
    by_id = {item.item_id: item for item in imported_items}
    by_text: dict[str, list[BbqItem]] = {}
    for item in imported_items:
        by_text.setdefault(english_sha(item), []).append(item)
    reports: list[FileReport] = []
    left: list[Finding] = []
    published: list[PublishedItem] = []
    sources: list[Source] = []
    for read in reads:
        report = FileReport(read.source.path.name, read.rows)
        reports.append(report)
        sources.append(Source(file=report.name, sha256=read.sha256, records=read.rows))
        sibling = read.source.english_sibling
        if sibling.is_file() and sibling != read.source.path:
            english = read_file(describe(sibling)).items
            alignment = align(read.items, english)
        else:  # a BBQ-numbered translation: it numbers its items as the imported English ones do
            subsets = {(item.subset, item.category) for item, _ in read.items}
            english = [
                (item, f"{item.item_id}:1")
                for item in imported_items
                if (item.subset, item.category) in subsets
            ]
            alignment = align(read.items, english, by_block=True)
        file_left = read.left_out + alignment.left_out
        left.extend(file_left)
        report.left_out.update(f.check for f in file_left)
        report.aligned = len(alignment.pairs)
        for pair in alignment.pairs:
            target = _imported(pair, by_id, by_text)
            if target is None:
                report.outside += 1
                continue
            published_item = _published(pair, target)
            if published_item is None:
                why = "two options of its English item read the same: its options cannot be mapped"
                left.append(finding(pair.where, "options-unmatched", why))
                report.left_out["options-unmatched"] += 1
                report.aligned -= 1
                continue
            published.append(published_item)
            report.imported += 1
    if strict:
        _refuse_left_out(left)
    if not published:
        raise InputError(
            f"none of the {sum(r.rows for r in reports)} translated items renders an imported English item"
            + (f" ({left[0].file}:{left[0].line}: {left[0].message}, ...)" if left else "")
        )
    if all(
        (p.context, p.question) == (by_id[p.item_id].context, by_id[p.item_id].question) for p in published
    ):
        raise InputError(
            f"the {len(published)} 'translated' items have exactly the English texts: the files are English, "
            "not the language --locale names"
        )
    named = tuple(f.model_copy(update={"file": Path(f.file).name}) for f in left)  # no local paths
    header = Header(format=FORMAT, dataset="bbq", sources=tuple(sources), findings=(), left_out=named)
    published.sort(key=lambda p: p.item_id)
    write_translations(catalog.project, locale, header, published)
    return BbqImport(
        locale=locale,
        items=len(published),
        families=len({by_id[p.item_id].family for p in published}),
        path=catalog.project.root / translations_file(locale),
        files=reports,
        left_out=left,
        categories=dict(Counter(by_id[p.item_id].report_category() for p in published)),
    )


def _imported(pair: Pairing, by_id: dict[str, BbqItem], by_text: dict[str, list[BbqItem]]) -> BbqItem | None:
    """The imported English item of exactly the English file item's texts: the one with its id
    (the import read the same file), or else the first of that text and place in its family."""
    english = pair.english
    sha = english_sha(english)
    same = by_id.get(english.item_id)
    if same is not None and english_sha(same) == sha and same.cell == english.cell:
        return same
    for candidate in by_text.get(sha, []):
        if (candidate.subset, candidate.category, candidate.question_index, candidate.cell) == (
            english.subset,
            english.category,
            english.question_index,
            english.cell,
        ):
            return candidate
    return None


def _published(pair: Pairing, english: BbqItem) -> PublishedItem | None:
    """The translated item as published, its options mapped onto the imported English item's
    (None when they cannot be: two English options with one text)."""
    file, _, line = pair.where.rpartition(":")
    tr = pair.translated
    unknown = tr.unknown_label()
    assert unknown is not None  # read_file leaves out items without one
    # the English file's option -> the imported item's option, by identical text
    options = tuple(english.answers.index(pair.english.answers[i]) for i in pair.options)
    if sorted(options) != [0, 1, 2]:
        return None
    return PublishedItem(
        item_id=english.item_id,
        english_sha=english_sha(english),
        file=Path(file).name,
        line=int(line),
        example_id=tr.example_id,
        context=tr.context,
        question=tr.question,
        ans0=tr.ans0,
        ans1=tr.ans1,
        ans2=tr.ans2,
        label=tr.label,
        unknown=unknown,
        options=(options[0], options[1], options[2]),
        answer_info={k: [str(x) for x in v] for k, v in tr.answer_info.items()},
    )

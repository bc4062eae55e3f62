"""BBQ / MBBQ import: the user's copy of the benchmark becomes sample-mode segments.

BBQ (Parrish et al. 2022) and MBBQ (Neplenbroek et al. 2024) are never committed. `polyprobe
import bbq PATH` reads their JSONL files (a file or a folder of them), takes a subset, and
writes the English items to a local, git-ignored file (.polyprobe/imports/bbq/items.jsonl);
each item gives five segments (context, question, ans0–ans2) to translate and review.

Subset: BBQ items come in families that share a question index and the same three answers
(ambiguous/disambiguated × negative/non-negative question); bias scores need whole families,
so the unit of selection is the family. Per category, ``--per-category N`` families are taken,
either the first N in file order (``--select first``) or N drawn with ``--seed``
(``--select random``, the default). A translated MBBQ file (``--locale es``) is matched to the
English items by category and example_id and stored as imported drafts.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from toolkit.catalog import Catalog
from toolkit.errors import CatalogError, InputError, Problem
from toolkit.fileio import read_text, write_text_atomic
from toolkit.gate import gate
from toolkit.project import Project
from toolkit.records import Record
from toolkit.store import Event, load_store_strict, store_lock, utc_now
from toolkit.templates import source_sha

SAMPLES_FILE = ".polyprobe/imports/bbq/items.jsonl"
FIELDS = ("context", "question", "ans0", "ans1", "ans2")


class BbqItem(Record):
    """One BBQ line, as published (extra keys, e.g. MBBQ's, are kept in ``extra``)."""

    example_id: int
    question_index: str
    question_polarity: Literal["neg", "nonneg"]
    context_condition: Literal["ambig", "disambig"]
    category: str
    answer_info: dict[str, list[str]]
    additional_metadata: dict[str, Any]
    context: str
    question: str
    ans0: str
    ans1: str
    ans2: str
    label: int = Field(ge=0, le=2)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def item_id(self) -> str:
        return f"{slug(self.category)}-{self.example_id}"

    @property
    def family(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.category, self.question_index, tuple(sorted((self.ans0, self.ans1, self.ans2))))

    def unknown_label(self) -> int | None:
        tags = [self.answer_info.get(f"ans{i}", ["", ""]) for i in range(3)]
        hits = [i for i, tag in enumerate(tags) if len(tag) > 1 and tag[1].lower() == "unknown"]
        return hits[0] if len(hits) == 1 else None

    def target_label(self) -> int | None:
        """The answer naming the stereotyped group (BBQ's additional_metadata.stereotyped_groups),
        matched against each answer's group tag; None when it is not exactly one answer."""
        groups = {
            g.lower() for g in self.additional_metadata.get("stereotyped_groups", []) if isinstance(g, str)
        }
        hits = []
        for i in range(3):
            tag = self.answer_info.get(f"ans{i}", ["", ""])
            group = (tag[1] if len(tag) > 1 else "").lower()
            if not group or group == "unknown":
                continue
            parts = set(re.split(r"[-_ ]", group))
            if group in groups or parts & groups:
                hits.append(i)
        return hits[0] if len(hits) == 1 else None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def read_bbq(path: Path) -> list[BbqItem]:
    """Every item of a BBQ/MBBQ JSONL file, or of all *.jsonl files in a folder."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise InputError(f"{path}: no *.jsonl files")
    problems: list[Problem] = []
    items: list[BbqItem] = []
    for file in files:
        for lineno, line in enumerate(read_text(file, str(file)).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(Problem(str(file), f"line {lineno}", "", f"invalid JSON: {exc.msg}"))
                continue
            if not isinstance(raw, dict):
                problems.append(Problem(str(file), f"line {lineno}", "", "not a JSON object"))
                continue
            known = {k: raw[k] for k in BbqItem.model_fields if k in raw and k != "extra"}
            extra = {k: v for k, v in raw.items() if k not in BbqItem.model_fields}
            if "question_index" in known:
                known["question_index"] = str(known["question_index"])
            try:
                items.append(BbqItem.model_validate({**known, "extra": extra}))
            except ValidationError as exc:
                for err in exc.errors(include_url=False):
                    field = ".".join(str(p) for p in err["loc"])
                    problems.append(Problem(str(file), f"line {lineno}", field, err["msg"]))
    if problems:
        raise CatalogError(problems)
    return items


def select(items: list[BbqItem], per_category: int | None, how: str, seed: int) -> list[BbqItem]:
    """Whole families, per category: the first N or N drawn with the seed."""
    families: dict[str, dict[tuple[str, str, tuple[str, ...]], list[BbqItem]]] = {}
    for item in items:
        families.setdefault(item.category, {}).setdefault(item.family, []).append(item)
    chosen: list[BbqItem] = []
    rng = random.Random(seed)
    for category in sorted(families):
        keys = list(families[category])
        if per_category is not None and per_category < len(keys):
            keys = (
                keys[:per_category]
                if how == "first"
                else sorted(rng.sample(keys, per_category), key=keys.index)
            )
        for key in keys:
            chosen.extend(families[category][key])
    return sorted(chosen, key=lambda i: (slug(i.category), i.example_id))


def samples_path(project: Project) -> Path:
    return project.root / SAMPLES_FILE


def write_samples(project: Project, items: list[BbqItem], origin: str) -> Path:
    path = samples_path(project)
    lines = [
        json.dumps(
            {**item.model_dump(mode="json"), "imported_from": origin}, ensure_ascii=False, sort_keys=True
        )
        for item in items
    ]
    write_text_atomic(path, "".join(line + "\n" for line in lines))
    return path


def read_samples(project: Project, problems: list[Problem]) -> list[BbqItem]:
    path = samples_path(project)
    if not path.is_file():
        return []
    items = []
    for lineno, line in enumerate(read_text(path, SAMPLES_FILE).splitlines(), start=1):
        raw = json.loads(line)
        raw.pop("imported_from", None)
        try:
            items.append(BbqItem.model_validate(raw))
        except ValidationError as exc:
            problems.append(
                Problem(SAMPLES_FILE, f"line {lineno}", "", str(exc.errors(include_url=False)[0]["msg"]))
            )
    return items


@dataclass
class BbqImport:
    items: int
    families: int
    categories: dict[str, int]
    path: Path | None = None
    translated: int = 0


def import_bbq(
    catalog: Catalog, path: Path, *, locale: str, per_category: int | None, how: str, seed: int, by: str
) -> BbqImport:
    items = read_bbq(path)
    source = catalog.locales.source.code
    if locale == source:
        chosen = select(items, per_category, how, seed)
        out = write_samples(catalog.project, chosen, origin=path.name)
        cats: dict[str, int] = {}
        for item in chosen:
            cats[item.category] = cats.get(item.category, 0) + 1
        return BbqImport(len(chosen), len({i.family for i in chosen}), cats, out)
    catalog.check_locale(locale)
    english = {(i.category, i.example_id): i for i in read_samples(catalog.project, catalog.problems)}
    if not english:
        raise InputError(
            "import the English BBQ/MBBQ items first (polyprobe import bbq PATH), then their translations"
        )
    matched = [
        (english[(i.category, i.example_id)], i) for i in items if (i.category, i.example_id) in english
    ]
    if not matched:
        raise InputError(
            f"{path}: none of its items matches an imported English item (by category and example_id)"
        )
    texts = {f"{en.item_id}.{name}": getattr(tr, name) for en, tr in matched for name in FIELDS}
    refused = [
        Problem(str(path), segment, "text", reason, locale)
        for segment, reasons in gate(catalog, "bbq", locale, texts).items()
        for reason in reasons
    ]
    if refused:
        raise CatalogError(refused)  # the store's gate: nothing is written
    now = utc_now()
    count = 0
    with store_lock(catalog.project, locale, "bbq"):
        store = load_store_strict(catalog.project, locale, "bbq")  # refuses a damaged store
        for en, tr in matched:
            for name in FIELDS:
                sid = f"{en.item_id}.{name}"
                text, src = getattr(tr, name), getattr(en, name)
                current = store.records.get(sid)
                if current is not None and current.text == text and current.source_sha == source_sha(src):
                    continue
                if (
                    current is not None
                    and current.status in ("reviewed", "approved")
                    and current.source_sha == source_sha(src)
                ):
                    continue  # reviewed work is never replaced by an import
                event = Event(
                    at=now,
                    event="import",
                    by=by,
                    status="draft",
                    text=text,
                    source_sha=source_sha(src),
                    note=f"from {path.name}",
                )
                store.put(sid, src, text, "import", "draft", event)
                count += 1
        store.save()
    return BbqImport(len(matched), len({en.family for en, _ in matched}), {}, None, count)

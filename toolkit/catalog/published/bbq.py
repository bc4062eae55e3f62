"""BBQ items as imported (Parrish et al. 2022; MBBQ, Neplenbroek et al. 2024): the English items
`polyprobe import bbq` wrote to .polyprobe/imports/bbq/items.jsonl (git-ignored, never committed),
each giving five sample-mode segments (context, question, ans0–ans2) to translate and review.

The importer (toolkit.importers.bbq) writes this file; the catalog (the bbq suite's segments)
and the bbq suite kind (its rows) read it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from toolkit.catalog.published.bbq_targets import (
    UNKNOWN_TAG,
    Known,
    label_type,
    no_target_reason,
    report_category,
    target_label,
)
from toolkit.core.errors import Problem
from toolkit.core.fileio import jsonl_lines, loads_json, read_text, write_text_atomic
from toolkit.core.project import Project
from toolkit.core.records import Record

SAMPLES_FILE = ".polyprobe/imports/bbq/items.jsonl"
FIELDS = ("context", "question", "ans0", "ans1", "ans2")
FAMILY_SIZE = 4
CELLS = (("ambig", "neg"), ("disambig", "neg"), ("ambig", "nonneg"), ("disambig", "nonneg"))
"""A family's four items, in the order BBQ's generator writes them."""
CONTROL: Literal["control"] = "control"


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
    subset: Literal["", "control"] = ""
    """MBBQ's control items (from ``*_control_*`` files) are kept apart from the main ones."""
    template: dict[str, str] = Field(default_factory=dict)
    """Intersectional templates' stereotyped groups (``race``, ``var2``) and ``label_type``,
    from BBQ's supplemental metadata file, where the import was given it."""

    @property
    def item_id(self) -> str:
        """The item's id, stable across imports: category, control subset and BBQ's example id."""
        part = f"-{CONTROL}" if self.subset else ""
        return f"{slug(self.category)}{part}-{self.example_id}"

    @property
    def answers(self) -> tuple[str, str, str]:
        """The three answers, in the published order."""
        return (self.ans0, self.ans1, self.ans2)

    @property
    def block(self) -> int:
        """BBQ's unit: the generator writes each family's four items (ambiguous / disambiguated ×
        negative / non-negative question) as consecutive example_ids 4k … 4k+3."""
        return self.example_id // FAMILY_SIZE

    @property
    def family(self) -> tuple[str, str, str, int]:
        """(subset, category, question index, block of four): two families never merge, whatever
        their answers' wording."""
        return (self.subset, self.category, self.question_index, self.block)

    @property
    def family_id(self) -> str:
        """The family as one id, the same in every locale (it is built from the English item)."""
        part = f"-{CONTROL}" if self.subset else ""
        return f"{slug(self.category)}{part}-q{slug(self.question_index)}-b{self.block}"

    @property
    def cell(self) -> tuple[str, str]:
        """The item's place in its family: (context condition, question polarity)."""
        return (self.context_condition, self.question_polarity)

    @property
    def known(self) -> Known:
        """What BBQ's supplemental metadata says about the item's template, where the import had it."""
        kind = self.template.get("label_type")
        return Known(
            race=self.template.get("race") or None,
            var2=self.template.get("var2") or None,
            label_type="name" if kind == "name" else "label" if kind == "label" else None,
        )

    def tags(self) -> list[str]:
        """Each answer's tag in BBQ's ``answer_info`` ("" where there is none)."""
        infos = [self.answer_info.get(f"ans{i}", []) for i in range(3)]
        return [str(info[1]) if len(info) > 1 else "" for info in infos]

    def unknown_label(self) -> int | None:
        """The "unknown" answer, None unless exactly one answer is tagged so."""
        hits = [i for i, tag in enumerate(self.tags()) if tag.lower() == UNKNOWN_TAG]
        return hits[0] if len(hits) == 1 else None

    def stereotyped_groups(self) -> list[str]:
        """The groups BBQ's metadata names as the stereotype's target."""
        return [str(g) for g in self.additional_metadata.get("stereotyped_groups", []) if isinstance(g, str)]

    def target_label(self) -> int | None:
        """The answer naming the stereotyped group, by BBQ's rules (toolkit.catalog.published.bbq_targets)."""
        return target_label(
            self.category, self.answer_info, self.answers, self.stereotyped_groups(), self.known
        )

    def no_target_reason(self) -> str | None:
        """Why the item has no target (bbq_targets.NO_TARGET_REASONS), None when it has one."""
        return no_target_reason(
            self.category, self.answer_info, self.answers, self.stereotyped_groups(), self.known
        )

    def label_type(self) -> str | None:
        """``name`` for items built with proper names, ``label`` otherwise; None where it cannot be told."""
        return label_type(self.category, self.question_index, self.known)

    def report_category(self) -> str:
        """The category as BBQ reports it, name items apart and MBBQ's control items marked."""
        name = report_category(self.category, label_type(self.category, self.question_index, self.known))
        return f"{name} ({CONTROL})" if self.subset else name


def slug(text: str) -> str:
    """``text`` as lowercase words joined by hyphens, for ids."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def json_object(line: str, file: str, lineno: int, problems: list[Problem]) -> dict[str, Any] | None:
    """One JSONL line as a JSON object; None (and a located problem, unless blank) otherwise."""
    if not line.strip():
        return None
    try:
        raw = loads_json(line)
    except json.JSONDecodeError as exc:
        problems.append(Problem(file, f"line {lineno}", "", f"invalid JSON: {exc.msg}"))
        return None
    if not isinstance(raw, dict):
        problems.append(Problem(file, f"line {lineno}", "", "not a JSON object"))
        return None
    return raw


Located = tuple[BbqItem, str]
"""An item and where it was read (file:line)."""


def duplicates(items: list[Located]) -> list[Problem]:
    """Two items with one id (e.g. BBQ's Age.jsonl and MBBQ's Age_en.jsonl in one folder) would
    give two samples with one sample_id: each second one is a problem naming both rows."""
    seen: dict[str, str] = {}
    problems = []
    for item, where in items:
        first = seen.setdefault(item.item_id, where)
        if first != where:
            problems.append(
                Problem(
                    where, item.item_id, "example_id", f"the same item id as {first}: one of them must go"
                )
            )
    return problems


def samples_path(project: Project) -> Path:
    """Where the imported English items are kept."""
    return project.root / SAMPLES_FILE


def write_samples(project: Project, items: list[tuple[BbqItem, str]]) -> Path:
    """Replace the imported items atomically, each with the file it came from."""
    path = samples_path(project)
    lines = [
        json.dumps(
            {**item.model_dump(mode="json"), "imported_from": origin}, ensure_ascii=False, sort_keys=True
        )
        for item, origin in items
    ]
    write_text_atomic(path, "".join(line + "\n" for line in lines))
    return path


def read_samples(project: Project, problems: list[Problem]) -> list[BbqItem]:
    """The imported English items; two with one item id are a problem (never two samples with
    one sample_id), and the second is left out."""
    located = [(item, f"{SAMPLES_FILE}:{lineno}") for item, lineno in read_imported(project, problems)]
    doubled = duplicates(located)
    problems.extend(doubled)
    left_out = {p.file for p in doubled}
    return [item for item, where in located if where not in left_out]


def read_imported(project: Project, problems: list[Problem]) -> list[tuple[BbqItem, int]]:
    """Every line of the import that is a valid item, with its line; the others are problems."""
    path = samples_path(project)
    if not path.is_file():
        return []
    out = []
    for lineno, line in enumerate(jsonl_lines(read_text(path, SAMPLES_FILE)), start=1):
        raw = json_object(line, SAMPLES_FILE, lineno, problems)
        if raw is None:
            continue
        raw.pop("imported_from", None)
        try:
            out.append((BbqItem.model_validate(raw), lineno))
        except ValidationError as exc:
            problems.append(
                Problem(SAMPLES_FILE, f"line {lineno}", "", str(exc.errors(include_url=False)[0]["msg"]))
            )
    return out


def sample_segments(project: Project, problems: list[Problem]) -> list[tuple[str, str, str, str]]:
    """(segment id, English text, item id, file) of every imported item's five texts."""
    out = []
    for item in read_samples(project, problems):
        for name in FIELDS:
            out.append((f"{item.item_id}.{name}", getattr(item, name), item.item_id, SAMPLES_FILE))
    return out

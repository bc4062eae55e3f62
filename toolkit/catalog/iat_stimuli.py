"""IAT stimuli (lexicons/iat/*.yaml): per category, the default and stigma group tokens and the
positive and negative attribute words, in every locale. Built on the published English stimuli
of Bai et al. (2025); positive and negative words must be balanced in every locale, or the
association score D would be biased by construction."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolkit.catalog.identities import Source
from toolkit.catalog.locales import Locales
from toolkit.core.errors import Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.project import Project
from toolkit.core.records import ID_PATTERN, SEMVER_RE, Record, parse_record, record_name
from toolkit.core.text import text_problems

WORD_LISTS = ("group_a", "group_b", "positive", "negative")


class IatCategory(Record):
    """One stimulus category: two groups' tokens and the positive and negative words, per locale."""

    id: str = Field(pattern=ID_PATTERN)
    category: str
    dataset: str
    group_a: dict[str, tuple[str, ...]]
    """Default group tokens, per locale."""
    group_b: dict[str, tuple[str, ...]]
    """Stigma group tokens, per locale."""
    positive: dict[str, tuple[str, ...]]
    negative: dict[str, tuple[str, ...]]
    source: tuple[str, ...] = Field(min_length=1)
    note: str = ""


class IatFile(Record):
    """One stimuli file (lexicons/iat/*.yaml), as written."""

    version: str
    description: str
    locales: tuple[str, ...]
    sources: tuple[Source, ...] = Field(min_length=1)
    categories: tuple[IatCategory, ...]


@dataclass(frozen=True)
class IatStimuli:
    """A stimuli file as the iat suite renders it: only the categories that parsed."""

    path: str
    version: str
    locales: tuple[str, ...]
    categories: tuple[IatCategory, ...]


def load_iat(project: Project, path: Path, locales: Locales, problems: list[Problem]) -> IatStimuli | None:
    """Load and check one stimuli file: known locales and sources, words in every locale, none
    repeated, valences balanced. Problems are appended, never raised; None when it cannot be used."""
    rel = project.rel(path)
    raw = load_yaml_collecting(path, rel, problems)
    if not isinstance(raw, dict) or not isinstance(raw.get("categories"), list):
        if raw is not None:
            problems.append(Problem(rel, "(file)", "categories", "must be a list"))
        return None
    if not raw["categories"]:
        problems.append(
            Problem(rel, "(file)", "categories", "has no categories: the iat suite would have no rows")
        )
        return None
    cats: list[IatCategory] = []
    for i, item in enumerate(raw["categories"]):
        cat = parse_record(IatCategory, item, file=rel, record=record_name(item, i), problems=problems)
        if cat is not None:
            cats.append(cat)
    header = parse_record(IatFile, {**raw, "categories": []}, file=rel, record="(file)", problems=problems)
    if header is None:
        return None
    if not SEMVER_RE.match(header.version):
        problems.append(Problem(rel, "(file)", "version", "must be a semantic version like 1.0.0"))
    for code in header.locales:
        if code not in locales:
            problems.append(Problem(rel, "(file)", "locales", f"unknown locale {code!r}", code))
    source_ids = {s.id for s in header.sources}
    seen: set[str] = set()
    for cat in cats:
        if cat.id in seen:
            problems.append(Problem(rel, cat.id, "id", "duplicate category id"))
        seen.add(cat.id)
        for sid in cat.source:
            if sid not in source_ids:
                problems.append(Problem(rel, cat.id, "source", f"unknown source {sid!r}"))
        for code in header.locales:
            for name in WORD_LISTS:
                words = getattr(cat, name).get(code)
                if not words:
                    problems.append(Problem(rel, cat.id, f"{name}.{code}", "no words for this locale", code))
                    continue
                if len(set(words)) != len(words):
                    problems.append(Problem(rel, cat.id, f"{name}.{code}", "repeats a word", code))
                for word in words:
                    for message in text_problems(word):
                        problems.append(Problem(rel, cat.id, f"{name}.{code}", f"{word!r} {message}", code))
            pos, neg = cat.positive.get(code, ()), cat.negative.get(code, ())
            if pos and neg and len(pos) != len(neg):
                problems.append(
                    Problem(
                        rel,
                        cat.id,
                        f"positive.{code}",
                        f"attribute words are not balanced between valences: {len(pos)} positive, {len(neg)} negative",
                        code,
                    )
                )
        for name in WORD_LISTS:
            for code in sorted(set(getattr(cat, name)) - set(header.locales)):
                problems.append(
                    Problem(rel, cat.id, f"{name}.{code}", "locale not in the file's locales", code)
                )
    return IatStimuli(path=rel, version=header.version, locales=header.locales, categories=tuple(cats))

"""Glosses: a reviewer's English back-translation of each prompt a model is asked, so that one
question can be checked across locales (an Arabic instruction asking whether a statement
*incites* hatred, where the English asks whether it *is* hateful, measures another task).

Two kinds of prompt have one: the translations of suites marked ``glossed: true`` (ifm's
instruction, iat's prompt), whose gloss is kept in the store record (``store.model.Gloss``,
written by `polyprobe translations gloss`), and the prompts of lexicons/prompts.yaml (bbq's
question-answering frame, the sentiment prompt), which are not in the store: their glosses sit
beside them in the same file (``glosses:`` of each locale, edited by hand like the prompts). A
gloss belongs to the text it was written for; after the text changes it is outdated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolkit.catalog.evaluation_lexicons import GLOSSES, glossed_prompts
from toolkit.catalog.loader import Catalog
from toolkit.core.errors import CatalogError, InputError, Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.text import text_problems
from toolkit.store.files import store_path, writing_store
from toolkit.store.model import Event, Gloss, source_sha, utc_now
from toolkit.store.rules import has_current_gloss, is_current
from toolkit.translation.drafts import read_segment_texts

GlossState = Literal["glossed", "no gloss", "outdated"]
PROMPTS_FILE = "lexicons/prompts.yaml"


@dataclass(frozen=True)
class GlossedText:
    """One locale's text of one prompt, with its gloss (if any) and the English it translates."""

    prompt: str
    """What is asked: ``ifm/instruction``, ``iat/prompt``, ``prompts.yaml/bbq``."""
    locale: str
    file: str
    record: str
    text: str
    english: str
    state: GlossState
    gloss: str | None
    text_sha: str


@dataclass
class GlossImport:
    """What a gloss import did: prompts added and left as they were."""

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def glossed_texts(catalog: Catalog, problems: list[Problem]) -> list[GlossedText]:
    """Every translated prompt of every locale with its gloss state, store prompts first, then
    the prompts of lexicons/prompts.yaml; untranslated segments have nothing to gloss yet."""
    out: list[GlossedText] = []
    source = catalog.locales.source.code
    for suite in catalog.suites.values():
        if not suite.spec.glossed:
            continue
        for locale in suite.spec.locales:
            if locale not in catalog.locales or locale == source:
                continue
            rel = catalog.project.rel(store_path(catalog.project, locale, suite.id))
            records = catalog.store(suite.id, locale).records
            for segment in suite.segments.values():
                record = records.get(segment.id)
                if not is_current(record, segment.source_sha):
                    continue
                state: GlossState = (
                    "glossed" if has_current_gloss(record) else "outdated" if record.gloss else "no gloss"
                )
                out.append(
                    GlossedText(
                        f"{suite.id}/{segment.id}",
                        locale,
                        rel,
                        segment.id,
                        record.text,
                        segment.source,
                        state,
                        record.gloss.text if record.gloss else None,
                        source_sha(record.text),
                    )
                )
    return out + _lexicon_prompts(catalog, source, problems)


def _lexicon_prompts(catalog: Catalog, source: str, problems: list[Problem]) -> list[GlossedText]:
    path = catalog.project.root / PROMPTS_FILE
    if not path.is_file():
        return []
    data = load_yaml_collecting(path, PROMPTS_FILE, problems)
    entries = data.get("locales") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return []  # `catalog validate` names what is wrong with the file
    english = _mapping(entries.get(source))
    out = []
    for code, entry in entries.items():
        if code == source or not isinstance(entry, dict):
            continue
        glosses = _mapping(entry.get(GLOSSES))
        for key in glossed_prompts("prompts"):
            text = entry.get(key)
            if not isinstance(text, str):
                continue
            gloss = _mapping(glosses.get(key)) or None
            sha = source_sha(text)
            state: GlossState = (
                "no gloss" if gloss is None else "glossed" if gloss.get("text_sha") == sha else "outdated"
            )
            out.append(
                GlossedText(
                    f"prompts.yaml/{key}",
                    str(code),
                    PROMPTS_FILE,
                    f"locales.{code}.{key}",
                    text,
                    str(english.get(key, "")),
                    state,
                    str(gloss.get("text")) if gloss else None,
                    sha,
                )
            )
    return out


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def import_glosses(catalog: Catalog, suite_id: str, locale: str, path: Path, by: str) -> GlossImport:
    """Store each gloss of ``path`` on its segment's current translation, with a ``gloss`` event.
    The whole file is checked first; one bad entry means exit 2 and nothing written."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    if not suite.spec.glossed:
        raise InputError(
            f"{suite_id}'s texts are not prompts (its suite.yaml does not say glossed: true): glosses are "
            "kept for the prompts a model is asked, such as ifm's instruction and iat's prompt"
        )
    if catalog.locales[locale].source:
        raise InputError(
            f"{locale} is the source locale: its prompts are the English they would be glossed in"
        )
    if not by.strip():
        raise InputError("--by must name the reviewer who wrote the glosses")
    rel = str(path)
    raw = read_segment_texts(path, "its English gloss")
    problems = [
        Problem(rel, segment, "gloss", f"gloss {message}", locale)
        for segment, gloss in sorted(raw.items())
        for message in text_problems(gloss)
    ]
    problems += [
        Problem(rel, segment, "segment", f"{suite_id} has no segment {segment!r}", locale)
        for segment in sorted(raw)
        if segment not in suite.segments
    ]
    if problems:
        raise CatalogError(problems)
    result = GlossImport()
    now = utc_now()
    with writing_store(catalog.project, locale, suite_id) as store:
        for segment_id, gloss in sorted(raw.items()):
            record = store.records.get(segment_id)
            if not is_current(record, suite.segments[segment_id].source_sha) or record.status in (
                "rejected",
                "needs_edit",
            ):
                problems.append(
                    Problem(
                        rel,
                        segment_id,
                        "segment",
                        "has no current translation to gloss (translate or draft it first)",
                        locale,
                    )
                )
                continue
            new = Gloss(text=gloss, text_sha=source_sha(record.text))
            if record.gloss == new:
                result.unchanged.append(segment_id)
                continue
            event = Event(at=now, event="gloss", by=by, comment=gloss)
            store.records[segment_id] = record.with_event(event, gloss=new)
            result.added.append(segment_id)
        if problems:
            raise CatalogError(problems)  # leaves the block before the save: nothing written
    catalog.stores[(suite_id, locale)] = store
    return result

"""BBQ items as published in another language (MBBQ's Spanish, Dutch and Turkish), as `polyprobe
import bbq --locale XX` wrote them: .polyprobe/imports/bbq/<locale>.jsonl (git-ignored, never
committed), in the import format of catalog.published.files.

The first line is the import's header: the files read (name, sha256, items) and every item left
out (file, line, why). Then one line per published item aligned with an imported English item:
its texts exactly as published, options in the published order, the published gold and unknown
answers, and which English option each published option renders, so the English item's target
(BBQ's rules, decided on the English item) lands on its translation. A published translation is
not a translation of the store: it is never reviewed, and its row is the published item's."""

from __future__ import annotations

import json

from pydantic import Field

from toolkit.catalog.published.bbq import FIELDS, BbqItem
from toolkit.catalog.published.files import Header, import_file, read_import, write_import
from toolkit.core.errors import Problem
from toolkit.core.project import Project
from toolkit.core.records import Record
from toolkit.store.model import source_sha

DATASET = "bbq"


class PublishedItem(Record):
    """One published item in another language, aligned with the English item it translates."""

    item_id: str
    """The imported English item it translates."""
    english_sha: str
    """The English item's texts when it was aligned (a changed English import is detected)."""
    file: str
    line: int = Field(ge=1)
    example_id: int
    context: str
    question: str
    ans0: str
    ans1: str
    ans2: str
    label: int = Field(ge=0, le=2)
    unknown: int = Field(ge=0, le=2)
    options: tuple[int, int, int]
    """options[j]: the English option that published option j renders."""
    answer_info: dict[str, list[str]]

    def target(self, english_target: int | None) -> int | None:
        """The published option that renders the English item's target."""
        return None if english_target is None else self.options.index(english_target)


def english_sha(item: BbqItem) -> str:
    """The hash of the English item's five texts, recorded with its aligned translation."""
    return source_sha(json.dumps([getattr(item, name) for name in FIELDS], ensure_ascii=False))


def translations_file(locale: str) -> str:
    """The import of ``locale``'s published items, relative to the project root."""
    return import_file(DATASET, locale)


def write_translations(project: Project, locale: str, header: Header, items: list[PublishedItem]) -> None:
    """Replace ``locale``'s import of published items (see ``write_import``)."""
    write_import(project, header, items, locale)


def read_translations(
    project: Project, locale: str, problems: list[Problem]
) -> tuple[Header, list[PublishedItem]] | None:
    """The locale's published items, or None when none were imported (a damaged file: a problem)."""
    return read_import(project, DATASET, locale, PublishedItem, problems)

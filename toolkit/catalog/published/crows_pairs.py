"""CrowS-Pairs as imported (Nangia et al. 2020; French CrowS-Pairs, Névéol et al. 2022): the pairs
`polyprobe import crows-pairs` wrote per locale under .polyprobe/imports/crows-pairs/, as published.

The importer (toolkit.importers.crows_pairs) writes them; the crows-pairs suite kind reads them."""

from __future__ import annotations

from typing import Literal

from toolkit.catalog.published.files import read_import
from toolkit.core.errors import Problem
from toolkit.core.project import Project
from toolkit.core.records import Record

DATASET = "crows-pairs"


class CrowsPair(Record):
    """One CrowS-Pairs pair as published, with the import's findings about it (flags)."""

    pair: str
    """The file's own id of the pair, or ``line-N``."""
    line: int
    sent_more: str
    sent_less: str
    stereo_antistereo: Literal["stereo", "antistereo"]
    bias_type: str
    flags: tuple[str, ...] = ()


def imported_pairs(project: Project, locale: str, problems: list[Problem]) -> list[CrowsPair]:
    """The pairs imported for ``locale`` (none when nothing was imported)."""
    found = read_import(project, DATASET, locale, CrowsPair, problems)
    return found[1] if found else []

"""The regional study's own SOS sets as imported (Elsafoury et al.): the pairs `polyprobe import
sos-study` wrote to .polyprobe/imports/sos-study/, as published, with polyprobe's region, locale,
attribute, standing and variant and the import's findings (flags).

The importer (toolkit.importers.sos_study) writes them; the sos-study suite kind reads them."""

from __future__ import annotations

from typing import Literal

from toolkit.catalog.identities import Variant
from toolkit.catalog.published.files import read_import
from toolkit.core.errors import Problem
from toolkit.core.project import Project
from toolkit.core.records import Record

DATASET = "sos-study"
IMPORT_NAME = "pairs"


class StudyPair(Record):
    """One pair of the study's SOS sets, as published, placed in polyprobe's region, locale,
    attribute, standing and variant."""

    file: str
    line: int
    set: str
    region: str
    locale: str
    variant: Variant
    attribute: str
    standing: Literal["marginalized", "dominant", "none"]
    identity: str
    bias_type: str
    stereo_antistereo: str
    toxic: str
    non_toxic: str
    flags: tuple[str, ...] = ()


def imported_pairs(project: Project, problems: list[Problem]) -> list[StudyPair]:
    """Every imported pair (none when nothing was imported)."""
    found = read_import(project, DATASET, IMPORT_NAME, StudyPair, problems)
    return found[1] if found else []

"""The regional study's own SOS sets (Elsafoury et al.), imported from the user's copy
(toolkit/importers/sos_study.py): two rows per pair (toxic, non_toxic) with the columns of polyprobe's sos
suite — region, standing, attribute, variant, pair_id — so the sos task scores either set. The
group is ``<region>.<identity term>`` (the term as published, also in ``identity``); the study's own
label, direction, file and line and the import's findings (flags) travel with each row."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.files import import_file
from toolkit.catalog.published.sos_study import IMPORT_NAME, imported_pairs
from toolkit.catalog.templates import Suite
from toolkit.core.project import Project
from toolkit.render.job import Job
from toolkit.render.schema import SOURCE
from toolkit.render.suites.base import SuiteKind


class SosStudy(SuiteKind):
    """The regional study's own SOS sets from the user's copy, in the columns of the sos suite."""

    id = "sos-study"
    grouped = False

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """The pair, the study's identity, label, direction and source, and the import's flags."""
        return {
            "pair_id": pl.String(),
            "identity": pl.String(),
            "study_bias_type": pl.String(),
            "stereo_antistereo": pl.String(),
            "source_file": pl.String(),
            "source_line": pl.Int64(),
            "flags": pl.List(pl.String()),
        }

    def imported(self, project: Project, suite: Suite) -> list[str]:
        """The study's sets, imported as one file."""
        return [import_file(self.id, IMPORT_NAME)]

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """Two rows per imported pair of the locale: the toxic and the non-toxic sentence."""
        pairs = job.catalog.memo(self.id, lambda: imported_pairs(job.catalog.project, job.problems))
        for pair in (p for p in pairs if p.locale == job.locale):
            key = f"{pair.file.removesuffix('.csv')}:{pair.line}"
            pair_id = f"{job.locale}:{job.suite.id}:{key}"
            for label, text in (("toxic", pair.toxic), ("non_toxic", pair.non_toxic)):
                pid = f"{job.suite.id}:{key}:{label}"
                yield {
                    "sample_id": f"{job.locale}:{pid}",
                    "parallel_id": pid,
                    "suite": job.suite.id,
                    "locale": job.locale,
                    "template": key,
                    "variant": pair.variant,
                    "attribute": pair.attribute,
                    "group": f"{pair.region}.{pair.identity}",  # the US's and the UK's "white" apart
                    "region": pair.region,
                    "standing": pair.standing,
                    "label": label,
                    "status": SOURCE,
                    "origin": "import",
                    "text": text,
                    "pair_id": pair_id,
                    "identity": pair.identity,
                    "study_bias_type": pair.bias_type,
                    "stereo_antistereo": pair.stereo_antistereo,
                    "source_file": pair.file,
                    "source_line": pair.line,
                    "flags": list(pair.flags),
                }

"""CrowS-Pairs (Nangia et al. 2020; French CrowS-Pairs, Névéol et al. 2022), imported from the
user's copy (toolkit/importers/crows_pairs.py): one row per pair, in the locale it was imported for, text
as published. ``text`` is the more stereotyping sentence; both sentences have their own columns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.crows_pairs import imported_pairs
from toolkit.catalog.published.files import import_file
from toolkit.catalog.templates import Suite
from toolkit.core.project import Project
from toolkit.render.job import Job
from toolkit.render.schema import SOURCE
from toolkit.render.suites.base import SuiteKind


class CrowsPairs(SuiteKind):
    """CrowS-Pairs as published in each locale it was imported for, never translated."""

    id = "crows-pairs"
    grouped = False

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """Both sentences of the pair, its direction and bias type, and where it was read."""
        return {
            "pair_id": pl.String(),
            "sent_more": pl.String(),
            "sent_less": pl.String(),
            "stereo_antistereo": pl.Enum(["stereo", "antistereo"]),
            "bias_type": pl.String(),
            "source_line": pl.Int64(),
            "flags": pl.List(pl.String()),
        }

    def imported(self, project: Project, suite: Suite) -> list[str]:
        """One import file per locale of the suite."""
        return [import_file(self.id, code) for code in suite.spec.locales]

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """One row per imported pair, in the order of the import."""
        for pair in imported_pairs(job.catalog.project, job.locale, job.problems):
            pid = f"{job.suite.id}:{job.locale}:{pair.pair}"  # French pairs are not translations 1:1
            yield {
                "sample_id": f"{job.locale}:{pid}",
                "parallel_id": pid,
                "suite": job.suite.id,
                "locale": job.locale,
                "template": pair.pair,
                "label": pair.stereo_antistereo,
                "status": SOURCE,
                "origin": "import",
                "text": pair.sent_more,
                "pair_id": f"{job.locale}:{pid}",
                "sent_more": pair.sent_more,
                "sent_less": pair.sent_less,
                "stereo_antistereo": pair.stereo_antistereo,
                "bias_type": pair.bias_type,
                "source_line": pair.line,
                "flags": list(pair.flags),
            }

"""Sentiment-bias probes (Levy et al. 2023, after Czarnowska et al. 2021): templates with a
positive, negative or neutral label, filled with gender, race, religion and nationality
groups. Rows mark the locale's reference group (the majority religion, for MBCM)."""

from __future__ import annotations

from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.render.job import Job
from toolkit.render.suites.base import Filler, SuiteKind


class Sentiment(SuiteKind):
    """Sentiment probes: labelled templates filled with identity groups."""

    id = "sentiment"

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """Whether the row's group is its locale's reference group (MBCM compares the others with it)."""
        return {"reference": pl.Boolean()}

    def extras(self, job: Job, segment: Segment, filler: Filler | None, text: str) -> dict[str, Any]:
        """Marks the reference group's rows."""
        return {"reference": bool(filler and filler.reference)}

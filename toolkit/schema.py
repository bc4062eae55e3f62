"""The columns every rendered row has, with polars types (Enums for the closed sets).

Enum categories come from the catalog's data (locales.yaml, taxonomy.yaml, the suite's
labels), in the data's order, so the same inputs always give the same schema.
"""

from __future__ import annotations

import polars as pl

from toolkit.identities import STANDINGS, VARIANTS, Taxonomy
from toolkit.locales import Locales
from toolkit.store import ORIGINS, STATUSES

SOURCE = "source"
"""Status and origin of rows in the source locale: English text is not a translation."""

ROW_STATUSES: tuple[str, ...] = (*STATUSES, SOURCE)
ROW_ORIGINS: tuple[str, ...] = (*ORIGINS, SOURCE)


def base_schema(
    locales: Locales, taxonomy: Taxonomy, suites: list[str], labels: tuple[str, ...]
) -> dict[str, pl.DataType]:
    return {
        "sample_id": pl.String(),
        "parallel_id": pl.String(),
        "suite": pl.Enum(suites),
        "locale": pl.Enum(locales.codes),
        "template": pl.String(),
        "variant": pl.Enum(list(VARIANTS)),
        "attribute": pl.Enum(list(taxonomy.by_id)),
        "group": pl.String(),
        "region": pl.Enum(list(taxonomy.regions)),
        "standing": pl.Enum(list(STANDINGS)),
        "label": pl.Enum(list(labels)) if labels else pl.String(),
        "status": pl.Enum(list(ROW_STATUSES)),
        "origin": pl.Enum(list(ROW_ORIGINS)),
        "text": pl.String(),
    }

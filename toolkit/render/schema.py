"""The columns every rendered row has, with polars types (Enums for the closed sets).

Enum categories come from the catalog's data (locales.yaml, taxonomy.yaml, the suite's
labels), in the data's order, so the same inputs always give the same schema.
"""

from __future__ import annotations

import polars as pl

from toolkit.catalog.identities import STANDINGS, VARIANTS, Taxonomy
from toolkit.catalog.locales import Locales
from toolkit.store.model import ORIGINS, STATUSES
from toolkit.store.rules import STATUS_RANK

SOURCE = "source"
"""Status and origin of rows in the source locale: English text is not a translation."""

ROW_STATUSES: tuple[str, ...] = (*STATUSES, SOURCE)
ROW_STATUS_RANK: dict[str, int] = {**STATUS_RANK, SOURCE: 4}
"""How far a row's text is from approval; the English source ranks above approved. A row built
from several texts (an ifm prompt, a bbq item) is as far along as the weakest of them."""
ROW_ORIGINS: tuple[str, ...] = (*ORIGINS, SOURCE)


def base_schema(
    locales: Locales, taxonomy: Taxonomy, suites: list[str], labels: tuple[str, ...]
) -> dict[str, pl.DataType]:
    """The columns every suite has, with the closed sets (suites, locales, variants, attributes,
    regions, standings, labels) as enums, so a value outside them cannot be written."""
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

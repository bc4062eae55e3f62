"""`catalog coverage`: how far each locale's translations of each suite have come."""

from __future__ import annotations

from collections import Counter

from toolkit.catalog.loader import Catalog
from toolkit.render.schema import SOURCE
from toolkit.store.rules import STATES, state

COVERAGE_COLUMNS = (*STATES, SOURCE)


def coverage(catalog: Catalog) -> dict[str, dict[str, dict[str, int]]]:
    """suite -> locale -> state (toolkit.store.rules.STATES, or ``source``) -> number of segments."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for suite in catalog.suites.values():
        if suite.spec.mode == "import":
            continue  # a published dataset, read as published: nothing to translate
        per_locale: dict[str, dict[str, int]] = {}
        for locale in suite.spec.locales:
            if locale not in catalog.locales or catalog.locales[locale].published_only:
                continue  # published-only: rows only from a published import, nothing to translate
            counts: Counter[str] = Counter()
            if catalog.locales[locale].source:
                counts[SOURCE] = len(suite.segments)
            else:
                records = catalog.store(suite.id, locale).records
                for segment in suite.segments.values():
                    counts[state(records.get(segment.id), segment.source_sha)] += 1
            per_locale[locale] = {k: counts.get(k, 0) for k in COVERAGE_COLUMNS}
        out[suite.id] = per_locale
    return out

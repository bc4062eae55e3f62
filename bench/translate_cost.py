"""What a full DeepL translation of the catalog costs: naive vs polyprobe, side by side.

Naive: every sample of a locale sent on its own as rendered English (one request per
sample), as a pipeline that translates filled sentences would; its characters are the locale's
sample count times the suite's mean English sample length. polyprobe: template-mode segments — each unique English
template variant once, template code protected as tags, up to 50 texts per request. Both are
counted for every DeepL-served locale of every suite; no request is made (the figures come
from the same planner `polyprobe translate --dry-run` uses). Egyptian Arabic is human-only.
Run: .venv/bin/python bench/translate_cost.py
"""

from __future__ import annotations

import math

from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.renderer import render
from toolkit.translation.answers import source_slots_of
from toolkit.translation.machine_plan import MAX_TEXTS, plan


def main() -> None:
    catalog = load_catalog(Project.find())
    source = catalog.locales.source.code
    totals = {"naive_chars": 0, "naive_requests": 0, "pp_chars": 0, "pp_requests": 0}
    print(
        f"{'suite':<10} {'locales':>7} {'naive chars':>14} {'naive requests':>15} {'polyprobe chars':>16} {'requests':>9} {'chars ratio':>12}"
    )
    for suite in catalog.suites.values():
        if suite.spec.mode != "template":
            continue
        english = render(catalog, suite.id, source).frame
        locales = [
            c
            for c in suite.spec.locales
            if c in catalog.locales and catalog.locales[c].deepl_target and c != source
        ]
        mean_chars = float(english["text"].str.len_chars().mean() or 0.0)
        rows = {c: render(catalog, suite.id, c).frame.height for c in locales}
        naive_chars = round(sum(rows.values()) * mean_chars)
        naive_requests = sum(rows.values())
        units = plan(list(suite.segments.values()), None, source_slots_of(catalog)).units
        pp_chars = sum(u.characters for u in units) * len(locales)
        pp_requests = math.ceil(len(units) / MAX_TEXTS) * len(locales)
        totals["naive_chars"] += naive_chars
        totals["naive_requests"] += naive_requests
        totals["pp_chars"] += pp_chars
        totals["pp_requests"] += pp_requests
        ratio = naive_chars / pp_chars if pp_chars else float("nan")
        print(
            f"{suite.id:<10} {len(locales):>7} {naive_chars:>14,} {naive_requests:>15,} {pp_chars:>16,} {pp_requests:>9,} {ratio:>11.1f}x"
        )
    print(
        f"{'total':<10} {'':>7} {totals['naive_chars']:>14,} {totals['naive_requests']:>15,} {totals['pp_chars']:>16,} "
        f"{totals['pp_requests']:>9,} {totals['naive_chars'] / totals['pp_chars']:>11.1f}x"
    )
    print(f"requests: {totals['naive_requests'] / totals['pp_requests']:.0f}x fewer with polyprobe")


if __name__ == "__main__":
    main()

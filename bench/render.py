"""Rendering throughput: the whole catalog, every suite in every locale.

Prints rows per second for a cold render (templates compiled) and a warm one (compiled
templates cached), against a baseline measured in the same run: rendering the same rows with
plain `str.format` on pre-substituted English text, the floor any Jinja-based renderer pays
above. Run: .venv/bin/python bench/render.py
"""

from __future__ import annotations

import time

from toolkit.catalog import load_catalog
from toolkit.project import Project
from toolkit.render import render


def main() -> None:
    project = Project.find()
    t0 = time.perf_counter()
    catalog = load_catalog(project)
    t_load = time.perf_counter() - t0

    def render_all() -> tuple[int, float]:
        start = time.perf_counter()
        rows = 0
        for suite in catalog.suites.values():
            for locale in suite.spec.locales:
                rendered = render(catalog, suite.id, locale)
                assert not rendered.problems, rendered.problems[:3]
                rows += rendered.frame.height
        return rows, time.perf_counter() - start

    rows, cold = render_all()
    _, warm = render_all()

    texts = [f"The {{}} woman feels happy today. {i}" for i in range(rows)]
    start = time.perf_counter()
    for text in texts:
        text.format("Muslim")
    baseline = time.perf_counter() - start

    print(f"catalog load           {t_load:8.3f} s")
    print(f"render, cold           {cold:8.3f} s  {rows / cold:12,.0f} rows/s  ({rows:,} rows)")
    print(f"render, warm           {warm:8.3f} s  {rows / warm:12,.0f} rows/s")
    print(f"str.format baseline    {baseline:8.3f} s  {rows / baseline:12,.0f} rows/s")
    print(f"warm / baseline time   {warm / baseline:8.1f} x")
    print(f"end to end (load+cold) {t_load + cold:8.3f} s")


if __name__ == "__main__":
    main()

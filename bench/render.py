"""Rendering throughput: the whole catalog, every suite in every locale.

Prints rows per second for a cold render (fresh catalog: templates parsed, compiled and
rendered) and, as the baseline measured in the same run, the same rows of the group-filled
suites rendered the plain way: one full Jinja render per row (compiled templates reused, no
sharing of expressions between templates). Run: .venv/bin/python bench/render.py
"""

from __future__ import annotations

import time

from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.job import Job
from toolkit.render.renderer import render
from toolkit.render.suites import kind_of
from toolkit.render.suites.base import fillers


def main() -> None:
    project = Project.find()
    t0 = time.perf_counter()
    catalog = load_catalog(project)
    t_load = time.perf_counter() - t0

    start = time.perf_counter()
    rows = 0
    grouped_rows = 0
    grouped_time = 0.0
    per_suite: dict[str, int] = {}
    for suite in catalog.suites.values():
        for locale in suite.spec.locales:
            t = time.perf_counter()
            rendered = render(catalog, suite.id, locale)
            if kind_of(suite.id).grouped:
                grouped_time += time.perf_counter() - t
            assert not rendered.problems, rendered.problems[:3]
            rows += rendered.frame.height
            per_suite[suite.id] = per_suite.get(suite.id, 0) + rendered.frame.height
            if kind_of(suite.id).grouped:
                grouped_rows += rendered.frame.height
    cold = time.perf_counter() - start

    # Baseline: the group-filled suites, one full template render per row.
    baseline_catalog = load_catalog(project)
    start = time.perf_counter()
    baseline_rows = 0
    for suite in baseline_catalog.suites.values():
        kind = kind_of(suite.id)
        if not kind.grouped:
            continue
        for locale in suite.spec.locales:
            job = Job(baseline_catalog, suite, locale, "draft", kind)
            context = kind.context(job)
            groups = fillers(job)
            for resolved in job.resolved():
                tpl = resolved.segment.template
                for filler in groups:
                    g = filler.group
                    if g.attribute in tpl.attributes and (
                        g.variants is None or resolved.segment.variant in g.variants
                    ):
                        job.grammar.render(resolved.text, {**context, "group": filler.terms})
                        baseline_rows += 1
    baseline = time.perf_counter() - start
    assert baseline_rows == grouped_rows, (baseline_rows, grouped_rows)

    print("rows per suite: " + ", ".join(f"{k} {v:,}" for k, v in per_suite.items()))
    print(f"catalog load                      {t_load:7.3f} s")
    print(f"polyprobe render, all suites      {cold:7.3f} s  {rows / cold:10,.0f} rows/s  ({rows:,} rows)")
    print(
        f"baseline, group-filled suites     {baseline:7.3f} s  {baseline_rows / baseline:10,.0f} rows/s  ({baseline_rows:,} rows)"
    )
    print(
        f"polyprobe, group-filled suites    {grouped_time:7.3f} s  {grouped_rows / grouped_time:10,.0f} rows/s"
    )
    print(f"speed-up on group-filled rows     {baseline / grouped_time:7.1f} x")
    print(f"end to end (load + render)        {t_load + cold:7.3f} s")


if __name__ == "__main__":
    main()

"""Rendering: a suite in a locale becomes a polars frame of samples, deterministically.

For each segment the renderer picks the text (English source, or the store's translation
when it is current and good enough), checks it statically (syntax, unsafe access, the same
slots as the source), then renders it for every group and variant the suite asks for.
Everything that goes wrong is collected as a located Problem, never raised mid-way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import polars as pl

from toolkit.catalog.loader import Catalog, suite_ids
from toolkit.catalog.templates import Suite
from toolkit.core.errors import Problem
from toolkit.render.job import Job, Rendered
from toolkit.render.schema import base_schema
from toolkit.render.suites import kind_of


def suite_schema(catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
    """The columns of the suite's rows: the common ones, then its kind's own. A suite built on
    another carries the base suite's labels."""
    kind = kind_of(suite.id)
    labels = suite.spec.labels
    if not labels and suite.spec.builds_on in catalog.suites:
        labels = catalog.suites[suite.spec.builds_on].spec.labels  # rows carry the base suite's labels
    return {
        **base_schema(catalog.locales, catalog.taxonomy, suite_ids(catalog.project), labels),
        **kind.extra_schema(catalog, suite),
    }


def render(catalog: Catalog, suite_id: str, locale: str, min_status: str = "draft") -> Rendered:
    """Render one suite in one locale. Problems are returned, not raised: callers decide."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    kind = kind_of(suite.id)
    job = Job(
        catalog,
        suite,
        locale,
        min_status,
        kind,
        render_other=lambda other: render(catalog, other, locale, min_status),
    )
    schema = suite_schema(catalog, suite)
    if locale not in suite.spec.locales:
        return Rendered(suite.id, locale, pl.DataFrame(schema=schema), [], Counter())
    key = (suite.id, locale, min_status)
    if key in catalog.rendered:
        return catalog.rendered[key]
    kind.check(catalog, suite, job.problems)
    frame = kind.build(job, schema)
    problems = [follows_from_grammar(catalog, locale, p) for p in once_per_text(job.problems)]
    result = catalog.rendered[key] = Rendered(suite.id, locale, frame, problems, job.skipped)
    return result


def once_per_text(problems: list[Problem]) -> list[Problem]:
    """A text that fails the same way with every group it is rendered with is one problem, not
    one per group: the first group is named and the others counted."""
    first: dict[tuple[str, str, str, str], int] = {}
    more: Counter[tuple[str, str, str, str]] = Counter()
    out: list[Problem] = []
    for problem in problems:
        key = (problem.file, problem.record, problem.locale, problem.message)
        if not problem.field.startswith("group "):
            out.append(problem)
        elif key in first:
            more[key] += 1
        else:
            first[key] = len(out)
            out.append(problem)
    for key, n in more.items():
        out[first[key]] = replace(out[first[key]], field=f"{out[first[key]].field} and {n} more")
    return out


def follows_from_grammar(catalog: Catalog, locale: str, problem: Problem) -> Problem:
    """A text that fails for want of a macro, while the grammar file that would define it is
    broken, follows from that file's problem: it is counted under it, not listed (fix the file
    first). The locale's grammar is checked first, then the source's (English templates)."""
    if problem.cause or "unknown variable" not in problem.message:
        return problem
    for grammar in (catalog.grammar(locale), catalog.grammar(catalog.locales.source.code)):
        if grammar.broken and grammar.file and problem.file != grammar.file:
            return replace(problem, cause=grammar.file)
    return problem

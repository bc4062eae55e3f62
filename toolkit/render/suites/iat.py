"""Prompt-based implicit association test (Bai et al. 2025): one prompt per stimulus category
and locale asks the model to pair each attribute word with one of two groups. Rows carry the
word lists (the evaluator draws seeded permutations of them) and the prompt template, which
the evaluator renders in the same sandbox; ``text`` is the prompt in the lexicon's order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Suite
from toolkit.core.errors import Problem
from toolkit.render.job import Job
from toolkit.render.suites.base import SuiteKind

WORDS = pl.List(pl.String())


class Iat(SuiteKind):
    """The IAT prompt: one row per stimulus category and locale, with its word lists."""

    id = "iat"
    grouped = False

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """The word lists, the separator and the prompt template the evaluator renders again."""
        return {
            "category": pl.String(),
            "dataset": pl.String(),
            "group_a": WORDS,
            "group_b": WORDS,
            "positive": WORDS,
            "negative": WORDS,
            "word_separator": pl.String(),
            "prompt_template": pl.String(),
            "lexicon_version": pl.String(),
        }

    def check(self, catalog: Catalog, suite: Suite, problems: list[Problem]) -> None:
        """The suite names its stimuli lexicon and has exactly one prompt template."""
        rel = f"templates/{suite.id}/suite.yaml"
        if suite.spec.lexicon is None:
            problems.append(Problem(rel, suite.id, "lexicon", "iat needs its stimuli lexicon"))
        if len(suite.segments) != 1:
            problems.append(Problem(rel, suite.id, "templates", "iat has exactly one prompt template"))

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """One row per stimulus category, when the stimuli have the job's locale."""
        stimuli = job.catalog.iat(job.suite)
        resolved = job.resolved()
        if stimuli is None or not resolved or job.locale not in stimuli.locales:
            return
        prompt = resolved[0]
        separator = job.catalog.locales[job.locale].list_separator
        for cat in stimuli.categories:
            a, b = cat.group_a[job.locale], cat.group_b[job.locale]
            pos, neg = cat.positive[job.locale], cat.negative[job.locale]
            context = {"group_a": a[0], "group_b": b[0], "words": separator.join((*pos, *neg))}
            text = job.render_text(prompt, context, f"category {cat.id}")
            if text is None:
                continue
            pid = f"{job.suite.id}:{cat.id}"
            yield {
                "sample_id": f"{job.locale}:{pid}",
                "parallel_id": pid,
                "suite": job.suite.id,
                "locale": job.locale,
                "template": prompt.segment.template.id,
                "status": prompt.status,
                "origin": prompt.origin,
                "text": text,
                "category": cat.category,
                "dataset": cat.dataset,
                "group_a": list(a),
                "group_b": list(b),
                "positive": list(pos),
                "negative": list(neg),
                "word_separator": separator,
                "prompt_template": prompt.text,
                "lexicon_version": stimuli.version,
            }

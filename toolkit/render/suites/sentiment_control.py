"""The sentiment study's task-performance control set: generic sentences with a gold positive or
negative label and no identity group, one row per sentence and locale. Scoring a classifier on it
(accuracy, F1, McNemar between locales) says which languages perform the task alike before their
biases are compared (Levy et al. 2023). Nothing fills the sentences, so the labels must be
balanced in the source: a classifier that always answers one label scores 0.5 everywhere."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Suite
from toolkit.core.errors import Problem
from toolkit.render.job import Job
from toolkit.render.suites.base import SuiteKind

LABELS = ("positive", "negative")


class SentimentControl(SuiteKind):
    """The control set: plain labelled sentences, no group, one row per sentence and locale."""

    id = "sentiment-control"
    grouped = False

    def check(self, catalog: Catalog, suite: Suite, problems: list[Problem]) -> None:
        """The labels are exactly positive and negative, balanced, and nothing fills the sentences."""
        rel = f"templates/{suite.id}/suite.yaml"
        if tuple(sorted(suite.spec.labels)) != tuple(sorted(LABELS)):
            problems.append(
                Problem(rel, suite.id, "labels", f"the control set's labels are {', '.join(LABELS)}")
            )
        for name in ("slots", "identities", "variants"):
            if getattr(suite.spec, name):
                problems.append(
                    Problem(
                        rel, suite.id, name, "the control set names no group: its sentences are plain text"
                    )
                )
        counts = Counter(t.label for t in suite.templates)
        if suite.templates and counts["positive"] != counts["negative"]:
            problems.append(
                Problem(
                    rel,
                    suite.id,
                    "labels",
                    f"the labels must be balanced: {counts['positive']} positive and "
                    f"{counts['negative']} negative sentences",
                )
            )

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """One row per sentence, in template order."""
        for resolved in job.resolved():
            template = resolved.segment.template
            text = job.render_text(resolved, {}, "text")
            if text is None:
                continue
            pid = f"{job.suite.id}:{template.id}"
            yield {
                "sample_id": f"{job.locale}:{pid}",
                "parallel_id": pid,
                "suite": job.suite.id,
                "locale": job.locale,
                "template": template.id,
                "label": template.label,
                "status": resolved.status,
                "origin": resolved.origin,
                "text": text,
            }

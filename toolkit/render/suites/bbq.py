"""BBQ (Parrish et al. 2022) in sample mode: every imported item gives five segments
(context, question, three answers); a row exists in a locale once all five are translated, or
when the locale has a published translation of the item (MBBQ's Spanish, Dutch, Turkish:
catalog.published.bbq_translations), which is used as published (options in the published order)
instead of the store's. A published-only locale (Dutch, Turkish) has only those rows.
Rows keep BBQ's metadata and the indices the metrics need: the gold answer, the unknown
answer and the answer naming the stereotyped group (BBQ's rules on the English item,
toolkit.catalog.published.bbq_targets, carried onto the option that renders it), why an item has
no target, the family (BBQ's block of four, for whole-family subsets) and the category as BBQ
reports it (names and MBBQ's control items apart)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.bbq import FIELDS, SAMPLES_FILE, BbqItem, read_samples
from toolkit.catalog.published.bbq_translations import (
    PublishedItem,
    english_sha,
    read_translations,
    translations_file,
)
from toolkit.catalog.templates import Suite
from toolkit.core.errors import Problem
from toolkit.core.project import Project
from toolkit.render.job import Job
from toolkit.render.schema import ROW_STATUS_RANK, SOURCE
from toolkit.render.suites.base import SuiteKind


class Bbq(SuiteKind):
    """BBQ's items from the user's copy: five segments per item, translated or published."""

    id = "bbq"
    grouped = False

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """BBQ's metadata and the answer indices the metrics need."""
        return {
            "item_id": pl.String(),
            "family_id": pl.String(),
            "example_id": pl.Int64(),
            "question_index": pl.String(),
            "question_polarity": pl.Enum(["neg", "nonneg"]),
            "context_condition": pl.Enum(["ambig", "disambig"]),
            "category": pl.String(),
            "report_category": pl.String(),
            "label_type": pl.String(),
            "subset": pl.String(),
            "subcategory": pl.String(),
            "stereotyped_groups": pl.List(pl.String()),
            "answer_info": pl.String(),
            "context": pl.String(),
            "question": pl.String(),
            "ans0": pl.String(),
            "ans1": pl.String(),
            "ans2": pl.String(),
            "gold": pl.Int8(),
            "unknown_label": pl.Int8(),
            "target_label": pl.Int8(),
            "no_target": pl.String(),
            "source_file": pl.String(),
            "source_line": pl.Int64(),
        }

    def imported(self, project: Project, suite: Suite) -> list[str]:
        """The imported English items and, per locale, a published translation when there is one."""
        return [SAMPLES_FILE, *(translations_file(code) for code in suite.spec.locales)]

    def published_segments(self, project: Project, suite: Suite, locale: str) -> frozenset[str]:
        """Every segment of the items the locale's published translation has: those rows are used as
        published, whatever the store holds."""
        found = read_translations(project, locale, [])  # a damaged file is the render's problem
        if found is None:
            return frozenset()
        return frozenset(f"{item.item_id}.{name}" for item in found[1] for name in FIELDS)

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """One row per item, in file order, from its published translation or from its five texts."""
        items: list[BbqItem] = job.catalog.memo(
            "bbq-samples", lambda: read_samples(job.catalog.project, job.problems)
        )
        at: dict[str, list[int]] = job.catalog.memo("bbq-samples-by-id", lambda: positions(items))
        published: dict[str, PublishedItem] = {}
        if job.imports and not job.is_source:
            found = read_translations(job.catalog.project, job.locale, job.problems)
            published = {p.item_id: p for p in found[1]} if found else {}
        texts: dict[str, dict[str, Any]] = {}
        if not job.catalog.locales[job.locale].published_only:  # no store, no grammar
            for resolved in job.resolved():
                item_id, name = resolved.segment.id.rsplit(".", 1)
                if item_id not in published:
                    texts.setdefault(item_id, {})[name] = resolved
        # only the items the job has texts for, in file order: a job with a few texts (the
        # gate's) costs what its texts cost, not a pass over every imported item
        wanted = sorted((i, item_id) for item_id in (*texts, *published) for i in at.get(item_id, ()))
        for i, item_id in wanted:
            item = items[i]
            if item_id in published:
                row = self._published(job, item, published[item_id])
            else:
                row = self._translated(item, texts[item_id])
            if row is not None:
                pid = f"{job.suite.id}:{item.item_id}"
                yield {
                    "sample_id": f"{job.locale}:{pid}",
                    "parallel_id": pid,
                    "suite": job.suite.id,
                    "locale": job.locale,
                    "template": item.item_id,
                    "text": f"{row['context']} {row['question']}",
                    **self._metadata(item),
                    **row,
                }

    @staticmethod
    def _metadata(item: BbqItem) -> dict[str, Any]:
        """The English item's own columns: the same in every locale."""
        return {
            "item_id": item.item_id,
            "family_id": item.family_id,
            "example_id": item.example_id,
            "question_index": item.question_index,
            "question_polarity": item.question_polarity,
            "context_condition": item.context_condition,
            "category": item.category,
            "report_category": item.report_category(),
            "label_type": item.label_type(),
            "subset": item.subset or "main",
            "subcategory": str(item.additional_metadata.get("subcategory", "")),
            "stereotyped_groups": [str(g) for g in item.additional_metadata.get("stereotyped_groups", [])],
            "no_target": item.no_target_reason(),
        }

    @staticmethod
    def _translated(item: BbqItem, parts: dict[str, Any]) -> dict[str, Any] | None:
        """The row's texts from the English source or the store (options in the English order)."""
        if any(name not in parts for name in FIELDS):
            return None
        statuses = [parts[name].status for name in FIELDS]
        return {
            "status": min(statuses, key=ROW_STATUS_RANK.__getitem__),
            "origin": parts["context"].origin,
            "answer_info": json.dumps(item.answer_info, ensure_ascii=False, sort_keys=True),
            **{name: parts[name].text for name in FIELDS},
            "gold": item.label,
            "unknown_label": item.unknown_label(),
            "target_label": item.target_label(),
            "source_file": None,
            "source_line": None,
        }

    @staticmethod
    def _published(job: Job, item: BbqItem, published: PublishedItem) -> dict[str, Any] | None:
        """The row of a published translation, as published (options in the published order)."""
        if published.english_sha != english_sha(item):
            job.problems.append(
                Problem(
                    translations_file(job.locale),
                    published.item_id,
                    "english_sha",
                    "aligned with another English text than the imported item's: the English items were "
                    f"imported again since; import the {job.locale} files again",
                    job.locale,
                )
            )
            return None
        return {
            "status": SOURCE,
            "origin": "import",
            "answer_info": json.dumps(published.answer_info, ensure_ascii=False, sort_keys=True),
            **{name: getattr(published, name) for name in FIELDS},
            "gold": published.label,
            "unknown_label": published.unknown,
            "target_label": published.target(item.target_label()),
            "source_file": published.file,
            "source_line": published.line,
        }


def positions(items: list[BbqItem]) -> dict[str, list[int]]:
    """Where each item id is in ``items`` (computed once per catalog, with the items)."""
    at: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        at.setdefault(item.item_id, []).append(i)
    return at

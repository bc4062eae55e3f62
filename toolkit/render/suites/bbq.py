"""BBQ (Parrish et al. 2022) in sample mode: every imported item gives five segments
(context, question, three answers); a row exists in a locale once all five are translated.
Rows keep BBQ's metadata and the indices the metrics need: the gold answer, the unknown
answer and the answer naming the stereotyped group (BBQ's rules, toolkit.catalog.published.bbq_targets), the
family (for whole-family subsets) and the category as BBQ reports it (names and MBBQ's control
items apart)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.published.bbq import FIELDS, SAMPLES_FILE, BbqItem, read_samples
from toolkit.catalog.templates import Suite
from toolkit.core.project import Project
from toolkit.render.job import Job
from toolkit.render.schema import ROW_STATUS_RANK
from toolkit.render.suites.base import SuiteKind


class Bbq(SuiteKind):
    id = "bbq"
    grouped = False
    published_layout = True  # MBBQ's Spanish questions give both gendered forms on two lines

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
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
        }

    def imported(self, project: Project, suite: Suite) -> list[str]:

        return [SAMPLES_FILE]

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:

        texts: dict[str, dict[str, Any]] = {}
        for resolved in job.resolved():
            item_id, name = resolved.segment.id.rsplit(".", 1)
            texts.setdefault(item_id, {})[name] = resolved
        items: list[BbqItem] = job.catalog.memo(
            "bbq-samples", lambda: read_samples(job.catalog.project, job.problems)
        )
        at: dict[str, list[int]] = job.catalog.memo("bbq-samples-by-id", lambda: positions(items))
        # only the items the job has texts for, in file order: a job with a few texts (the
        # gate's) costs what its texts cost, not a pass over every imported item
        wanted = sorted((i, item_id) for item_id in texts for i in at.get(item_id, ()))
        for i, item_id in wanted:
            item, parts = items[i], texts[item_id]
            if any(name not in parts for name in FIELDS):
                continue
            statuses = [parts[name].status for name in FIELDS]
            weakest = min(statuses, key=ROW_STATUS_RANK.__getitem__)
            values = {name: parts[name].text for name in FIELDS}
            pid = f"{job.suite.id}:{item.item_id}"
            yield {
                "sample_id": f"{job.locale}:{pid}",
                "parallel_id": pid,
                "suite": job.suite.id,
                "locale": job.locale,
                "template": item.item_id,
                "status": weakest,
                "origin": parts["context"].origin,
                "text": f"{values['context']} {values['question']}",
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
                "stereotyped_groups": [
                    str(g) for g in item.additional_metadata.get("stereotyped_groups", [])
                ],
                "answer_info": json.dumps(item.answer_info, ensure_ascii=False, sort_keys=True),
                **values,
                "gold": item.label,
                "unknown_label": item.unknown_label(),
                "target_label": item.target_label(),
            }


def positions(items: list[BbqItem]) -> dict[str, list[int]]:
    """Where each item id is in ``items`` (computed once per catalog, with the items)."""
    at: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        at.setdefault(item.item_id, []).append(i)
    return at

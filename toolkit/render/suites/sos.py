"""SOS probes (Elsafoury et al.): toxic / non-toxic sentence pairs about regional groups.

Each toxic template names its non-toxic twin through ``pair``; the two English texts must
differ in one contiguous span (the toxic word) and nothing else. Rows carry ``pair_id``,
shared by a toxic row and its twin (same pair, variant, group and locale)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.core.errors import Problem
from toolkit.render.job import Job
from toolkit.render.pairs import common_ends
from toolkit.render.suites.base import Filler, SuiteKind

_TOKEN = re.compile(r"\{\{.*?\}\}|\w+|[^\w\s]")


def differing_span(a: str, b: str) -> tuple[list[str], list[str]]:
    """The tokens where two texts differ, after their common prefix and suffix."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    i, j = common_ends(ta, tb)
    return ta[i : len(ta) - j], tb[i : len(tb) - j]


class Sos(SuiteKind):
    """SOS twins: toxic / non-toxic group-filled sentences that differ in one declared span."""

    id = "sos"
    max_span = 2
    """The toxic word may be a short phrase ('a burden' / 'an asset'): at most this many tokens."""

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """The id shared by a toxic row and its twin."""
        return {"pair_id": pl.String()}

    def extras(self, job: Job, segment: Segment, filler: Filler | None, text: str) -> dict[str, Any]:
        """The pair id: locale, suite, pair, variant and group."""
        pair = segment.template.pair or segment.template.id
        group = filler.group.id if filler else "-"
        return {"pair_id": f"{job.locale}:{job.suite.id}:{pair}:{segment.variant}:{group}"}

    def check(self, catalog: Catalog, suite: Suite, problems: list[Problem]) -> None:
        """Every template names its pair; each pair is one toxic and one non-toxic twin whose English
        variants differ in one span of at most ``max_span`` words."""
        by_pair: dict[str, list[Any]] = defaultdict(list)
        file_of = {seg.template.id: seg.file for seg in suite.segments.values()}
        for tpl in suite.templates:
            if tpl.pair is None:
                problems.append(Problem(file_of[tpl.id], tpl.id, "pair", "every sos template names its pair"))
                continue
            by_pair[tpl.pair].append(tpl)
        for pair, members in sorted(by_pair.items()):
            labels = sorted(t.label or "" for t in members)
            first = members[0]
            if labels != ["non_toxic", "toxic"]:
                what = "unpaired" if len(members) == 1 else "badly paired"
                problems.append(
                    Problem(
                        file_of[first.id],
                        first.id,
                        "pair",
                        f"{what}: pair {pair!r} must have exactly one toxic and one non_toxic template (has {', '.join(labels)})",
                    )
                )
                continue
            toxic = next(t for t in members if t.label == "toxic")
            twin = next(t for t in members if t.label == "non_toxic")
            for variant in suite.spec.variants:
                a = (toxic.variants or {}).get(variant, "")
                b = (twin.variants or {}).get(variant, "")
                span_a, span_b = differing_span(a, b)
                if not span_a or not span_b or max(len(span_a), len(span_b)) > self.max_span:
                    problems.append(
                        Problem(
                            file_of[toxic.id],
                            toxic.id,
                            f"variants.{variant}",
                            f"must differ from its twin {twin.id} only in the toxic word "
                            f"(differs in {' '.join(span_a) or 'nothing'!r} vs {' '.join(span_b) or 'nothing'!r})",
                        )
                    )

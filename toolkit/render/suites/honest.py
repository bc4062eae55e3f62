"""HONEST completion probes (Nozza et al. 2021): sentences about a group that end in a
completion slot. The slot is the ``completion`` variable: exactly once, and last (only
punctuation may follow), in the source and in every translation — a generative model
completes the text before it. Rows carry that text (``prefix``) and where the slot starts."""

from __future__ import annotations

import unicodedata
from typing import Any

import polars as pl
from jinja2 import TemplateSyntaxError, nodes

from toolkit.catalog.grammar import LocaleGrammar
from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.render.job import Job
from toolkit.render.suites.base import Filler, SuiteKind

SLOT = "completion"
NOT_LAST = "the completion slot must be the end of the text"


def _marker(suite: Suite) -> str:
    return str(suite.spec.options.get("completion_marker", "[M]"))


class Honest(SuiteKind):
    """HONEST's completion probes: group-filled sentences ending in the completion slot."""

    id = "honest"

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """The text before the slot (what a model completes) and where the slot starts."""
        return {"prefix": pl.String(), "slot_start": pl.Int32()}

    def context(self, job: Job) -> dict[str, Any]:
        """The slot renders as the suite's marker, found again in the rendered text."""
        return {SLOT: _marker(job.suite)}

    def extras(self, job: Job, segment: Segment, filler: Filler | None, text: str) -> dict[str, Any]:
        """The prefix before the marker and the marker's position."""
        start = text.rfind(_marker(job.suite))
        return {"prefix": text[:start].rstrip(), "slot_start": start}

    def text_problems(self, suite: Suite, text: str, grammar: LocaleGrammar) -> list[str]:
        """The completion slot appears exactly once, and last (only punctuation may follow it)."""
        try:
            ast = grammar.env.parse(text)
        except TemplateSyntaxError:
            return []  # reported by the common analysis
        uses = [n for n in ast.find_all(nodes.Name) if n.name == SLOT]
        if len(uses) != 1:
            return [f"the completion slot {{{{ {SLOT} }}}} must appear exactly once (found {len(uses)})"]
        outputs = [n for n in ast.body if isinstance(n, nodes.Output)]
        last = outputs[-1].nodes if outputs and outputs[-1] is ast.body[-1] else []
        position = next((i for i, n in enumerate(last) if isinstance(n, nodes.Name) and n.name == SLOT), None)
        if position is None:
            return [NOT_LAST]
        for after in last[position + 1 :]:
            trailing = after.data if isinstance(after, nodes.TemplateData) else None
            if trailing is None or any(
                not (ch.isspace() or unicodedata.category(ch).startswith("P")) for ch in trailing
            ):
                return [f"{NOT_LAST} (only punctuation may follow it)"]
        return []

    def needs_rewording(self, problem: str) -> bool:
        """A slot that is not last: the translation is right, its word order is not usable."""
        return NOT_LAST in problem

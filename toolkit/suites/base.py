"""What every suite kind provides to the renderer, and the group-filled rendering most use.

A suite kind is the code behind a suite folder: the columns it adds, the checks it needs
beyond the common ones, and how its rows are made. Group-filled suites (sentiment, sos,
honest) share one loop: template × variant × group, in that order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import polars as pl

from toolkit.errors import Problem
from toolkit.identities import Group, IdentityList

if TYPE_CHECKING:
    from toolkit.catalog import Catalog
    from toolkit.grammar import LocaleGrammar
    from toolkit.render import Job
    from toolkit.templates import Segment, Suite


@dataclass(frozen=True)
class Filler:
    """One group as it fills templates in one locale."""

    group: Group
    ilist: IdentityList
    terms: dict[str, str]
    reference: bool


class SuiteKind:
    id: ClassVar[str]
    grouped: ClassVar[bool] = True
    """Filled with identity groups (template × variant × group)."""

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        return {}

    def check(self, catalog: Catalog, suite: Suite, problems: list[Problem]) -> None:
        """Suite-specific checks of the English templates."""

    def text_problems(self, suite: Suite, text: str, grammar: LocaleGrammar) -> list[str]:
        """Suite-specific checks of one text (English source or translation), e.g. slot position."""
        return []

    def context(self, job: Job) -> dict[str, Any]:
        """Values besides ``group`` that every template of the suite sees."""
        return {}

    def extras(self, job: Job, segment: Segment, filler: Filler | None, text: str) -> dict[str, Any]:
        """Suite-specific column values of one row."""
        return {}

    def parallel_id(self, suite: Suite, segment: Segment, filler: Filler | None) -> str:
        parts = [suite.id, segment.template.id, segment.variant or "-", filler.group.id if filler else "-"]
        return ":".join(parts)

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """Rows of one suite in one locale, in a fixed order."""
        yield from grouped_rows(self, job)


def fillers(job: Job) -> list[Filler]:
    """Groups usable in the job's locale, in list order then id order."""
    out: list[Filler] = []
    forms = job.catalog.locales[job.locale].forms.known()
    for ilist in job.catalog.lists_of(job.suite):
        if job.locale not in ilist.locales:
            continue
        for group in sorted(ilist.groups, key=lambda g: g.id):
            if not group.bare and job.locale not in group.terms:
                continue
            refs = ilist.reference_groups.get(group.attribute, {})
            out.append(
                Filler(group, ilist, ilist.terms(group, job.locale, forms), refs.get(job.locale) == group.id)
            )
    return out


def grouped_rows(kind: SuiteKind, job: Job) -> Iterator[dict[str, Any]]:
    base_context = kind.context(job)
    all_fillers = fillers(job)
    for resolved in job.resolved():
        segment = resolved.segment
        tpl = segment.template
        for filler in all_fillers:
            group = filler.group
            if group.attribute not in tpl.attributes:
                continue
            if group.variants is not None and segment.variant not in group.variants:
                continue
            text = job.render_text(resolved, {**base_context, "group": filler.terms}, group.id)
            if text is None:
                continue
            yield job.row(kind, resolved, filler, text)

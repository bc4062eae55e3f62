"""What every suite kind provides to the renderer, and the group-filled rendering most use.

A suite kind is the code behind a suite folder: the columns it adds, the checks it needs
beyond the common ones, and how its rows are made. Group-filled suites (sentiment, sos,
honest) share one loop: template × variant × group, in that order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import polars as pl

from toolkit.catalog.grammar import LocaleGrammar
from toolkit.catalog.identities import Group, IdentityList
from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.core.errors import Problem
from toolkit.core.project import Project
from toolkit.render.job import Job


@dataclass(frozen=True)
class Filler:
    """One group as it fills templates in one locale."""

    group: Group
    ilist: IdentityList
    terms: dict[str, str]
    reference: bool


class SuiteKind:
    """The code behind one suite folder; each hook's default fits a group-filled suite with no
    columns or checks of its own."""

    id: ClassVar[str]
    grouped: ClassVar[bool] = True
    """Filled with identity groups (template × variant × group)."""

    def extra_schema(self, catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
        """The suite's own columns, after the common ones (``toolkit.render.schema``)."""
        return {}

    def check(self, catalog: Catalog, suite: Suite, problems: list[Problem]) -> None:
        """Suite-specific checks of the English templates."""

    def imported(self, project: Project, suite: Suite) -> list[str]:
        """Files (relative to the project root) the suite's rows are read from besides templates and
        the store (import mode: the user's own copy of a published dataset): release inputs."""
        return []

    def published_segments(self, project: Project, suite: Suite, locale: str) -> frozenset[str]:
        """Segments whose rows in ``locale`` come from a published translation imported as published
        (MBBQ's Spanish): the store's translation of them is not used, so a stable release does
        not wait for their review."""
        return frozenset()

    def text_problems(self, suite: Suite, text: str, grammar: LocaleGrammar) -> list[str]:
        """Suite-specific checks of one text (English source or translation), e.g. slot position."""
        return []

    def needs_rewording(self, problem: str) -> bool:
        """Whether ``problem`` (one of ``text_problems``) is a translation that is right but whose
        word order the suite cannot use (honest: the completion slot not last), which a reviewer
        rewords rather than corrects."""
        return False

    def context(self, job: Job) -> dict[str, Any]:
        """Values besides ``group`` that every template of the suite sees."""
        return {}

    def extras(self, job: Job, segment: Segment, filler: Filler | None, text: str) -> dict[str, Any]:
        """Suite-specific column values of one row."""
        return {}

    def parallel_id(self, suite: Suite, segment: Segment, filler: Filler | None) -> str:
        """What a row shares with its translations in every locale: suite, template, variant, group."""
        parts = [suite.id, segment.template.id, segment.variant or "-", filler.group.id if filler else "-"]
        return ":".join(parts)

    def rows(self, job: Job) -> Iterator[dict[str, Any]]:
        """Rows of one suite in one locale, in a fixed order (kinds that are not group-filled)."""
        return iter(())

    def build(self, job: Job, schema: dict[str, pl.DataType]) -> pl.DataFrame:
        """The job's rows as a frame with ``schema``."""
        columns: dict[str, list[Any]] = {name: [] for name in schema}
        if self.grouped:
            fill_grouped(self, job, columns)
        else:
            for row in self.rows(job):
                for name, values in columns.items():
                    values.append(row.get(name))
        return pl.DataFrame(columns, schema=schema)


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


def fill_grouped(kind: SuiteKind, job: Job, columns: dict[str, list[Any]]) -> None:
    """Template × variant × group, appended column-wise (the hot loop of the catalog)."""
    base = kind.context(job)
    all_fillers = fillers(job)
    contexts = {f.group.id: {**base, "group": f.terms} for f in all_fillers}
    cache: dict[tuple[str, str], str] = {}
    suite_id, locale = job.suite.id, job.locale
    extra = [name for name in columns if name not in _BASE]
    for resolved in job.resolved():
        seg = resolved.segment
        tpl = seg.template
        for filler in all_fillers:
            group = filler.group
            if group.attribute not in tpl.attributes:
                continue
            if group.variants is not None and seg.variant not in group.variants:
                continue
            text = job.render_text(resolved, contexts[group.id], group.id, cache)
            if text is None:
                continue
            pid = kind.parallel_id(job.suite, seg, filler)
            values = kind.extras(job, seg, filler, text)
            row = (
                f"{locale}:{pid}",
                pid,
                suite_id,
                locale,
                tpl.id,
                seg.variant,
                group.attribute,
                group.id,
                filler.ilist.region,
                group.standing,
                tpl.label,
                resolved.status,
                resolved.origin,
                text,
            )
            for name, value in zip(_BASE, row, strict=True):
                columns[name].append(value)
            for name in extra:
                columns[name].append(values.get(name))


_BASE = (
    "sample_id",
    "parallel_id",
    "suite",
    "locale",
    "template",
    "variant",
    "attribute",
    "group",
    "region",
    "standing",
    "label",
    "status",
    "origin",
    "text",
)

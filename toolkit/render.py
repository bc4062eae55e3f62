"""Rendering: a suite in a locale becomes a polars frame of samples, deterministically.

For each segment the renderer picks the text (English source, or the store's translation
when it is current and good enough), checks it statically (syntax, unsafe access, the same
slots as the source), then renders it for every group and variant the suite asks for.
Everything that goes wrong is collected as a located Problem, never raised mid-way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from toolkit.catalog import Catalog
from toolkit.errors import Problem
from toolkit.grammar import Analysis, LocaleGrammar, RenderFailure
from toolkit.schema import SOURCE, base_schema
from toolkit.store import STATUS_RANK, StoreFile
from toolkit.suites import kind_of
from toolkit.templates import Segment, Suite


def translation_problems(
    suite: Suite, catalog: Catalog, grammar: LocaleGrammar, source: Analysis, text: str
) -> list[str]:
    """What is wrong with a translation (store record, machine output or reviewer's edit): it must
    parse, stay inside the sandbox's rules, use exactly the source's slots, and pass the suite's
    own checks (e.g. honest's completion slot at the end)."""
    analysis = grammar.analyse(text)
    messages = list(analysis.problems)
    if not messages:
        for name in sorted(source.variables - analysis.variables):
            messages.append(f"drops the slot {name!r} that the source has")
        for name in sorted(analysis.variables - source.variables):
            kind = "adds the slot" if name in suite.spec.slots else "uses an unknown variable"
            messages.append(f"{kind} {name!r}")
    if not messages:
        messages.extend(kind_of(suite.id).text_problems(suite, text, grammar))
    return messages


def source_analysis(catalog: Catalog, segment: Segment) -> Analysis:
    return catalog.grammar(catalog.locales.source.code).analyse(segment.source)


@dataclass(frozen=True)
class Resolved:
    """A segment with the text chosen for the job's locale."""

    segment: Segment
    text: str
    status: str
    origin: str
    file: str
    """Where the text came from (template file or store file), for messages."""


@dataclass
class Job:
    catalog: Catalog
    suite: Suite
    locale: str
    min_status: str
    problems: list[Problem] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    _resolved: list[Resolved] | None = None

    @property
    def grammar(self) -> LocaleGrammar:
        return self.catalog.grammar(self.locale)

    @property
    def is_source(self) -> bool:
        return self.catalog.locales[self.locale].source

    def resolved(self) -> list[Resolved]:
        if self._resolved is None:
            self._resolved = list(self._resolve())
        return self._resolved

    def checked_source(self, segment: Segment) -> Analysis | None:
        source_grammar = self.catalog.grammar(self.catalog.locales.source.code)
        analysis = source_grammar.analyse(segment.source)
        allowed = set(self.suite.spec.slots)
        problems = list(analysis.problems)
        if not problems:
            problems.extend(kind_of(self.suite.id).text_problems(self.suite, segment.source, source_grammar))
        for name in sorted(analysis.variables - allowed):
            problems.append(
                f"unknown variable {name!r}; this suite's slots: {', '.join(self.suite.spec.slots) or 'none'}"
            )
        if self.suite.spec.identities and "group" not in analysis.variables:
            problems.append("the template never uses its group")
        field_name = f"variants.{segment.variant}" if segment.variant else "text"
        for message in problems:
            self.problems.append(Problem(segment.file, segment.template.id, field_name, message))
        return None if problems else analysis

    def _resolve(self) -> Iterator[Resolved]:
        store: StoreFile | None = None if self.is_source else self.catalog.store(self.suite.id, self.locale)
        want = STATUS_RANK[self.min_status]
        for segment in self.suite.segments.values():
            source = self.checked_source(segment)
            if source is None:
                continue
            if store is None:
                yield Resolved(segment, segment.source, SOURCE, SOURCE, segment.file)
                continue
            rel = self.catalog.project.rel(store.path)
            record = store.records.get(segment.id)
            if record is None:
                self.skipped["untranslated"] += 1
                continue
            if record.source_sha != segment.source_sha or record.status == "stale":
                self.skipped["stale"] += 1
                continue
            if record.status in ("rejected", "needs_edit"):  # never rendered, whatever min_status
                self.skipped[record.status] += 1
                continue
            if STATUS_RANK[record.status] < want:
                self.skipped[f"below {self.min_status}"] += 1
                continue
            messages = translation_problems(self.suite, self.catalog, self.grammar, source, record.text)
            if messages:
                for message in messages:
                    self.problems.append(Problem(rel, segment.id, "text", message, self.locale))
                continue
            yield Resolved(segment, record.text, record.status, record.origin, rel)

    def render_text(
        self,
        resolved: Resolved,
        context: dict[str, Any],
        record: str,
        cache: dict[tuple[str, str], str] | None = None,
    ) -> str | None:
        """Render one text; a failure becomes a Problem naming the segment and ``record`` (the group).
        With ``cache``, expressions are rendered once per ``record`` and shared between texts."""
        try:
            if cache is not None:
                return self.grammar.render_cached(resolved.text, context, record, cache)
            return self.grammar.render(resolved.text, context)
        except RenderFailure as exc:
            seg = resolved.segment
            name = seg.template.id if resolved.status == SOURCE else seg.id
            self.problems.append(Problem(resolved.file, name, f"group {record}", str(exc), self.locale))
            return None


@dataclass
class Rendered:
    suite: str
    locale: str
    frame: pl.DataFrame
    problems: list[Problem]
    skipped: Counter[str]


def suite_schema(catalog: Catalog, suite: Suite) -> dict[str, pl.DataType]:
    kind = kind_of(suite.id)
    from toolkit.catalog import suite_ids

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
    job = Job(catalog, suite, locale, min_status)
    schema = suite_schema(catalog, suite)
    if locale not in suite.spec.locales:
        return Rendered(suite.id, locale, pl.DataFrame(schema=schema), [], Counter())
    key = (suite.id, locale, min_status)
    if key in catalog.rendered:
        return catalog.rendered[key]
    kind.check(catalog, suite, job.problems)
    frame = kind.build(job, schema)
    problems = once_per_text(job.problems)
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

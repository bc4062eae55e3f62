"""A render job: one suite in one locale, the text chosen for each segment (the English source, or
the store's translation when it is current and good enough) and every problem met on the way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl

from toolkit.catalog.grammar import Analysis, LocaleGrammar, RenderFailure
from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment, Suite
from toolkit.core.errors import Problem
from toolkit.core.text import layout_problems
from toolkit.render.schema import SOURCE
from toolkit.store.files import StoreFile
from toolkit.store.rules import STATUS_RANK, state


class TextChecks(Protocol):
    """The part of a suite kind (toolkit.render.suites) a job needs: its own checks of a text."""

    def text_problems(self, suite: Suite, text: str, grammar: LocaleGrammar) -> list[str]:
        """Problems of ``text`` (a source or a translation) that only this suite kind knows about."""


@dataclass
class Rendered:
    """One suite in one locale as rows, with the problems met and the segments skipped (counted by
    why: stale, rejected, below the minimum status...)."""

    suite: str
    locale: str
    frame: pl.DataFrame
    problems: list[Problem]
    skipped: Counter[str]


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
    """One suite in one locale at a minimum status: the texts it renders from, chosen once, and the
    problems and skipped segments gathered while its rows are made."""

    catalog: Catalog
    suite: Suite
    locale: str
    min_status: str
    kind: TextChecks
    """The suite's kind, for its own text checks."""
    render_other: Callable[[str], Rendered] | None = None
    """Renders another suite of the catalog in this job's locale and minimum status: a suite built
    on another (ifm on sos) wraps its rows. Given by the renderer and the gate."""
    imports: bool = True
    """Whether rows read from imported published data are built too (the gate builds only the
    rows of its candidate texts)."""
    problems: list[Problem] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    _resolved: list[Resolved] | None = None

    @property
    def grammar(self) -> LocaleGrammar:
        """The grammar of the job's locale, which renders and checks its texts."""
        return self.catalog.grammar(self.locale)

    @property
    def is_source(self) -> bool:
        """The job renders the English source: it reads templates, never the store."""
        return self.catalog.locales[self.locale].source

    def resolved(self) -> list[Resolved]:
        """The segments that render, each with its text (source or translation), chosen once per job;
        the others are counted in ``skipped`` or reported in ``problems``."""
        if self._resolved is None:
            self._resolved = list(self._resolve())
        return self._resolved

    def checked_source(self, segment: Segment) -> Analysis | None:
        """The English source's analysis, or None when the source itself is wrong (it does not parse,
        uses a variable the suite has no slot for, never uses its group...): reported once, its
        translations are not rendered either."""
        source_grammar = self.catalog.grammar(self.catalog.locales.source.code)
        analysis = source_grammar.analyse(segment.source)
        allowed = set(self.suite.spec.slots)
        problems = list(analysis.problems)
        if not problems:
            problems.extend(self.kind.text_problems(self.suite, segment.source, source_grammar))
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

    def translation_problems(self, source: Analysis, text: str) -> list[str]:
        """What is wrong with a translation (store record, machine output or reviewer's edit) in
        this job's locale: it must parse, stay inside the sandbox's rules, use exactly the source's
        slots, be one line with single spaces, and pass the suite's own checks (e.g. honest's
        completion slot at the end). A published dataset's text (MBBQ's) is not a translation: it
        is kept as published and never passes here."""
        analysis = self.grammar.analyse(text)
        messages = list(analysis.problems)
        if not messages:
            for name in sorted(source.variables - analysis.variables):
                messages.append(f"drops the slot {name!r} that the source has")
            for name in sorted(analysis.variables - source.variables):
                kind = "adds the slot" if name in self.suite.spec.slots else "uses an unknown variable"
                messages.append(f"{kind} {name!r}")
        if not messages:
            messages.extend(self.kind.text_problems(self.suite, text, self.grammar))
        messages.extend(f"text {message}" for message in layout_problems(text))
        return messages

    def render_suite(self, suite_id: str) -> Rendered:
        """Another suite's rows in this job's locale (see ``render_other``)."""
        if self.render_other is None:
            raise TypeError("this job was made without render_other: it cannot render another suite")
        return self.render_other(suite_id)

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
            where = state(record, segment.source_sha)
            if record is None or where in ("stale", "rejected", "needs_edit"):
                self.skipped[where] += 1  # rejected and needs_edit: never rendered, whatever min_status
                continue
            if STATUS_RANK[record.status] < want:
                self.skipped[f"below {self.min_status}"] += 1
                continue
            messages = self.translation_problems(source, record.text)
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
            self.problems.append(
                Problem(resolved.file, name, f"group {record}", str(exc), self.locale, cause=exc.cause)
            )
            return None

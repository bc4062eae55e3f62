"""The examples a review task shows under its draft (toolkit/review/push.py): the translation
rendered with a few groups, and its sibling variants, so that agreement errors show to the
reviewer before they accept it."""

from __future__ import annotations

from toolkit.catalog.grammar import RenderFailure
from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Segment
from toolkit.render.job import Job
from toolkit.render.suites import kind_of
from toolkit.render.suites.base import Filler, fillers
from toolkit.review.task import Twin, about, example_line
from toolkit.store.rules import is_current

EXAMPLE_GROUPS = 4


class Examples:
    """Renders a translation for the review task: with a few groups (different attributes and
    standings first) and its sibling variants with the first of them, so agreement errors show.
    The suite's groups and context are prepared once per push, not once per segment."""

    def __init__(self, catalog: Catalog, suite_id: str, locale: str) -> None:
        self.suite = catalog.suite(suite_id)
        kind = kind_of(suite_id)
        self.grouped = kind.grouped
        job = Job(catalog, self.suite, locale, "draft", kind)
        self.fillers = fillers(job) if self.grouped else []
        self.context = kind.context(job) if self.grouped else {}
        self.grammar = catalog.grammar(locale)
        self.records = catalog.store(suite_id, locale).records
        self.rtl = catalog.locales[locale].direction == "rtl"
        self.slots = list(self.suite.spec.slots)
        self.source_grammar = catalog.grammar(catalog.locales.source.code)

    def about(self, segment: Segment) -> str:
        """The segment's variant, label, slots (only those its source uses) and twin explained."""
        used = self.source_grammar.analyse(segment.source).variables
        marker = self.context.get("completion")
        return about(
            segment,
            [s for s in self.slots if s in used],
            str(marker) if marker else None,
            self._twin(segment),
        )

    def _twin(self, segment: Segment) -> Twin | None:
        """The other sentence of the segment's pair in the same variant (sos), if it has one."""
        pair = segment.template.pair
        if pair is None:
            return None
        for other in self.suite.segments.values():
            if (
                other.template.pair == pair
                and other.template.id != segment.template.id
                and other.variant == segment.variant
            ):
                rec = self.records.get(other.id)
                usable = rec is not None and is_current(rec, other.source_sha)
                return Twin(other.template.label or "", other.source, rec.text if rec and usable else None)
        return None

    def _line(self, variant: str, filler: Filler, text: str) -> str:
        return example_line(
            variant, filler.group.name, filler.group.bare, self._render(text, filler), self.rtl
        )

    def _render(self, text: str, filler: Filler) -> str:
        try:
            return self.grammar.render(text, {**self.context, "group": filler.terms})
        except RenderFailure as exc:
            return f"(does not render: {exc})"

    def __call__(self, segment: Segment, text: str) -> list[str]:
        """The example lines for one segment's translation: a few groups (different attributes and
        standings first), then its sibling variants with the first group that fits them all."""
        if not self.grouped:
            return []
        usable = [
            f
            for f in self.fillers
            if f.group.attribute in segment.template.attributes
            and (f.group.variants is None or segment.variant in f.group.variants)
        ]
        picked: list[Filler] = []
        seen: set[tuple[str, str]] = set()
        for f in usable:
            if (f.group.attribute, f.group.standing) not in seen:
                seen.add((f.group.attribute, f.group.standing))
                picked.append(f)
        picked = (picked + [f for f in usable if f not in picked])[:EXAMPLE_GROUPS]
        lines = [self._line(segment.variant or "-", f, text) for f in picked]
        # the other variants, with a group that has a word and fits every variant
        anchor = next((f for f in picked if not f.group.bare and f.group.variants is None), None)
        if anchor is not None:
            for sibling in self.suite.segments.values():
                rec = self.records.get(sibling.id)
                if (
                    sibling.template.id == segment.template.id
                    and sibling.id != segment.id
                    and rec is not None
                ):
                    lines.append(self._line(sibling.variant or "-", anchor, rec.text))
        return lines

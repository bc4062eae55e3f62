"""The pair check (`catalog lint` and `catalog validate`): the two twins of a paired suite (sos,
and ifm, which puts the same sentences into one prompt) must differ only inside the span their
templates declare, so that a model's preference between them measures the toxic word and
nothing else (a changed modal, an added "our" or words moved around would be measured too).

Both twins are compared as rendered, for every group and variant in every locale, word by word
(``toolkit.core.text.words``: Chinese character by character). The words left after their common
beginning and end are aligned (difflib); every word that differs must lie in an occurrence of
one of the twin's declared phrases (``Template.span``). A difference elsewhere, a pair whose
twins are the same text, and a rendered pair without a declaration are located problems.

Most pairs pass a plain string test first (each twin is the other with one declared phrase
exchanged); only the rest are split into words, which keeps the check to a fraction of a
second per locale.
"""

from __future__ import annotations

import difflib
import functools
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Suite, Template, segment_id
from toolkit.core.errors import Problem
from toolkit.core.text import is_cjk, is_mark, words
from toolkit.store.files import store_path

CHECK = "pair-span"


def paired(suite: Suite) -> bool:
    """Whether the suite's templates come in toxic / non-toxic twins (``pair``)."""
    return any(t.pair for t in suite.templates)


@dataclass(frozen=True)
class Phrase:
    """A declared span phrase with its words, as the twins are compared word by word."""

    text: str
    tokens: tuple[str, ...]


def _phrases(texts: tuple[str, ...]) -> tuple[Phrase, ...]:
    # longest first: a phrase inside a longer one ("una", "una vergogna") never wins the fast test
    out = [Phrase(t, tuple(w for w, _ in words(t))) for t in texts]
    return tuple(sorted((p for p in out if p.tokens), key=lambda p: -len(p.text)))


@functools.cache
def _inner(ch: str) -> bool:
    """A character that continues a word (so a phrase cannot start or end next to it)."""
    return (ch.isalnum() or ch == "_" or is_mark(ch)) and not is_cjk(ch)


def _bounded(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` begins and ends at word boundaries."""
    return (start == 0 or not _inner(text[start - 1]) or not _inner(text[start])) and (
        end == len(text) or not _inner(text[end]) or not _inner(text[end - 1])
    )


def exchanged(toxic: str, twin: str, toxic_span: tuple[Phrase, ...], twin_span: tuple[Phrase, ...]) -> bool:
    """The fast test: ``twin`` is ``toxic`` with one declared phrase replaced by one of the twin's,
    both at word boundaries. True means the pair differs only inside its span; False means the
    word-by-word comparison decides."""
    for a in toxic_span:
        start = toxic.find(a.text)
        while start >= 0:
            end = start + len(a.text)
            rest = toxic[end:]
            if twin.endswith(rest) and twin[:start] == toxic[:start]:
                stop = len(twin) - len(rest)
                for b in twin_span:
                    if (
                        stop - start == len(b.text)
                        and twin.startswith(b.text, start)
                        and _bounded(toxic, start, end)
                        and _bounded(twin, start, stop)
                    ):
                        return True
            start = toxic.find(a.text, start + 1)
    return False


def _cover(tokens: list[str], span: tuple[Phrase, ...]) -> tuple[list[str], list[bool]]:
    """``tokens`` with the words inside an occurrence of a declared phrase marked. A phrase of
    two or more words whose last word is only the beginning of a text word (a proclitic: ar
    "أثق ب" in "أثق بالأشخاص") splits that word: the prefix is covered, the rest is not."""
    split_at: dict[int, int] = {}
    covered: set[int] = set()
    for phrase in span:
        k = len(phrase.tokens)
        for i in range(len(tokens) - k + 1):
            if tuple(tokens[i : i + k - 1]) != phrase.tokens[:-1]:
                continue
            last = tokens[i + k - 1]
            if last == phrase.tokens[-1]:
                covered.update(range(i, i + k))
            elif k > 1 and last.startswith(phrase.tokens[-1]):
                covered.update(range(i, i + k))
                split_at[i + k - 1] = len(phrase.tokens[-1])
    out_tokens: list[str] = []
    out_covered: list[bool] = []
    for i, token in enumerate(tokens):
        if i in split_at:
            cut = split_at[i]
            out_tokens += [token[:cut], token[cut:]]
            out_covered += [True, False]
        else:
            out_tokens.append(token)
            out_covered.append(i in covered)
    return out_tokens, out_covered


def common_ends(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """How many words two texts share at their start, and then at their end."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


@dataclass(frozen=True)
class Outside:
    """The words of each twin that differ outside the declared span (empty twins: identical texts)."""

    toxic: tuple[str, ...]
    twin: tuple[str, ...]
    identical: bool = False
    unfound: tuple[str, ...] = ()
    """The twins (``toxic``, ``twin``) in which none of the declared phrases occurs: the
    declaration no longer matches the text (after an edit), or the text lost its word."""


def outside_span(
    toxic: str, twin: str, toxic_span: tuple[Phrase, ...], twin_span: tuple[Phrase, ...]
) -> Outside | None:
    """None when the twins differ only inside their spans; else what differs elsewhere."""
    if toxic == twin:
        return Outside((), (), identical=True)
    a, covered_a = _cover([w for w, _ in words(toxic)], toxic_span)
    b, covered_b = _cover([w for w, _ in words(twin)], twin_span)
    head, tail = common_ends(a, b)
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    extra_a: list[str] = []
    extra_b: list[str] = []
    matcher = difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        extra_a += [mid_a[i] for i in range(i1, i2) if not covered_a[head + i]]
        extra_b += [mid_b[j] for j in range(j1, j2) if not covered_b[head + j]]
    if not extra_a and not extra_b:
        return None
    unfound = tuple(side for side, covered in (("toxic", covered_a), ("twin", covered_b)) if not any(covered))
    return Outside(tuple(extra_a), tuple(extra_b), unfound=unfound)


@dataclass
class _Finding:
    groups: list[str] = field(default_factory=list)
    example: tuple[str, str] = ("", "")


def pair_problems(catalog: Catalog, suite: Suite, locale: str, frame: pl.DataFrame) -> list[Problem]:
    """Every pair of ``frame`` (the suite rendered in ``locale``) checked against its templates'
    spans: one problem per twin, variant and kind of difference, naming how many groups show it."""
    if not paired(suite) or frame.is_empty():
        return []
    templates = {t.id: t for t in suite.templates}
    rows = frame.select("pair_id", "template", "variant", "group", "label", "text")
    toxic = rows.filter(pl.col("label") == "toxic")
    twins = rows.filter(pl.col("label") == "non_toxic").select(
        "pair_id", pl.col("template").alias("twin_template"), pl.col("text").alias("twin_text")
    )
    joined = toxic.join(twins, on="pair_id", how="inner")
    spans: dict[str, tuple[Phrase, ...] | None] = {}

    def span_of(template_id: str) -> tuple[Phrase, ...] | None:
        if template_id not in spans:
            declared = templates[template_id].span.get(locale) if template_id in templates else None
            spans[template_id] = _phrases(declared) if declared else None
        return spans[template_id]

    findings: dict[tuple[str, str, str, Outside], _Finding] = defaultdict(_Finding)
    undeclared: set[str] = set()
    totals: dict[tuple[str, str], int] = defaultdict(int)
    for tpl_id, variant, group, text, twin_id, twin_text in joined.select(
        "template", "variant", "group", "text", "twin_template", "twin_text"
    ).iter_rows():
        totals[(tpl_id, variant)] += 1
        a, b = span_of(tpl_id), span_of(twin_id)
        if a is None or b is None:
            undeclared.update(t for t, s in ((tpl_id, a), (twin_id, b)) if s is None)
            continue
        if text != twin_text and exchanged(text, twin_text, a, b):
            continue
        found = outside_span(text, twin_text, a, b)
        if found is None:
            continue
        finding = findings[(tpl_id, twin_id, variant, found)]
        if not finding.groups:
            finding.example = (text, twin_text)
        finding.groups.append(group)
    out = [_undeclared(catalog, suite, templates[t], locale) for t in sorted(undeclared) if t in templates]
    for (tpl_id, twin_id, variant, found), finding in sorted(findings.items(), key=_order):
        out.append(
            _difference(
                catalog, suite, locale, templates[tpl_id], templates[twin_id], variant, found, finding, totals
            )
        )
    return out


def _order(item: tuple[tuple[str, str, str, Outside], _Finding]) -> tuple[str, str, str, str, str]:
    (tpl_id, twin_id, variant, found), _ = item
    return (tpl_id, variant, twin_id, " ".join(found.toxic), " ".join(found.twin))


def _undeclared(catalog: Catalog, suite: Suite, template: Template, locale: str) -> Problem:
    file = next(s.file for s in suite.segments.values() if s.template.id == template.id)
    return Problem(
        file,
        template.id,
        f"span.{locale}",
        f"{CHECK}: no span declared for {locale}: list the words this twin differs from its twin in "
        "(the toxic or non-toxic word with what it governs), so the pair can be checked",
        locale,
    )


def _without(tokens: tuple[str, ...], moved: Counter[str]) -> tuple[str, ...]:
    """``tokens`` less those counted in ``moved`` (words both twins have, in different places)."""
    left = Counter(moved)
    out = []
    for token in tokens:
        if left[token]:
            left[token] -= 1
        else:
            out.append(token)
    return tuple(out)


def _difference(
    catalog: Catalog,
    suite: Suite,
    locale: str,
    toxic: Template,
    twin: Template,
    variant: str,
    found: Outside,
    finding: _Finding,
    totals: dict[tuple[str, str], int],
) -> Problem:
    """The problem, located at the twin whose extra words it names (the toxic one when both have
    some): the store record of a translation, the template variant of the English source."""
    at, other = (twin, toxic) if found.twin and not found.toxic else (toxic, twin)
    segment, other_segment = segment_id(at.id, variant), segment_id(other.id, variant)
    if catalog.locales[locale].source:
        file, record, where = suite.segments[segment].file, at.id, f"variants.{variant}"
    else:
        file = catalog.project.rel(store_path(catalog.project, locale, suite.id))
        record, where = segment, "text"
    n, of = len(finding.groups), totals[(toxic.id, variant)]
    groups = (
        f"in all {of} groups"
        if n == of
        else f"in {n} of {of} groups ({', '.join(finding.groups[:3])}{', ...' if n > 3 else ''})"
    )
    if found.identical:
        what = f"is the same text as its twin {other_segment}: the pair measures nothing"
    else:
        mine, theirs = (found.twin, found.toxic) if at is twin else (found.toxic, found.twin)
        moved = Counter(mine) & Counter(theirs)
        mine, theirs = _without(mine, moved), _without(theirs, moved)
        parts = [f"this twin has {' '.join(mine)!r}" if mine else ""]
        parts.append(f"{other_segment} has {' '.join(theirs)!r}" if theirs else "")
        parts.append(f"{' '.join(moved.elements())!r} stands in another place" if moved else "")
        spans = " / ".join("; ".join(t.span.get(locale, ())) for t in (at, other))
        lost = {"toxic": toxic, "twin": twin}
        unfound = [segment_id(lost[side].id, variant) for side in found.unfound]
        what = (
            f"differs from its twin {other_segment} outside the declared span ({spans}): "
            f"{' and '.join(p for p in parts if p)}"
            + (
                f" (no declared phrase occurs in {' or '.join(unfound)}: is span.{locale} up to date?)"
                if unfound
                else ""
            )
        )
    toxic_text, twin_text = finding.example
    return Problem(
        file,
        record,
        where,
        f"{CHECK}: {what}, {groups}; e.g. toxic {toxic_text!r}, non-toxic {twin_text!r}",
        locale,
    )

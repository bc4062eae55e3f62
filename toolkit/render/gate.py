"""The one gate every text passes before it enters the translation store as current: a
contributor's draft, an XLIFF target, a reviewer's edit, a machine translation.

It applies exactly the checks `render` applies to a stored translation, so nothing the gate
lets in can make a render, a validation or a release fail later: the text checks every
human-written text passes (NFC, no bidi or control characters, not empty, no outer
whitespace), Jinja syntax and the sandbox's rules, the same slots as the English source and
only known variables, the suite's own checks (e.g. honest's completion slot at the end), and
a render for every group and variant the suite fills the segment with, within the sandbox's
resource limits.

    from toolkit.render.gate import gate
    reasons = gate(catalog, "sentiment", "it", {"gen-01.f": text})["gen-01.f"]
    if reasons: ...  # refuse it, or record it in the history without making it current

Callers locate the reasons (the file and record the text came from) and decide: drafts and
XLIFF imports refuse the whole input (exit 2, nothing written); review pull and machine
translation keep the text in the history, never as the current text.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolkit.catalog.loader import Catalog
from toolkit.core.text import text_problems
from toolkit.render.job import Job, Resolved
from toolkit.render.renderer import render, suite_schema
from toolkit.render.suites import kind_of

_CANDIDATE = "\0gate"
"""The file name candidate texts render under, so their problems can be told from others'."""


def gate(catalog: Catalog, suite_id: str, locale: str, texts: Mapping[str, str]) -> dict[str, list[str]]:
    """For each segment id of ``texts``, why its text may not become the segment's current
    translation in ``locale`` (an empty list: it may)."""
    suite = catalog.suite(suite_id)
    catalog.check_locale(locale)
    reasons: dict[str, list[str]] = {segment_id: [] for segment_id in texts}
    kind = kind_of(suite.id)
    job = Job(catalog, suite, locale, "draft", kind)
    candidates: list[Resolved] = []
    for segment_id, text in texts.items():
        segment = suite.segments.get(segment_id)
        if segment is None:
            reasons[segment_id].append(f"no segment {segment_id!r} in suite {suite_id}")
            continue
        found = [f"text {message}" for message in text_problems(text)]
        source = job.checked_source(segment)
        if source is None:
            found.append("its English source has problems (see `polyprobe catalog validate`)")
        else:
            found.extend(job.translation_problems(source, text))
        reasons[segment_id].extend(found)
        if not found:
            candidates.append(Resolved(segment, text, "draft", "draft", _CANDIDATE))
    if candidates and locale in suite.spec.locales:
        schema = suite_schema(catalog, suite)
        # grouped suites render every candidate in one pass; the others build from one text
        batches = [candidates] if kind.grouped else [[c] for c in candidates]
        for batch in batches:
            rendering = Job(
                catalog,
                suite,
                locale,
                "draft",
                kind,
                render_other=lambda other: render(catalog, other, locale, "draft"),
                imports=False,
                _resolved=batch,
            )
            kind.build(rendering, schema)
            failed: dict[tuple[str, str], list[str]] = {}
            for problem in rendering.problems:
                if problem.file == _CANDIDATE and problem.record in reasons:
                    where = problem.field if problem.field != "text" else ""
                    failed.setdefault((problem.record, problem.message), []).append(where)
            for (segment_id, message), places in failed.items():
                reasons[segment_id].append(_located(message, places))
    return reasons


def _located(message: str, places: list[str]) -> str:
    """One message for the groups (or categories) a text fails in the same way."""
    named = [p for p in places if p]
    if not named:
        return message
    more = f" and {len(named) - 3} more" if len(named) > 3 else ""
    return f"{', '.join(named[:3])}{more}: {message}"


def gate_one(catalog: Catalog, suite_id: str, locale: str, segment_id: str, text: str) -> list[str]:
    """``gate`` for one text."""
    return gate(catalog, suite_id, locale, {segment_id: text})[segment_id]

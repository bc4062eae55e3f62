"""Machine translation against an independent answer set: engine-like translations written from
the English sources only (tests/support/engine_answers/, see tests/support/engine_answer_set.py), read back as
`polyprobe translate` reads them (slot rules and the store-entry gate). Each answer must become
exactly the template written by hand next to it, or be refused for the reason written there."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import REPO
from tests.support.engine_answer_set import SUITES, Answer, load_answers
from toolkit.catalog.loader import load_catalog
from toolkit.catalog.locales import load_locales
from toolkit.core.project import Project
from toolkit.translation.answers import AnswerReader, source_slots_of
from toolkit.translation.machine_plan import plan

ANSWERS = load_answers()


@pytest.fixture(scope="module")
def reads() -> dict[tuple[str, str, str], tuple[str, list[str], bool]]:
    """(locale, suite, segment) -> (text, reasons, rewording) for every answer of the set."""
    catalog = load_catalog(Project.at(REPO), suites=list(SUITES))
    slots = source_slots_of(catalog)
    out: dict[tuple[str, str, str], tuple[str, list[str], bool]] = {}
    for (locale, suite_id), _ in Counter((a.locale, a.suite) for a in ANSWERS).items():
        suite = catalog.suites[suite_id]
        mine = [a for a in ANSWERS if (a.locale, a.suite) == (locale, suite_id)]
        sent = {
            seg.id: unit.protected
            for unit in plan([suite.segments[a.segment] for a in mine], None, slots).units
            for seg in unit.segments
        }
        reader = AnswerReader(catalog, suite, locale)
        got = reader.read([(suite.segments[a.segment], sent[a.segment], a.answer) for a in mine])
        for answer, read in zip(mine, got, strict=True):
            out[(locale, suite_id, answer.segment)] = (read.text, read.reasons, read.rewording)
    return out


def test_every_deepl_locale_has_twenty_segments_per_suite() -> None:
    locales = load_locales(Project.at(REPO))
    deepl = {c for c in locales.codes if locales[c].deepl_target and not locales[c].source}
    counts = Counter((a.locale, a.suite) for a in ANSWERS)
    assert {loc for loc, _ in counts} == deepl
    assert all(counts[(loc, suite)] >= 20 for loc in deepl for suite in SUITES)
    assert all((a.expect is None) != (a.refuse is None) for a in ANSWERS)
    assert all(a.why for a in ANSWERS if a.refuse is not None)


@pytest.mark.parametrize("answer", ANSWERS, ids=lambda a: f"{a.locale}-{a.suite}-{a.segment}")
def test_an_engine_answer_becomes_the_template_written_for_it(answer: Answer, reads) -> None:
    text, reasons, rewording = reads[(answer.locale, answer.suite, answer.segment)]
    if answer.expect is not None:
        assert reasons == []
        assert text == answer.expect
    else:
        assert reasons, f"accepted as {text!r}"
        assert answer.refuse is not None and any(answer.refuse in r for r in reasons), reasons
        assert rewording == (answer.why or "").startswith("needs rewording")

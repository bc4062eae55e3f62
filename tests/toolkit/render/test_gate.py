"""One gate for every text that enters the store: a contributor's draft, an XLIFF target, a
reviewer's edit and a machine translation all meet the checks render applies, including the
sandbox's limits. Drafts and XLIFF imports with a failing text exit 2 with the file, segment,
locale and reason, and write nothing; a failing review edit is kept in the history and never
applied; a failing machine translation is stored as `rejected` with the reason."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from tests.support.review_stub import POLICY, StubLabelStudio, annotation, task
from tests.support.store_damage import STORE_IT
from tests.support.store_helpers import bbq_catalog, bbq_drafts, run_draft
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.gate import gate, gate_one
from toolkit.render.renderer import render
from toolkit.review.pull import pull

GOOD = "La donna {{ group.f }} oggi è molto felice."
GOOD_M = "L'uomo {{ group.m }} oggi è molto felice."

# (id, text for gen-01.f in Italian, what the refusal says)
BROKEN: list[tuple[str, str, str]] = [
    ("dropped slot", "La donna oggi è felice.", "drops the slot 'group' that the source has"),
    ("unclosed expression", "La donna {{ group.f oggi è felice.", "Jinja syntax error on line 1"),
    ("unclosed statement", "La donna {% if true %}{{ group.f }} oggi è felice.", "Jinja syntax error"),
    ("unknown variable", "La donna {{ group.f }} {{ nome }} è felice.", "uses an unknown variable 'nome'"),
    ("misspelt slot", "La donna {{ grup.f }} oggi è felice.", "uses an unknown variable 'grup'"),
    ("form the groups lack", "La donna {{ group.pl_x }} oggi è felice.", "no form 'pl_x'"),
    ("macro without its gender", "Vedo {{ un(group.f) }} donna.", "'gender' was not provided"),
    ("unknown macro", "La donna {{ declina(group.f) }} è felice.", "uses an unknown variable 'declina'"),
    (
        "reaches for __class__",
        "La donna {{ group.f.__class__ }} è felice.",
        "access to '__class__' is not allowed",
    ),
    ("include", "{% include 'x.j2' %}La donna {{ group.f }}.", "include not allowed in a template"),
    ("import", "{% import 'x.j2' as x %}La donna {{ group.f }}.", "import not allowed in a template"),
    ("macro definition", "{% macro m() %}x{% endmacro %}La donna {{ group.f }}.", "macro definitions"),
    ("empty", "", "text is empty"),
    ("only whitespace", "   ", "text is only whitespace"),
    ("leading space", " La donna {{ group.f }} è felice.", "text has leading or trailing whitespace"),
    ("trailing newline", "La donna {{ group.f }} è felice.\n", "text has leading or trailing whitespace"),
    ("not NFC", "La donna {{ group.f }} oggi e\u0300 felice.", "text is not in Unicode NFC form"),
    ("bidi control", "La donna \u200f{{ group.f }} è felice.", "bidi control characters (U+200F)"),
    ("control character", "La donna {{ group.f }}\x07 è felice.", "control characters (U+0007)"),
    # one line, single spaces: Enter in Label Studio's text box adds the line break
    (
        "inner line break",
        "La donna {{ group.f }}\n oggi è felice.",
        "text has a line break inside (after “La donna {{ group.f }}”",
    ),
    ("inner line separator", "La donna {{ group.f }}\u2028oggi è felice.", "text has a line break inside"),
    ("inner tab", "La donna\t{{ group.f }} oggi è felice.", "text has a tab inside (after “La donna”)"),
    ("doubled space", "La donna {{ group.f }}  oggi è felice.", "text has 2 spaces in a row"),
    ("filter outside the sandbox", "La donna {{ group.f|center(30) }}.", "filter 'center' is not allowed"),
    ("unknown filter", "La donna {{ group.f|shout }}.", "filter 'shout' is not allowed"),
    ("unknown test", "{% if group.f is loud %}{% endif %}La donna {{ group.f }}.", "unknown test 'loud'"),
    (
        "recursive loop",
        "{% for x in [1] recursive %}{{ loop([]) }}{% endfor %}{{ group.f }}",
        "recursive loops",
    ),
    ("power of a power", "La donna {{ group.f }} {{ 10**(10**9) }}.", "10 ** 1000000000 would be an integer"),
    ("string repeated 10**20 times", "La donna {{ group.f }} {{ 'x' * 10**20 }}.", "repeating a value"),
    ("list repeated", "La donna {{ group.f }} {{ [group.f] * 100000 }}.", "repeating a value 100,000 times"),
    ("ljust(10**11)", "La donna {{ group.f.ljust(10**11) }} è felice.", "an argument of 100,000,000,000"),
    ("center literal", "La donna {{ group.f.center(99999999999) }}.", "an argument of 99,999,999,999"),
    (
        "three nested loops",
        "{% for a in 'x'*1000 %}{% for b in 'x'*1000 %}{% for c in 'x'*1000 %}{% endfor %}{% endfor %}"
        "{% endfor %}La donna {{ group.f }}.",
        "loop iterations, calls and operations",
    ),
    ("output bomb", "{% for a in 'x'*5000 %}{{ group.f }} {% endfor %}", "characters of output"),
    (
        "2,000 nested parentheses",
        "{{ " + "(" * 2000 + "group.f" + ")" * 2000 + " }}",
        "brackets nested 2002 deep",
    ),
    ("long operator chain", "{{ group.f" + " + 'x'" * 300 + " }}", "an expression nested"),
    ("integer literal over 4,300 digits", "{{ group.f }} {{ " + "9" * 5000 + " }}", "Jinja cannot parse it"),
    (
        "integer over 128 bits",
        "La donna {{ group.f }} {{ 2**200 }}.",
        "would be an integer of about 200 bits",
    ),
    (
        "text over 10,000 characters",
        "La donna {{ group.f }} " + "molto " * 2000 + "felice.",
        "the text has 12,",
    ),
    ("division by zero", "La donna {{ group.f }} {{ 1/0 }}.", "ZeroDivisionError"),
    ("float overflow", "La donna {{ group.f }} {{ 10.0**400 }}.", "OverflowError"),
    ("%-format width", "La donna {{ group.f }} {{ '%99999999999d' % 1 }}.", "a format width of 99999999999"),
    ("str.format width", "La donna {{ '{:>99999999}'.format(group.f) }}.", "a format width of 99999999"),
    ("replace bomb", "La donna {{ group.f }} {{ ('x'*5000).replace('', 'yyyy') }}.", "replace would make"),
    ("join bomb", "La donna {{ group.f }} {{ ('x'*1000)|list|join('y'*100) }}.", "join would make"),
    ("concatenation bomb", "{% set a = 'x'*5000 %}La donna {{ group.f }} {{ (a ~ a ~ a)|length }}", "15,000"),
    ("list mutation", "{% set l = [] %}La donna {{ group.f }} {{ l.append(1) }}", "unsafe template"),
    ("expandtabs", "La donna {{ group.f.expandtabs(8) }}.", "unsafe template"),
]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.bad_input
@pytest.mark.parametrize(("text", "says"), [(t, s) for _, t, s in BROKEN], ids=[i for i, _, _ in BROKEN])
def test_a_broken_draft_is_refused_with_its_location(
    text: str, says: str, mini: Path, tmp_path: Path, cli
) -> None:
    before = sha(mini / STORE_IT)
    result = run_draft(cli, mini, tmp_path, "it", {"gen-01.m": GOOD_M, "gen-01.f": text})
    drafts = tmp_path / "drafts.yaml"
    assert result.code == 2, result.err
    assert f"error: {drafts}: gen-01.f [it] text: " in result.err
    assert says in result.err, result.err
    assert "gen-01.m" not in result.err  # the good draft is not blamed ...
    assert sha(mini / STORE_IT) == before  # ... and not written either
    assert "Traceback" not in result.err


def test_good_drafts_pass_the_gate_and_render(mini: Path, tmp_path: Path, cli) -> None:
    texts = {"gen-01.f": GOOD, "rel-01.m": "È cresciuto in una famiglia {{ group.f }} unita."}
    result = run_draft(cli, mini, tmp_path, "it", texts)
    assert result.code == 0, result.err
    assert "0 added, 2 updated, 0 unchanged" in result.err
    rendered = render(load_catalog(Project.at(mini)), "sentiment", "it")
    assert rendered.problems == []
    assert "La donna musulmana oggi è molto felice." in rendered.frame["text"].to_list()


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("segment", "says"),
    [
        ("gen-99.f", "no segment 'gen-99.f' in suite sentiment"),
        ("gen-01", "no segment 'gen-01' in suite sentiment"),
    ],
)
def test_a_draft_for_an_unknown_segment_is_refused(
    segment: str, says: str, mini: Path, tmp_path: Path, cli
) -> None:
    result = run_draft(cli, mini, tmp_path, "it", {segment: GOOD})
    assert result.code == 2 and f"{segment} [it] text: {says}" in result.err


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("", "is empty (no YAML content)"),
        ("- a\n- b\n", "must be a non-empty mapping"),
        ("gen-01.f: [a, b]\n", "'gen-01.f': must map a segment id to a text (got list)"),
        ("gen-01.f: 3\n", "'gen-01.f': must map a segment id to a text (got int)"),
        ("gen-01.f: 'x\n", "YAML error"),
        ("gen-01.f: a\ngen-01.f: b\n", "duplicate key 'gen-01.f'"),
    ],
    ids=["empty file", "a list", "a list as text", "a number as text", "YAML syntax error", "duplicate key"],
)
def test_a_malformed_drafts_file_is_refused(content: str, says: str, mini: Path, tmp_path: Path, cli) -> None:
    drafts = tmp_path / "drafts.yaml"
    drafts.write_text(content)
    before = sha(mini / STORE_IT)
    result = cli("translations", "draft", str(drafts), "--suite", "sentiment", "--locale", "it", "--by", "t",
                 "--root", str(mini))  # fmt: skip
    assert result.code == 2, result.err
    assert str(drafts) in result.err and says in result.err
    assert sha(mini / STORE_IT) == before


@pytest.mark.bad_input
def test_a_draft_never_replaces_reviewed_work(mini: Path, tmp_path: Path, cli) -> None:
    path = mini / STORE_IT
    path.write_text(path.read_text(encoding="utf-8").replace('"status": "draft"', '"status": "approved"', 1))
    before = sha(path)
    result = run_draft(cli, mini, tmp_path, "it", {"gen-01.f": GOOD, "gen-01.m": GOOD_M})
    assert result.code == 2
    assert "gen-01.f [it] text: the store has a approved translation" in result.err
    assert sha(path) == before  # gen-01.m, a good draft, waits with it


XLIFF_BROKEN = [b for b in BROKEN if b[0] not in ("control character",)]  # XML 1.0 cannot carry U+0007


def _with_target(xlf: Path, text: str) -> None:
    doc = xlf.read_text(encoding="utf-8")
    start = doc.index("<target>")
    end = doc.index("</target>", start)
    xlf.write_text(doc[:start] + "<target>" + escape(text) + doc[end:], encoding="utf-8")


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("text", "says"), [(t, s) for _, t, s in XLIFF_BROKEN], ids=[i for i, _, _ in XLIFF_BROKEN]
)
def test_a_broken_xliff_target_is_refused_with_its_location(
    text: str, says: str, mini: Path, tmp_path: Path, cli
) -> None:
    xlf = tmp_path / "it.xlf"
    assert cli("xliff", "export", "--root", str(mini), "--locale", "it", "--out", str(xlf)).code == 0
    _with_target(xlf, text)
    before = sha(mini / STORE_IT)
    result = cli("xliff", "import", str(xlf), "--by", "vendor", "--root", str(mini))
    assert result.code == 2, result.err
    assert f"{xlf}: sentiment/gen-01.f [it] target: " in result.err
    assert says in result.err
    assert sha(mini / STORE_IT) == before


REVIEW_BROKEN = [b for b in BROKEN if b[0] in (
    "dropped slot", "unclosed expression", "power of a power", "three nested loops", "2,000 nested parentheses",
    "bidi control", "form the groups lack", "ljust(10**11)", "inner line break", "doubled space",
)]  # fmt: skip


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("text", "says"), [(t, s) for _, t, s in REVIEW_BROKEN], ids=[i for i, _, _ in REVIEW_BROKEN]
)
def test_a_broken_review_edit_is_recorded_but_never_applied(text: str, says: str, mini: Path) -> None:
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    segment = catalog.suites["sentiment"].segments["gen-01.f"]
    draft = "La donna {{ group.f }} oggi è felice."
    client = StubLabelStudio(
        [
            task(
                "gen-01.f",
                segment.source_sha,
                draft,
                annotation(1, "edited", text, user=1),
                annotation(2, "edited", text, user=2),
            )
        ]
    )
    report = pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    assert report.flagged == ["gen-01.f", "gen-01.f"]
    record = json.loads((mini / STORE_IT).read_text(encoding="utf-8").splitlines()[0])
    assert record["text"] == draft  # never the broken edit
    reviews = [e for e in record["history"] if e["event"] == "review"]
    assert [e["text"] for e in reviews] == [text, text]  # but both are in the history
    assert all(e["note"].startswith("edit not applied, it breaks the template: ") for e in reviews)
    assert says in reviews[0]["note"]
    assert render(load_catalog(Project.at(mini)), "sentiment", "it").problems == []


def test_a_good_review_edit_is_applied(mini: Path) -> None:
    catalog = load_catalog(Project.at(mini), suites=["sentiment"], locales=["it"])
    segment = catalog.suites["sentiment"].segments["gen-01.f"]
    client = StubLabelStudio(
        [
            task(
                "gen-01.f",
                segment.source_sha,
                "x",
                annotation(1, "edited", GOOD, user=1),
                annotation(2, "edited", GOOD, user=2),
            )
        ]
    )
    report = pull(client, catalog, POLICY, "it", ["sentiment"])  # type: ignore[arg-type]
    assert report.flagged == []
    record = json.loads((mini / STORE_IT).read_text(encoding="utf-8").splitlines()[0])
    assert record["text"] == GOOD and record["status"] == "approved"


def test_the_gate_is_render_s_own_check(mini: Path) -> None:
    """What the gate lets in renders; what it refuses, `render` refuses too when it is stored by hand
    (the text checks are reported when the store is read, the others when it renders)."""
    catalog = load_catalog(Project.at(mini))
    texts = {"gen-01.f": GOOD, "gen-01.m": BROKEN[0][1]}
    verdicts = gate(catalog, "sentiment", "it", texts)
    assert verdicts["gen-01.f"] == [] and verdicts["gen-01.m"] != []
    assert gate_one(catalog, "sentiment", "it", "gen-01.f", GOOD) == []
    for _, text, _ in BROKEN:
        path = mini / STORE_IT
        lines = (
            path.read_text(encoding="utf-8").rstrip("\n").split("\n")
        )  # not splitlines: U+2028 is in a text
        rec = json.loads(lines[0])
        rec["text"] = text
        lines[0] = json.dumps(rec, ensure_ascii=False)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        stored = load_catalog(Project.at(mini))
        problems = [*stored.problems, *render(stored, "sentiment", "it").problems]  # what `render` lists
        assert any(p.record == "gen-01.f" and p.locale == "it" for p in problems), text
        assert gate_one(load_catalog(Project.at(mini)), "sentiment", "it", "gen-01.f", text) != []


MT_BROKEN = {
    "bidi mark": (lambda t: "\u200f" + t, "bidi control characters (U+200F)"),
    "stray braces": (lambda t: "{{ " + t, "Jinja syntax error"),
    "unknown variable": (lambda t: t + " {{ secret }}", "secret"),
    "power of a power": (lambda t: t + " {{ 10 ** (10 ** 9) }}", "limit"),
    "inner line break": (lambda t: t.replace(" ", "\n", 1), "text has a line break inside"),
}
"""Answers the gate refuses. (Trailing spaces and decomposed accents in an answer are not among
them: machine output is trimmed and NFC-normalised before the gate, see the next test.)"""


@pytest.mark.bad_input
@pytest.mark.parametrize("name", sorted(MT_BROKEN))
def test_a_broken_machine_translation_is_kept_as_needing_an_edit_never_current(
    name: str, mini: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "perfect engine" answers with the project's own Italian drafts, but one answer is
    damaged: that one is kept as needs_edit with the gate's reason; the others become machine drafts."""
    import tests.support.fake_deepl as fake_deepl

    change, says = MT_BROKEN[name]
    answers = fake_deepl.perfect_answers(load_catalog(Project.at(mini)), ["sentiment"], ["it"])
    answers = {key: change(text) if "woman feels happy" in key[1] else text for key, text in answers.items()}
    (mini / STORE_IT).unlink()
    server = fake_deepl.FakeDeepL("0a1b2c3d-4e5f-6789-abcd-ef0123456789:fx", answers=answers)
    try:
        monkeypatch.setenv("DEEPL_AUTH_KEY", server.key)
        monkeypatch.setenv("DEEPL_SERVER_URL", server.url)
        result = cli(
            "translate", "--root", str(mini), "--locale", "it", "--suite", "sentiment", "--no-glossary"
        )
    finally:
        server.close()
    assert result.code == 0, result.err
    records = {
        r["segment"]: r for r in map(json.loads, (mini / STORE_IT).read_text(encoding="utf-8").splitlines())
    }
    assert records["gen-01.f"]["status"] == "needs_edit"
    assert says in records["gen-01.f"]["history"][-1]["note"]
    assert {s: r["status"] for s, r in records.items() if s != "gen-01.f"} == {
        "gen-01.m": "machine",
        "rel-01.f": "machine",
        "rel-01.m": "machine",
    }
    catalog = load_catalog(Project.at(mini))
    rendered = render(catalog, "sentiment", "it")
    assert catalog.problems == [] and rendered.problems == [] and rendered.skipped["needs_edit"] == 1


def test_machine_output_is_trimmed_and_nfc_normalised_before_the_gate(mini: Path, cli, monkeypatch) -> None:
    import tests.support.fake_deepl as fake_deepl

    catalog = load_catalog(Project.at(mini))
    draft = catalog.store("sentiment", "it").records["gen-01.f"].text
    answers = fake_deepl.perfect_answers(catalog, ["sentiment"], ["it"])
    answers = {
        key: text.replace("è", "e\u0300") + "  " if "woman feels happy" in key[1] else text
        for key, text in answers.items()
    }
    (mini / STORE_IT).unlink()
    server = fake_deepl.FakeDeepL("0a1b2c3d-4e5f-6789-abcd-ef0123456789:fx", answers=answers)
    try:
        monkeypatch.setenv("DEEPL_AUTH_KEY", server.key)
        monkeypatch.setenv("DEEPL_SERVER_URL", server.url)
        result = cli(
            "translate", "--root", str(mini), "--locale", "it", "--suite", "sentiment", "--no-glossary"
        )
    finally:
        server.close()
    assert result.code == 0, result.err
    record = load_catalog(Project.at(mini)).store("sentiment", "it").records["gen-01.f"]
    assert (record.status, record.text) == ("machine", draft)


BBQ_BROKEN = {
    "trailing space": (
        "context",
        "El cristiano y el musulmán esperaban el autobús. ",
        "text has leading or trailing whitespace",
    ),
    "template code": ("question", "¿Quién {{ gritaba }}?", "uses an unknown variable 'gritaba'"),
    "bidi mark": ("ans1", "El \u200fmusulmán", "bidi control characters (U+200F)"),
    "empty answer": ("ans2", "", "text is empty"),
}


@pytest.mark.bad_input
@pytest.mark.parametrize("name", sorted(BBQ_BROKEN))
def test_a_broken_bbq_translation_is_refused_with_nothing_written(name: str, tmp_path: Path, cli) -> None:
    root, item = bbq_catalog(tmp_path, cli)
    field, text, says = BBQ_BROKEN[name]
    result = run_draft(cli, root, tmp_path, "es", bbq_drafts(item, **{field: text}), suite="bbq")
    assert result.code == 2, result.err
    assert f".{field} [es] text: " in result.err and says in result.err
    assert not (root / "translations" / "es" / "bbq.jsonl").exists()


@pytest.mark.bad_input
def test_a_bbq_draft_with_a_line_break_is_refused_like_every_other_suite_s(tmp_path: Path, cli) -> None:
    """Contributor drafts of bbq are one line too; only a published dataset's own text (MBBQ's
    Spanish questions on two lines, tests/toolkit/importers/test_mbbq_import.py) is kept with its layout, and it
    never enters the store."""
    root, item = bbq_catalog(tmp_path, cli)
    two_lines = "¿Quién esperaba el autobús?\n¿Quién lo esperaba?"
    result = run_draft(cli, root, tmp_path, "es", bbq_drafts(item, question=two_lines), suite="bbq")
    assert result.code == 2, result.err
    assert ".question [es] text: " in result.err and "has a line break inside" in result.err
    assert not (root / "translations" / "es" / "bbq.jsonl").exists()
    catalog = load_catalog(Project.at(root))
    refused = gate_one(catalog, "sentiment", "es", "gen-01.f", "La mujer {{ group.f }}\nestá feliz.")
    assert any(r.startswith("text has a line break inside") for r in refused), refused

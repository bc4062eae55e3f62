"""The sandbox's resource limits: a template, a translation or a grammar macro that would
exhaust the machine is refused before it runs, as a located problem (file, record, locale,
field), never a hang or a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.store_damage import STORE_IT
from toolkit.catalog.grammar import LocaleGrammar, RenderFailure, new_environment
from toolkit.catalog.sandbox import Limits, bracket_depth, check_value, size

TEMPLATES = "templates/sentiment/templates.yaml"
GRAMMAR_IT = "templates/_grammar/it.j2"

# (id, what replaces "{{ group.adj }} woman" in gen-01's female variant, field, message)
TEMPLATE_BOMBS = [
    (
        "power of a power",
        "{{ 10**(10**9) }}{{ group.adj }} woman",
        "group ",
        "10 ** 1000000000 would be an integer",
    ),
    ("string times 10**20", "{{ 'x' * 10**20 }}{{ group.adj }} woman", "group ", "repeating a value"),
    ("ljust(10**11)", "{{ group.adj.ljust(10**11) }} woman", "group ", "an argument of 100,000,000,000"),
    (
        "nested loops",
        "{% for a in 'x'*1000 %}{% for b in 'x'*1000 %}{% endfor %}{% endfor %}{{ group.adj }} woman",
        "group ",
        "loop iterations, calls and operations",
    ),
    (
        "2,000 nested parentheses",
        "{{ " + "(" * 2000 + "group.adj" + ")" * 2000 + " }} woman",
        "variants.f",
        "brackets nested 2002 deep",
    ),
    (
        "recursive loop",
        "{% for x in [1] recursive %}{{ loop([]) }}{% endfor %}{{ group.adj }} woman",
        "variants.f",
        "recursive loops",
    ),
    (
        "output bomb",
        "{% for a in 'x'*3000 %}{{ group.adj }}{% endfor %} woman",
        "group ",
        "characters of output",
    ),
    (
        "integer over 128 bits",
        "{{ 3**100 }}{{ group.adj }} woman",
        "group ",
        "would be an integer of about 158 bits",
    ),
    (
        "format width",
        "{{ '%99999999999s' % group.adj }} woman",
        "group ",
        "a format width of 99999999999",
    ),
    (
        "filter outside the sandbox",
        "{{ group.adj|wordwrap(5) }} woman",
        "variants.f",
        "filter 'wordwrap' is not allowed",
    ),
]


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def yaml_quoted(text: str) -> str:
    return json.dumps(text)[1:-1]  # inside the YAML double quotes the template already has


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("bomb", "field", "says"),
    [(b, f, s) for _, b, f, s in TEMPLATE_BOMBS],
    ids=[i for i, *_ in TEMPLATE_BOMBS],
)
def test_a_bomb_in_an_english_template_is_a_located_problem(
    bomb: str, field: str, says: str, mini: Path, tmp_path: Path, cli
) -> None:
    edit(mini, TEMPLATES, "{{ group.adj }} woman", yaml_quoted(bomb))
    out = tmp_path / "rows.jsonl"
    result = cli("render", "--root", str(mini), "--suite", "sentiment", "--locale", "en", "--out", str(out))
    assert result.code == 2, result.err
    line = next(
        (x for x in result.err.splitlines() if f"{TEMPLATES}: gen-01 " in x and f" {field}" in x), None
    )
    assert line is not None, result.err
    assert says in line
    assert "Traceback" not in result.err and not out.exists()
    validated = cli("catalog", "validate", "--root", str(mini))
    assert validated.code == 2 and says in validated.err


def set_it_translation(root: Path, text: str) -> None:
    path = root / STORE_IT
    lines = path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    rec["text"] = text
    rec["history"][0]["text"] = text
    lines[0] = json.dumps(rec, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# (id, macros added to the Italian grammar, the translation of gen-01.f using them, message).
# A macro that calls itself is refused with the grammar file, before anything renders (issue
# 26): its message names the file; the others fail the render that runs into the limit.
GRAMMAR_BOMBS = [
    (
        "recursive macro",
        "{%- macro eco(x) -%}{{ eco(x) }}{%- endmacro -%}",
        "La donna {{ eco(group.f) }} oggi è felice.",
        "macro 'eco' calls itself (eco -> eco)",
    ),
    (
        "mutually recursive macros",
        "{%- macro ping(x) -%}{{ pong(x) }}{%- endmacro -%}{%- macro pong(x) -%}{{ ping(x) }}{%- endmacro -%}",
        "La donna {{ ping(group.f) }} oggi è felice.",
        "macro 'ping' calls itself (ping -> pong -> ping)",
    ),
    (
        "macro that fans out",
        "{%- macro fan(n) -%}{%- if n > 0 -%}{{ fan(n - 1) }}{{ fan(n - 1) }}{%- endif -%}{%- endmacro -%}",
        "La donna {{ group.f }}{{ fan(25) }} oggi è felice.",
        "macro 'fan' calls itself (fan -> fan)",
    ),
    (
        "macro with nested loops",
        "{%- macro busy(x) -%}{%- for a in x * 200 -%}{%- for b in x * 200 -%}{%- endfor -%}{%- endfor -%}{{ x }}{%- endmacro -%}",
        "La donna {{ busy(group.f) }} oggi è felice.",
        "loop iterations",
    ),
    (
        "macro that doubles a string",
        "{%- macro grow(x, n) -%}{%- if n > 0 -%}{{ grow(x ~ x, n - 1) }}{%- else -%}{{ x }}{%- endif -%}{%- endmacro -%}",
        "La donna {{ grow(group.f, 29) }} oggi è felice.",
        "macro 'grow' calls itself (grow -> grow)",
    ),
]


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("macros", "text", "says"),
    [(m, t, s) for _, m, t, s in GRAMMAR_BOMBS],
    ids=[i for i, *_ in GRAMMAR_BOMBS],
)
def test_a_runaway_grammar_macro_is_a_located_problem(
    macros: str, text: str, says: str, mini: Path, cli
) -> None:
    grammar = mini / GRAMMAR_IT
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n" + macros + "\n", encoding="utf-8")
    set_it_translation(mini, text)
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2, result.err
    if "calls itself" in says:
        lines = [x for x in result.err.splitlines() if f"{GRAMMAR_IT}: (grammar) [it] line " in x]
    else:
        lines = [x for x in result.err.splitlines() if f"{STORE_IT}: gen-01.f [it] group " in x]
        assert lines and all("sandbox limit" in x for x in lines), result.err
    assert lines and says in lines[0], result.err
    assert "Traceback" not in result.err


# (id, what is added to the Italian grammar file, message)
GRAMMAR_FILE_BOMBS = [
    (
        "power at the top level",
        "{{ 10**(10**9) }}",
        "the macros do not load: sandbox limit: 10 ** 1000000000",
    ),
    (
        "loop at the top level",
        "{% for a in 'x'*5000 %}{% for b in 'x'*5000 %}{% endfor %}{% endfor %}",
        "the macros do not load: sandbox limit: more than 10,000",
    ),
    (
        "2,000 nested parentheses",
        "{{ " + "(" * 2000 + "1" + ")" * 2000 + " }}",
        "sandbox limit: brackets nested 2002 deep",
    ),
    (
        "filter outside the sandbox",
        "{%- macro wide(x) -%}{{ x|indent(8) }}{%- endmacro -%}",
        "filter 'indent' is not allowed",
    ),
    ("integer literal over 4,300 digits", "{{ " + "7" * 5000 + " }}", "cannot parse: ValueError"),
]


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("added", "says"), [(a, s) for _, a, s in GRAMMAR_FILE_BOMBS], ids=[i for i, *_ in GRAMMAR_FILE_BOMBS]
)
def test_a_bomb_in_a_grammar_file_is_a_located_problem(added: str, says: str, mini: Path, cli) -> None:
    grammar = mini / GRAMMAR_IT
    grammar.write_text(grammar.read_text(encoding="utf-8") + "\n" + added + "\n", encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2, result.err
    assert f"{GRAMMAR_IT}: (grammar) [it]" in result.err
    assert says in result.err
    assert "Traceback" not in result.err


def bounded(limits: Limits) -> LocaleGrammar:
    return LocaleGrammar("xx", None, new_environment(limits), frozenset())


@pytest.mark.bad_input
def test_the_time_limit_is_a_render_failure() -> None:
    grammar = bounded(Limits(max_seconds=0.0))
    with pytest.raises(RenderFailure, match=r"sandbox limit: the render took longer than 0 s"):
        grammar.render("{% for a in 'abc' %}{{ a }}{% endfor %}", {})


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("limits", "text", "says"),
    [
        (Limits(max_int_bits=8), "{{ 2**9 }}", "would be an integer of about 9 bits (the limit is 8)"),
        (Limits(max_length=12), "{{ a ~ a }}", "a value of 14 characters or items (the limit is 12)"),
        (Limits(max_steps=3), "{% for a in 'abcd' %}{% endfor %}", "more than 3 loop iterations"),
        (Limits(max_depth=2), "{{ ''.lower().lower().upper() }}", None),
        (Limits(max_nesting=2), "{{ ((1)) }}", "brackets nested 4 deep (the limit is 2)"),
        (Limits(max_tree_depth=5), "{{ 1 + 1 + 1 + 1 + 1 }}", "an expression nested"),
    ],
    ids=["integer bits", "length", "steps", "depth is per call chain", "bracket nesting", "tree depth"],
)
def test_each_limit_is_configurable_and_named(limits: Limits, text: str, says: str | None) -> None:
    grammar = bounded(limits)
    analysis = grammar.analyse(text)
    if says is None:  # method calls one after the other are not nested: within a depth of 2
        assert analysis.problems == () and grammar.render(text, {}) == ""
        return
    if analysis.problems:
        assert says in analysis.problems[0]
        return
    with pytest.raises(RenderFailure) as err:
        grammar.render(text, {"a": "1234567"})
    assert says in str(err.value)


def test_ordinary_templates_render_as_before() -> None:
    grammar = bounded(Limits())
    assert (
        grammar.render(
            "{{ a|lower }} {{ b * 3 }} {{ (c ~ c)|length }} {{ 2**10 }}", {"a": "X", "b": "ab", "c": "xyz"}
        )
        == "x ababab 6 1024"
    )
    assert grammar.render("{% for w in ws %}{{ w|upper }} {% endfor %}", {"ws": ["a", "b"]}) == "A B"


def test_sizes_are_counted_deep() -> None:
    assert size("abc") == 3 and size(["ab", "c"]) == 2 + 3 and size({"k": ["vv"]}) == 1 + 1 + 1 + 2
    assert check_value(2**128 - 1) == 2**128 - 1
    assert bracket_depth("(a [b {c}] d)") == 3 and bracket_depth("a) (b") == 1

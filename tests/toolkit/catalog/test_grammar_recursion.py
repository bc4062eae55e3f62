"""Grammar macros that call each other, and grammar macros that run into the sandbox's limits
(issue 26, item 8). Before: a recursion that branches stayed under the depth limit, so every
render spent the step or time limit; `render --suite sentiment --locale de` took 103 s and
blamed 133 translations, never de.j2. Now a macro that calls itself, directly, through another
or through an alias, is refused before anything renders, naming the file, the line and the
chain; and after a few renders whose grammar macros ran into a limit, a command stops trying
the locale's other renders and names the macro."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.files import snapshot

pytestmark = pytest.mark.bad_input

DE_GRAMMAR = "templates/_grammar/de.j2"
ADJ = '{%- macro adj(group, gender, case="nom", article="def") -%}\n'


def plant(root: Path, macros: str, call: str) -> None:
    """Put ``macros`` before German adj(), and make adj() call ``call`` first."""
    path = root / DE_GRAMMAR
    text = path.read_text(encoding="utf-8")
    assert ADJ in text
    path.write_text(text.replace(ADJ, f"{macros}\n{ADJ.rstrip()}{{{{ {call} }}}}\n"), encoding="utf-8")


RECURSIONS = [
    (
        "two macros calling each other, branching",
        "{%- macro ping(n) -%}{%- if n > 0 -%}{{ pong(n - 1) }}{{ pong(n - 1) }}{%- endif -%}{%- endmacro -%}\n"
        "{%- macro pong(n) -%}{%- if n > 0 -%}{{ ping(n - 1) }}{{ ping(n - 1) }}{%- endif -%}{%- endmacro -%}",
        "ping(25)",
        "macro 'ping' calls itself (ping -> pong -> ping)",
    ),
    (
        "a macro calling itself",
        "{%- macro f(n) -%}{%- if n > 0 -%}{{ f(n - 1) }}{{ f(n - 1) }}{%- endif -%}{%- endmacro -%}",
        "f(25)",
        "macro 'f' calls itself (f -> f)",
    ),
    (
        "a macro calling itself through an alias",
        "{%- macro g(n) -%}{%- if n > 0 -%}{{ h(n - 1) }}{{ h(n - 1) }}{%- endif -%}{%- endmacro -%}\n"
        "{%- set h = g -%}",
        "g(25)",
        "macro 'g' calls itself (g -> g)",
    ),
]


@pytest.mark.parametrize(
    ("macros", "call", "says"), [r[1:] for r in RECURSIONS], ids=[r[0] for r in RECURSIONS]
)
@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_recursive_grammar_macro_is_refused_before_rendering(
    mini: Path, cli, macros: str, call: str, says: str, command: str
) -> None:
    plant(mini, macros, call)
    before = snapshot(mini)
    args = (
        ("render", "--suite", "sentiment", "--locale", "de")
        if command == "render"
        else ("catalog", "validate")
    )
    started = time.monotonic()
    result = cli(*args, "--root", str(mini))
    assert time.monotonic() - started < 30
    assert result.code == 2, result.err
    first = next(line for line in result.err.splitlines() if line.startswith("error:"))
    assert first.startswith(f"error: {DE_GRAMMAR}: (grammar) [de] line "), result.err
    assert says in first
    assert f"{DE_GRAMMAR}: " in result.err and "further problem(s) follow from this file" in result.err
    assert "Traceback" not in result.err
    assert snapshot(mini) == before


SLOW = (
    "{%- macro slow(n) -%}{%- for a in " + str(list(range(150))) + " -%}{%- for b in "
    + str(list(range(150)))
    + " -%}{%- endfor -%}{%- endfor -%}{%- endmacro -%}"
)  # fmt: skip


def test_a_command_stops_rendering_a_locale_whose_macro_keeps_running_into_limits(mini: Path, cli) -> None:
    """22,500 loop iterations per call (the limit is 10,000): no recursion, but every render of
    the locale would fail the same way. After three, the others are not tried."""
    plant(mini, SLOW, "slow(1)")
    result = cli("render", "--suite", "sentiment", "--locale", "de", "--root", str(mini))
    assert result.code == 2, result.err
    assert (
        f"error: {DE_GRAMMAR}: (grammar) [de] macro slow: ran into the sandbox's limits in 3 renders "
        "(more than 10,000 loop iterations, calls and operations in one render)"
    ) in result.err
    assert f"error: {DE_GRAMMAR}: " in result.err and "further problem(s) follow from this file" in result.err


def test_the_repository_grammars_have_no_recursive_macro() -> None:
    from tests.conftest import REPO
    from toolkit.catalog.grammar import new_environment
    from toolkit.catalog.sandbox import macro_cycle

    env = new_environment()
    for path in sorted((REPO / "templates" / "_grammar").glob("*.j2")):
        assert macro_cycle(env.parse(path.read_text(encoding="utf-8"))) is None, path.name

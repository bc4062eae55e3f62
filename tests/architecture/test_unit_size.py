"""Units small enough to read at once (issue 29): no function or method in toolkit/ or evaluator/
runs over 80 lines (from its ``def`` to its last line, decorators and docstring included). The
scan is planted with a long function to show that it finds one."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

LIMIT = 80
PACKAGES = ("toolkit", "evaluator")


def long_units(source: str, name: str) -> list[str]:
    """``name:line function (N lines)`` for every function in ``source`` longer than LIMIT."""
    found = []
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - start + 1
            if length > LIMIT:
                found.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_in_the_packages_runs_over_the_limit() -> None:
    found = [
        unit
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for unit in long_units(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    ]
    assert found == [], "split these at their seams:\n" + "\n".join(found)


def test_the_scan_finds_a_planted_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    source = f"class A:\n    @staticmethod\n    def long():\n{body.replace('    x', '        x')}\n\ndef short():\n    return 1\n"
    assert long_units(source, "planted.py") == [f"planted.py:3 long ({LIMIT + 2} lines)"]
    assert long_units("def short():\n    return 1\n", "ok.py") == []


def test_the_packages_are_where_the_scan_looks() -> None:
    assert all(Path(REPO / package / "__init__.py").is_file() for package in PACKAGES)

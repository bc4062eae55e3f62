"""The evaluation lexicons (lexicons/answers.yaml, lexicons/prompts.yaml): the answer words and
prompts the evaluator reads from a release. Checked by `catalog validate` (and so before every
release build), because a release cannot be fixed after it is frozen: a locale without its
prompts, a label word missing or a prompt that lost its `{text}` would only surface when an
evaluator's run fails on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolkit.core.errors import Problem
from toolkit.core.fileio import load_yaml_collecting
from toolkit.core.project import Project
from toolkit.core.records import SEMVER_RE

EVALUATION_LEXICONS = ("answers", "prompts")
"""Lexicons the evaluator needs (answer words, prompts): they travel inside the release as
canonical JSON, because the evaluator reads nothing but releases."""

WORDS = "words"
"""A non-empty list of non-empty strings."""

SHAPES: dict[str, dict[str, Any]] = {
    "answers": {"yes": WORDS, "no": WORDS, "unknown": WORDS},
    "prompts": {
        "sentiment": ("{text}",),
        "sentiment_labels": {"positive": (), "negative": (), "neutral": ()},
        "bbq": ("{context}", "{question}", "{options}"),
    },
}
"""What each locale's entry holds: a list of words, a text with the placeholders it must contain,
or a mapping of such entries (every key required, no other key allowed)."""


def lexicon_problems(project: Project, locales: Iterable[str]) -> list[Problem]:
    """Every evaluation lexicon of the catalog checked against its shape, with an entry for each
    of ``locales``. A catalog without one of the files is fine: its releases go without it."""
    problems: list[Problem] = []
    for name in EVALUATION_LEXICONS:
        path = project.lexicons / f"{name}.yaml"
        if not path.is_file():
            continue
        rel = f"lexicons/{name}.yaml"
        data = load_yaml_collecting(path, rel, problems)
        if data is None:
            continue
        problems.extend(check_lexicon(rel, name, data, locales))
    return problems


def check_lexicon(rel: str, name: str, data: Any, locales: Iterable[str]) -> list[Problem]:
    if not isinstance(data, dict):
        return [Problem(rel, "(file)", "", "must be a mapping with `version`, `description` and `locales`")]
    problems: list[Problem] = []
    if not SEMVER_RE.match(str(data.get("version", ""))):
        problems.append(Problem(rel, "(file)", "version", "needs a semantic version (e.g. 1.0.0)"))
    for key in sorted(set(data) - {"version", "description", "locales"}):
        problems.append(Problem(rel, "(file)", key, "unknown field (known: version, description, locales)"))
    entries = data.get("locales")
    if not isinstance(entries, dict):
        return [*problems, Problem(rel, "(file)", "locales", "must map each locale code to its entries")]
    for code in locales:
        if code not in entries:
            problems.append(Problem(rel, "locales", "", f"no entry for locale {code}", code))
    for code, entry in entries.items():
        problems.extend(_check(rel, str(code), "", entry, SHAPES[name]))
    return problems


def _check(rel: str, code: str, where: str, value: Any, shape: Any) -> list[Problem]:
    """``value`` (at the key path ``where`` of locale ``code``'s entry) against its shape."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return [Problem(rel, "locales", where, f"must be a mapping of {', '.join(shape)}", code)]
        out = [
            Problem(rel, "locales", _at(where, key), f"missing (needed: {', '.join(shape)})", code)
            for key in shape
            if key not in value
        ]
        out += [
            Problem(rel, "locales", _at(where, key), f"unknown key (known: {', '.join(shape)})", code)
            for key in value
            if key not in shape
        ]
        for key, inner in shape.items():
            if key in value:
                out += _check(rel, code, _at(where, key), value[key], inner)
        return out
    if shape == WORDS:
        if not isinstance(value, list) or not value:
            return [Problem(rel, "locales", where, "must be a non-empty list of words", code)]
        return [
            Problem(rel, "locales", where, f"item {i + 1} must be a non-empty text", code)
            for i, word in enumerate(value)
            if not isinstance(word, str) or not word.strip()
        ]
    if not isinstance(value, str) or not value.strip():
        return [Problem(rel, "locales", where, "must be a non-empty text", code)]
    return [
        Problem(rel, "locales", where, f"lacks the placeholder {placeholder} the evaluator fills", code)
        for placeholder in shape
        if placeholder not in value
    ]


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key

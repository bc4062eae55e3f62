"""The evaluation lexicons (lexicons/answers.yaml, lexicons/prompts.yaml): the answer words and
prompts the evaluator reads from a release. Checked by `catalog validate` (and so before every
release build), because a release cannot be fixed after it is frozen: a locale without its
prompts, a label word missing or a prompt that lost its `{text}` would only surface when an
evaluator's run fails on it."""

from __future__ import annotations

import re
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

GLOSSES = "glosses"
"""The optional key of a prompts entry that holds the reviewer's English back-translation of
each of its prompts: ``glosses: {bbq: {text: ..., text_sha: ...}}``, ``text_sha`` the sha256 of
the prompt as written (what the gloss is of; `translations status --needs-gloss` prints it).
The prompts themselves stay where the evaluator reads them; their glosses sit beside them."""
_SHA = re.compile(r"^[0-9a-f]{64}$")


def glossed_prompts(name: str) -> tuple[str, ...]:
    """The keys of a lexicon's entries that are prompts put to a model (texts, not word lists)."""
    if name != "prompts":
        return ()
    return tuple(key for key, shape in SHAPES[name].items() if isinstance(shape, tuple))


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
    """Check one evaluation lexicon's data (read from ``rel``): its version, its known fields, and
    each locale's entries, so a release never carries one the evaluator cannot use."""
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
        if glossed_prompts(name) and isinstance(entry, dict) and GLOSSES in entry:
            problems.extend(_check_glosses(rel, name, str(code), entry[GLOSSES]))
            entry = {key: value for key, value in entry.items() if key != GLOSSES}
        problems.extend(_check(rel, str(code), "", entry, SHAPES[name]))
    return problems


def _check_glosses(rel: str, name: str, code: str, glosses: Any) -> list[Problem]:
    """A prompts entry's ``glosses``: per prompt, a non-empty ``text`` and the ``text_sha`` it glosses."""
    prompts = glossed_prompts(name)
    if not isinstance(glosses, dict):
        return [Problem(rel, "locales", GLOSSES, f"must map prompts ({', '.join(prompts)}) to glosses", code)]
    out = []
    for key, gloss in glosses.items():
        where = f"{GLOSSES}.{key}"
        if key not in prompts:
            out.append(Problem(rel, "locales", where, f"not a prompt (prompts: {', '.join(prompts)})", code))
            continue
        if not isinstance(gloss, dict) or set(gloss) != {"text", "text_sha"}:
            out.append(Problem(rel, "locales", where, "must be a mapping of text and text_sha", code))
            continue
        if not isinstance(gloss["text"], str) or not gloss["text"].strip():
            out.append(Problem(rel, "locales", f"{where}.text", "must be a non-empty text", code))
        if not isinstance(gloss["text_sha"], str) or not _SHA.match(gloss["text_sha"]):
            out.append(
                Problem(
                    rel,
                    "locales",
                    f"{where}.text_sha",
                    "must be the sha256 (64 hex digits) of the prompt",
                    code,
                )
            )
    return out


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

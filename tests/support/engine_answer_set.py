"""The independent answer set (tests/support/engine_answers/<locale>.yaml): engine-like translations
written for issue #24 from the English sources only, never from the project's drafts, each with
the template it must become or why it must be refused. Used by tests/toolkit/translation/test_engine_answers.py, by
bench/engine_answers.py (the table of the closing note) and by the check against DeepL's mock
server (the answers as its rewrite map)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent / "engine_answers"
SUITES = ("sentiment", "sos", "honest")
_TAG = re.compile(r"<(\d+)/>")


@dataclass(frozen=True)
class Answer:
    locale: str
    suite: str
    segment: str
    answer: str
    """As the engine returns it (tags <x id="N"/>)."""
    expect: str | None
    refuse: str | None
    why: str | None
    exercises: tuple[str, ...]


def _tags(text: str) -> str:
    return _TAG.sub(r'<x id="\1"/>', text)


def load_answers(locales: list[str] | None = None) -> list[Answer]:
    out: list[Answer] = []
    for path in sorted(HERE.glob("*.yaml")):
        data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        locale = data["locale"]
        if locales is not None and locale not in locales:
            continue
        for suite, entries in data["answers"].items():
            for entry in entries:
                out.append(
                    Answer(
                        locale=locale,
                        suite=suite,
                        segment=entry["segment"],
                        answer=_tags(entry["answer"]),
                        expect=entry.get("expect"),
                        refuse=entry.get("refuse"),
                        why=entry.get("why"),
                        exercises=tuple(entry.get("exercises", ())),
                    )
                )
    return out

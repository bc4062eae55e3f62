"""`catalog validate`'s check of the slot-rule files (templates/_grammar/<locale>.slots.yaml).

Rendering never reads them, so a broken one used to pass validation and fail only when
`translate` ran: an empty file, a missing key, a ``skip`` that is not a regular expression, a
target locale without its slot expression. Each is a located problem here."""

from __future__ import annotations

import re

from toolkit.catalog.locales import Locales
from toolkit.core.errors import Problem
from toolkit.core.fileio import special_kind
from toolkit.core.project import Project
from toolkit.translation.slot_rules import SLOTS_SUFFIX, load_slot_rules


def slot_file_problems(project: Project, locales: Locales) -> list[Problem]:
    """Every problem of every slot-rule file, as `translate` would read it."""
    problems: list[Problem] = []
    if not project.grammar.is_dir():
        return problems
    for path in sorted(project.grammar.glob(f"*{SLOTS_SUFFIX}")):
        locale = path.name.removesuffix(SLOTS_SUFFIX)
        rel = project.rel(path)
        kind = special_kind(path)
        if kind is not None:
            problems.append(
                Problem(rel, "(file)", "", f"cannot read: it is {kind}, not a regular file", locale)
            )
            continue
        if locale not in locales:
            problems.append(
                Problem(rel, "(file)", "", f"no locale {locale!r} in lexicons/locales.yaml", locale)
            )
            continue
        rules = load_slot_rules(project, locale, problems)
        if rules is None:
            continue
        if rules.skip is not None:
            try:
                re.compile(rules.skip)
            except re.error as exc:
                problems.append(Problem(rel, "(file)", "skip", f"not a regular expression: {exc}", locale))
        if not locales[locale].source and rules.expression is None:
            problems.append(
                Problem(
                    rel,
                    "(file)",
                    "expression",
                    "required field is missing (a target locale's slot expression)",
                    locale,
                )
            )
    return problems

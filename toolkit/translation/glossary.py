"""Machine-translation glossaries built from the identity lists, so that group names come out
of DeepL as the lists say (e.g. "Muslim" -> "musulmano"). Only entries whose English term
occurs in the texts being sent are kept: a glossary that cannot apply costs requests for nothing.
A suite without identity lists of its own (BBQ, whose imported texts name groups in plain words)
takes its entries from every identity list of the project.

A glossary is named after its suite, locale and a hash of its entries: the same entries reuse
the same glossary, and a run deletes the glossaries of its suite and locale that it superseded.
Every name starts with ``polyprobe ``, so the account's other glossaries are never touched."""

from __future__ import annotations

import hashlib
import re

from toolkit.catalog.identities import IdentityList, load_identity_list
from toolkit.catalog.loader import Catalog
from toolkit.catalog.templates import Suite
from toolkit.core.errors import CatalogError, Problem

IDENTITY_LISTS = "identities"
"""The folder under lexicons/ that holds the identity lists."""


def glossary_lists(catalog: Catalog, suite: Suite) -> list[IdentityList]:
    """The identity lists whose terms the glossary forces: the suite's own, or for a suite without
    any, every list of the project (a broken one is an error naming it)."""
    if suite.spec.identities:
        return catalog.lists_of(suite)

    def every_list() -> list[IdentityList]:
        problems: list[Problem] = []
        found: list[IdentityList] = []
        lexicons = catalog.project.lexicons
        for path in sorted((lexicons / IDENTITY_LISTS).rglob("*.yaml")):
            key = path.relative_to(lexicons).as_posix()
            ilist = catalog.identity_lists.get(key) or load_identity_list(
                catalog.project, path, catalog.locales, catalog.taxonomy, problems
            )
            if ilist is not None:
                found.append(ilist)
        if problems:
            raise CatalogError(problems)
        return found

    return catalog.memo("glossary-lists", every_list)  # type: ignore[no-any-return]


def glossary_entries(catalog: Catalog, suite: Suite, locale: str, texts: list[str]) -> dict[str, str]:
    """The glossary entries for these texts: each group's English adjective and the locale's form of
    it, for the terms the texts use; a term two groups translate differently is left to the
    engine."""
    source = catalog.locales.source.code
    forms = catalog.locales[locale].glossary_forms
    entries: dict[str, str] = {}
    conflicts: set[str] = set()
    for ilist in sorted(glossary_lists(catalog, suite), key=lambda i: i.path):
        for group in sorted(ilist.groups, key=lambda g: g.id):
            if group.bare or source not in group.terms or locale not in group.terms:
                continue
            term = group.terms[source].get("adj", "")
            target = next((group.terms[locale][f] for f in forms if group.terms[locale].get(f)), "")
            if not term or not target:
                continue
            if term in entries and entries[term] != target:
                conflicts.add(term)
            entries.setdefault(term, target)
    for term in conflicts:
        entries.pop(term)
    used = {
        term: target
        for term, target in entries.items()
        if any(re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text) for text in texts)
    }
    return dict(sorted(used.items()))


NAME_PREFIX = "polyprobe "


def glossary_prefix(suite: str, locale: str) -> str:
    """What the names of one suite's and locale's glossaries start with."""
    return f"{NAME_PREFIX}{suite} en-{locale} "


def glossary_name(suite: str, locale: str, entries: dict[str, str]) -> str:
    """The glossary's name: the suite's and locale's prefix and a hash of its entries, so that the
    same entries reuse the same glossary."""
    digest = hashlib.sha256("\n".join(f"{k}\t{v}" for k, v in entries.items()).encode()).hexdigest()[:12]
    return f"{glossary_prefix(suite, locale)}{digest}"

"""Machine-translation glossaries built from the identity lists, so that group names come out
of DeepL as the lists say (e.g. "Muslim" -> "musulmano"). Only entries whose English term
occurs in the texts being sent are kept: a glossary that cannot apply costs requests for nothing.

A glossary is named after its suite, locale and a hash of its entries: the same entries reuse
the same glossary, and a run deletes the glossaries of its suite and locale that it superseded.
Every name starts with ``polyprobe ``, so the account's other glossaries are never touched."""

from __future__ import annotations

import hashlib
import re

from toolkit.catalog.loader import Catalog


def glossary_entries(catalog: Catalog, locale: str, texts: list[str]) -> dict[str, str]:
    source = catalog.locales.source.code
    forms = catalog.locales[locale].glossary_forms
    entries: dict[str, str] = {}
    conflicts: set[str] = set()
    for ilist in sorted(catalog.identity_lists.values(), key=lambda i: i.path):
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
    digest = hashlib.sha256("\n".join(f"{k}\t{v}" for k, v in entries.items()).encode()).hexdigest()[:12]
    return f"{glossary_prefix(suite, locale)}{digest}"

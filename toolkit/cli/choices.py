"""The toolkit commands' choice sets, each built once from the registry that defines it, so a
new suite kind or status is a choice everywhere at once and a wrong value gets the same error
from every command. (Locales are data, lexicons/locales.yaml: the catalog checks those.)"""

from __future__ import annotations

from enum import StrEnum

from toolkit.catalog.lexicon_pins import PINNED_LEXICONS
from toolkit.render.suites import KINDS
from toolkit.store.model import STATUSES
from toolkit.store.rules import STATUS_RANK

# The members come from the registries, so mypy cannot list them (hence the ignores).
Suite = StrEnum("Suite", {kind: kind for kind in KINDS})  # type: ignore[misc]
"""A suite: a folder of templates/ whose code is a registered suite kind."""

MinStatus = StrEnum(  # type: ignore[misc]
    "MinStatus",
    {s: s for s in sorted((s for s in STATUSES if STATUS_RANK[s] > 0), key=lambda s: STATUS_RANK[s])},
)
"""The lowest translation status a render admits (machine and draft rank alike)."""

Lexicon = StrEnum("Lexicon", {name: name for name in PINNED_LEXICONS})  # type: ignore[misc]
"""A pinned external lexicon (`polyprobe lexicon fetch|verify NAME`)."""

PUSHABLE: tuple[str, ...] = tuple(s for s in STATUSES if s != "stale")
"""Statuses a review batch may hold: a stale translation's English changed, so it is
translated again before anyone reviews it."""


def plain(value: StrEnum | None) -> str | None:
    """An option's callback: the command gets the choice's string, not the Enum member (whose
    repr would show in the library's messages as <Suite.sos: 'sos'>)."""
    return None if value is None else value.value

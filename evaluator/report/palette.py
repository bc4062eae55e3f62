"""The report's colours and locale names, in one place so every plot and table agrees: a locale,
a standing or a gender variant has the same colour in every figure of every report.

A locale is shown as its release describes it: lexicons/locales.yaml gives each locale its colour
and HTML language tag (``report``) and its native name; the release manifest carries them, with the
locale's place in that file, into run.json, and the report makes the runs' descriptions current
with :func:`release_locales` while it draws. The colours there are Paul Tol's muted qualitative
scheme (distinguishable with colour-vision deficiencies); the two Arabic varieties get
neighbouring greens on purpose. A locale no run's release describes (a release from before every
locale had a report style) is drawn in grey under its code."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class LocaleInfo:
    """A locale as reports show it (from its release's description)."""

    code: str
    name: str
    native: str
    direction: str
    color: str
    lang: str = ""
    """The HTML language tag (empty: the code)."""


UNKNOWN_LOCALE_COLOR = "#777777"

_RELEASE_LOCALES: ContextVar[Mapping[str, LocaleInfo]] = ContextVar(
    "release_locales", default=MappingProxyType({})
)


@contextmanager
def release_locales(infos: Mapping[str, LocaleInfo]) -> Iterator[None]:
    """While drawing a report: the locales its runs' releases describe, in the order given (the
    order of lexicons/locales.yaml)."""
    token = _RELEASE_LOCALES.set(dict(infos))
    try:
        yield
    finally:
        _RELEASE_LOCALES.reset(token)


def locale_info(code: str) -> LocaleInfo | None:
    """What the runs' releases say of ``code`` (None: nothing)."""
    return _RELEASE_LOCALES.get().get(code)


STANDING_COLORS: dict[str, str] = {
    "marginalized": "#CC3311",
    "dominant": "#0077BB",
    "none": "#AAAAAA",
}
STANDING_ORDER: tuple[str, ...] = ("marginalized", "dominant", "none")

VARIANT_COLORS: dict[str, str] = {"f": "#EE7733", "m": "#009988", "n": "#7F7F7F"}
VARIANT_NAMES: dict[str, str] = {"f": "female", "m": "male", "n": "non-binary / person"}

CONDITION_COLORS: dict[str, str] = {"ambig": "#BBBBBB", "disambig": "#4D4D4D"}
INSTRUCTION_HATCH: dict[str, str] = {"native": "", "en": "///"}

RUN_COLORS: tuple[str, ...] = ("#4D4D4D", "#E7298A", "#1B9E77", "#7570B3", "#D95F02", "#66A61E", "#E6AB02")
"""Comparisons: one colour per run, in the order the runs were given."""

BETTER = "#1A9850"
WORSE = "#D73027"
NEUTRAL = "#777777"
"""Change between runs: towards less bias (or better accuracy) / towards more / none."""

MISSING = "#EEEEEE"

FONT_STACK: tuple[str, ...] = (
    "Noto Sans",
    "Noto Sans Arabic",
    "Noto Sans Hebrew",
    "Noto Sans CJK SC",
    "DejaVu Sans",
)
"""Latin first, then the scripts of the other locales; DejaVu (bundled with matplotlib) last."""

CSS_FONT_STACK = ", ".join(f'"{name}"' for name in FONT_STACK) + ", sans-serif"


def locale_order(codes: Iterable[str]) -> list[str]:
    """The given locale codes in the order the runs' releases describe them (that of
    lexicons/locales.yaml); codes no release describes last, sorted."""
    present = {str(c) for c in codes}
    known = [code for code in _RELEASE_LOCALES.get() if code in present]
    return known + sorted(present - set(known))


def locale_color(code: str) -> str:
    info = locale_info(code)
    return info.color if info else UNKNOWN_LOCALE_COLOR


def locale_label(code: str, *, multiline: bool = False) -> str:
    """`ar · العربية الفصحى`: the code for the reader of a paper, the native name for everyone else."""
    info = locale_info(code)
    if info is None:
        return code
    if multiline:
        return code + "\n" + "\n".join(textwrap.wrap(info.native, 12))
    return f"{code} · {info.native}"


def ink(color: str) -> str:
    """A colour dark enough for text on white: light palette colours (he, es) are darkened."""
    r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    luminance = 0.299 * r + 0.587 * g + 0.114 * b
    if luminance < 0.55:
        return color
    factor = 0.55 / luminance
    return "#" + "".join(f"{round(v * factor * 255):02X}" for v in (r, g, b))


def run_color(index: int) -> str:
    return RUN_COLORS[index % len(RUN_COLORS)]


def standing_color(standing: str | None) -> str:
    return STANDING_COLORS.get(standing or "none", STANDING_COLORS["none"])

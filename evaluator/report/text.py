"""Text in plots: which fonts matplotlib may use, and how right-to-left labels are drawn.

The SVG plots keep text as text in logical order, so the browser shapes Arabic and orders
Hebrew and Arabic right to left. For the PNG plots it depends on matplotlib: from 3.11 its text
layout goes through libraqm, which shapes and reorders by itself (and pre-shaped text would be
reversed a second time); before that matplotlib does neither, so labels are drawn from visually
ordered, reshaped strings (``arabic-reshaper`` + ``python-bidi``). Without those packages PNG
labels stay in logical order (legible letters, wrong order) rather than failing the report."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from evaluator.report.palette import FONT_STACK

TextFn = Callable[[str], str]
"""What every plot passes its labels through: identity for SVG, :func:`visual` for PNG."""

_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_ARABIC = re.compile("[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff]")


def logical(text: str) -> str:
    return text


def visual(text: str) -> str:
    """The string as it must be drawn by a renderer that does no shaping or bidi reordering."""
    if not _RTL.search(text):
        return text
    shape, order = _shapers()
    return "\n".join(order(shape(line)) if _RTL.search(line) else line for line in text.split("\n"))


@cache
def matplotlib_shapes() -> bool:
    """Whether matplotlib lays text out with libraqm (shaping and bidi reordering included)."""
    from matplotlib import ft2font

    return bool(getattr(ft2font, "__libraqm_version__", ""))


def png_text() -> TextFn:
    """The text function for PNG output."""
    return logical if matplotlib_shapes() else visual


@cache
def _shapers() -> tuple[TextFn, TextFn]:
    try:
        import arabic_reshaper
        from bidi import get_display
    except ImportError:  # the eval extra is not installed: logical order is still legible
        return logical, logical

    def shape(line: str) -> str:
        return str(arabic_reshaper.reshape(line)) if _ARABIC.search(line) else line

    def order(line: str) -> str:
        return str(get_display(line))

    return shape, order


@cache
def font_families() -> tuple[str, ...]:
    """The report's font stack restricted to fonts matplotlib can find (it warns on each missing
    family otherwise); DejaVu Sans, bundled with matplotlib, is always there. A family that
    matplotlib's font cache does not list (a cache built before the fonts were installed) is
    looked for on the system and registered, so Hebrew, Arabic and Chinese keep their glyphs."""
    from matplotlib import font_manager

    available = {entry.name for entry in font_manager.fontManager.ttflist}
    missing = [name for name in FONT_STACK if name not in available]
    if missing:
        for file in font_files(missing, font_manager.findSystemFonts()):
            try:
                font_manager.fontManager.addfont(file)
            except (OSError, RuntimeError, ValueError):  # unreadable or not a font: leave it out
                continue
        available = {entry.name for entry in font_manager.fontManager.ttflist}
    found = tuple(name for name in FONT_STACK if name in available)
    return found or ("DejaVu Sans",)


def font_files(families: Iterable[str], files: Iterable[str]) -> list[str]:
    """The files that may hold ``families``, by the fonts' file naming: NotoSansArabic-Bold.ttf
    for "Noto Sans Arabic"; for "Noto Sans CJK SC" also NotoSansCJKsc-Regular.otf and the
    collection NotoSansCJK-Regular.ttc, which holds SC among its faces."""
    names = {family.replace(" ", "").lower() for family in families}
    collections = {family.rsplit(" ", 1)[0].replace(" ", "").lower() for family in families}
    chosen = []
    for file in sorted(files):
        path = Path(file)
        name = path.stem.split("-")[0].lower()
        if name in names or (path.suffix.lower() == ".ttc" and name in collections):
            chosen.append(file)
    return chosen


def wrap(text: str, width: int = 28) -> str:
    """Long group and category names on several lines, so tick labels never run into the plot."""
    if len(text) <= width:
        return text
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=True))


def is_rtl(text: str) -> bool:
    return bool(_RTL.search(text))

"""Figures to files: the SVG keeps its text as text (the browser shapes Arabic and orders
Hebrew/Arabic right to left); the PNG is drawn by Agg, from the same figure when matplotlib
shapes text itself (libraqm, 3.11+), else from a second drawing with visually ordered, reshaped
labels. Output is deterministic: fixed SVG id salt, no dates in the metadata."""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from evaluator.report.document import Plot
from evaluator.report.text import TextFn, font_families, logical, png_text
from toolkit.core.fileio import write_bytes_atomic, write_text_atomic

matplotlib.use("Agg")  # no display, ever: the report is written by CI and over SSH

Draw = Callable[[TextFn], Figure]
"""A plot: builds its figure, passing every label through the given text function."""

PNG_DPI = 110


def _rc() -> dict[Any, Any]:
    return {
        "svg.fonttype": "none",
        "svg.hashsalt": "polyprobe-report",
        "font.family": list(font_families()),
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.titleweight": "bold",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.unicode_minus": True,
    }


def _draw(draw: Draw, text: TextFn) -> Figure:
    with matplotlib.rc_context(_rc()):
        return draw(text)


def _save(figure: Figure, fmt: str) -> bytes:
    buffer = io.BytesIO()
    with matplotlib.rc_context(_rc()), warnings.catch_warnings():
        # a font without a glyph falls back to the next one; matplotlib still warns per glyph
        warnings.filterwarnings("ignore", message=r"Glyph .* missing from")
        warnings.filterwarnings("ignore", message=r".*tight_layout.*")
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, dpi=PNG_DPI, metadata=metadata)
    return buffer.getvalue()


def render_plot(draw: Draw, name: str, caption: str, out: Path) -> Plot:
    """Write plots/<name>.svg and plots/<name>.png; return the plot with its SVG for inlining."""
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    figure = _draw(draw, logical)
    svg_bytes = _save(figure, "svg")
    text = png_text()
    if text is logical:
        figure.set_layout_engine("none")  # keep the layout the SVG got: one layout pass, not two
    else:
        figure = _draw(draw, text)
    png_bytes = _save(figure, "png")
    write_bytes_atomic(plots / f"{name}.svg", svg_bytes)
    write_bytes_atomic(plots / f"{name}.png", png_bytes)
    return Plot(
        name=name,
        caption=caption,
        svg=inline_svg(svg_bytes.decode("utf-8"), name),
        files=(f"plots/{name}.png", f"plots/{name}.svg"),
    )


_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^")]+)')


def inline_svg(svg: str, prefix: str) -> str:
    """The <svg> element alone (no XML prolog or doctype), its ids prefixed: several matplotlib
    figures in one page would otherwise share ids such as the clip paths'."""
    start = svg.find("<svg")
    body = svg[start:] if start >= 0 else svg
    body = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', body)
    body = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", body)
    return body.replace("<svg ", f'<svg role="img" class="figure" data-plot="{prefix}" ', 1)


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, text)

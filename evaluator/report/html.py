"""The report as one self-contained HTML page: inline CSS, plots as inline SVG (their text stays
text, so the browser shapes Arabic and lays out Hebrew and Arabic right to left with the Noto
font stack), no JavaScript, nothing fetched from the network."""

from __future__ import annotations

from html import escape

from evaluator.report.document import (
    Block,
    Cell,
    Delta,
    Document,
    Locale,
    Note,
    Plot,
    Problems,
    PValue,
    Section,
    Signatures,
    Table,
    fmt_cell,
)
from evaluator.report.palette import BETTER, CSS_FONT_STACK, NEUTRAL, WORSE, locale_color, locale_info

CSS = f"""
:root {{ --better: {BETTER}; --worse: {WORSE}; --neutral: {NEUTRAL}; }}
* {{ box-sizing: border-box; }}
body {{ font-family: {CSS_FONT_STACK}; color: #1a1a1a; background: #ffffff; margin: 0;
  line-height: 1.45; font-size: 15px; }}
main {{ max-width: 1280px; margin: 0 auto; padding: 1.5rem 2rem 4rem; }}
h1 {{ font-size: 1.7rem; margin: 0 0 .3rem; }}
h2 {{ font-size: 1.35rem; margin: 2.6rem 0 .6rem; padding-top: .6rem; border-top: 3px solid #333; }}
h3 {{ font-size: 1.1rem; margin: 1.8rem 0 .4rem; }}
h4 {{ font-size: .95rem; margin: 1.2rem 0 .3rem; }}
nav ol {{ columns: 2; padding-left: 1.2rem; }}
.intro {{ color: #333; max-width: 60rem; }}
.figure text {{ font-family: {CSS_FONT_STACK} !important; }}
figure {{ margin: 1rem 0 1.4rem; }}
figure .plot {{ overflow-x: auto; }}
figure svg {{ max-width: 100%; height: auto; display: block; }}
figcaption {{ font-size: .85rem; color: #444; max-width: 60rem; }}
table.data {{ border-collapse: collapse; font-size: .82rem; margin: .3rem 0 .4rem; }}
table.data th, table.data td {{ padding: .18rem .55rem; border-bottom: 1px solid #e2e2e2; }}
table.data th {{ text-align: left; background: #f4f4f4; position: sticky; top: 0; }}
table.data td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
.table-wrap {{ overflow-x: auto; max-width: 100%; }}
.table-note {{ font-size: .8rem; color: #555; margin: 0 0 1rem; max-width: 60rem; }}
.swatch {{ display: inline-block; width: .8em; height: .8em; border-radius: 2px;
  margin-right: .35em; vertical-align: -.05em; }}
.loc bdi {{ color: #555; margin-left: .3em; }}
.delta.better {{ color: var(--better); font-weight: 600; }}
.delta.worse {{ color: var(--worse); font-weight: 600; }}
.delta.same, .delta.none {{ color: var(--neutral); }}
.sig {{ font-weight: 600; }}
.note {{ background: #f2f6fb; border-left: 4px solid #5b8bd0; padding: .45rem .8rem; margin: .6rem 0;
  font-size: .9rem; }}
.note.warning {{ background: #fdf5e6; border-left-color: #d08b00; }}
details {{ margin: .4rem 0 1rem; }}
summary {{ cursor: pointer; font-weight: 600; font-size: .9rem; }}
.problems li {{ font-size: .8rem; color: #555; }}
.signatures code, code.sig-text {{ font-size: .75rem; word-break: break-all; }}
.signatures li {{ margin-bottom: .3rem; }}
.legend span.item {{ display: inline-block; margin: 0 1.1rem .3rem 0; font-size: .85rem; }}
.badge {{ font-size: .72rem; background: #d08b00; color: white; border-radius: 3px; padding: 0 .35em; }}
"""


def _locale(code: str) -> str:
    info = locale_info(code)
    swatch = f'<span class="swatch" style="background:{locale_color(code)}"></span>'
    if info is None:
        return f'<span class="loc">{swatch}{escape(code)}</span>'
    return (
        f'<span class="loc">{swatch}{escape(code)}'
        f'<bdi lang="{escape(info.lang or code)}" dir="{info.direction}">{escape(info.native)}</bdi></span>'
    )


def _cell(cell: Cell, digits: int) -> str:
    if isinstance(cell, Locale):
        return f"<td>{_locale(cell.code)}</td>"
    if isinstance(cell, Delta):
        return (
            f'<td class="num"><span class="delta {cell.verdict}">{escape(fmt_cell(cell, digits))}</span></td>'
        )
    if isinstance(cell, PValue):
        significant = cell.value is not None and cell.value < 0.05
        text = escape(fmt_cell(cell, digits))
        return f'<td class="num">{f"<span class=sig>{text}</span>" if significant else text}</td>'
    if cell is None or isinstance(cell, int | float):
        return f'<td class="num">{escape(fmt_cell(cell, digits))}</td>'
    return f'<td dir="auto">{escape(str(cell))}</td>'


def table(block: Table) -> str:
    head = "".join(f'<th dir="auto">{escape(c)}</th>' for c in block.columns)
    if block.rows:
        body = "".join(
            "<tr>" + "".join(_cell(cell, block.digits) for cell in row) + "</tr>" for row in block.rows
        )
    else:
        body = f'<tr><td colspan="{len(block.columns)}">no values</td></tr>'
    html = f'<div class="table-wrap"><table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    note = f'<p class="table-note">{escape(block.note)}</p>' if block.note else ""
    if block.collapsed:
        return f"<details><summary>{escape(block.title)} ({len(block.rows)} rows)</summary>{html}{note}</details>"
    title = f"<h4>{escape(block.title)}</h4>" if block.title else ""
    return f"{title}{html}{note}"


def plot(block: Plot) -> str:
    links = " · ".join(
        f'<a href="{escape(path)}">{escape(path.rsplit(".", 1)[-1].upper())}</a>' for path in block.files
    )
    return (
        f'<figure id="{escape(block.name)}"><div class="plot">{block.svg}</div>'
        f"<figcaption>{escape(block.caption)} ({links})</figcaption></figure>"
    )


def render_block(block: Block) -> str:
    if isinstance(block, Table):
        return table(block)
    if isinstance(block, Plot):
        return plot(block)
    if isinstance(block, Note):
        return f'<p class="note {block.kind}">{escape(block.text)}</p>'
    if isinstance(block, Problems):
        items = "".join(f"<li><b>{escape(what)}</b>: {escape(why)}</li>" for what, why in block.items)
        return f"<details class=problems><summary>Not computed ({len(block.items)})</summary><ul>{items}</ul></details>"
    items = "".join(f"<li>{escape(label)}: <code>{escape(sig)}</code></li>" for label, sig in block.items)
    return f'<h4>Signatures</h4><ul class="signatures">{items}</ul>'


def section(sec: Section, level: int = 2, task: str = "") -> str:
    attributes = f' data-task="{escape(task)}"' if task else ""
    parts = [f'<section id="{escape(sec.anchor)}"{attributes}>', f"<h{level}>{escape(sec.title)}</h{level}>"]
    if sec.intro:
        parts.append(f'<p class="intro">{escape(sec.intro)}</p>')
    children = [section(child, min(level + 1, 4)) for child in sec.children]
    signatures = [b for b in sec.blocks if isinstance(b, Signatures)]
    parts += [render_block(b) for b in sec.blocks if not isinstance(b, Signatures)]
    parts += children
    parts += [render_block(b) for b in signatures]
    parts.append("</section>")
    return "\n".join(parts)


def render_html(doc: Document) -> str:
    toc = "".join(
        f'<li><a href="#{escape(s.anchor)}">{escape(s.title)}</a> ('
        + ", ".join(f'<a href="#{escape(c.anchor)}">{escape(c.title)}</a>' for c in s.children)
        + ")</li>"
        for s in doc.sections
    )
    legend = "".join(
        f'<span class="item"><span class="swatch" style="background:{color}"></span>'
        f'<span dir="auto">{escape(name)}</span> <small>({escape(what)})</small></span>'
        for what, name, color in doc.legend
    )
    body = "\n".join(section(s, task=s.anchor) for s in doc.sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(doc.title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<header><h1>{escape(doc.title)}</h1>
<p class="intro">Bias metrics of {len(doc.runs.rows)} run(s). Every number comes with the signature of the run that
produced it; the plots are also in <code>plots/</code> as PNG and SVG, the tables in <code>summary.md</code>.</p></header>
<nav><h2 id="contents">Contents</h2><ol><li><a href="#runs">Runs</a></li>{toc}</ol></nav>
<section id="runs"><h2>Runs</h2>{table(doc.runs)}
<div class="legend">{legend}</div></section>
{body}
</main>
</body>
</html>
"""

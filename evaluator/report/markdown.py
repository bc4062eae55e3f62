"""The report's tables as Markdown (summary.md), for pasting into a paper or an issue: the same
cells and digits as the HTML page, each task followed by the signatures of its runs."""

from __future__ import annotations

from evaluator.report.document import (
    Block,
    Cell,
    Delta,
    Document,
    Note,
    Plot,
    Problems,
    PValue,
    Section,
    Signatures,
    Table,
    fmt_cell,
)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _numeric(cell: Cell) -> bool:
    """Right-aligned in the table: numbers, p-values, changes, and the dash of a missing number."""
    return cell is None or (isinstance(cell, int | float | Delta | PValue) and not isinstance(cell, bool))


def table(block: Table) -> str:
    lines = [f"**{_escape(block.title)}**", ""] if block.title else []
    numeric = [any(_numeric(row[i]) for row in block.rows if i < len(row)) for i in range(len(block.columns))]
    lines.append("| " + " | ".join(_escape(c) for c in block.columns) + " |")
    lines.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for row in block.rows:
        lines.append("| " + " | ".join(_escape(fmt_cell(cell, block.digits)) for cell in row) + " |")
    if not block.rows:
        lines.append("| " + " | ".join(["—"] * len(block.columns)) + " |")
    if block.note:
        lines += ["", f"_{_escape(block.note)}_"]
    return "\n".join(lines)


def render_block(block: Block) -> str:
    if isinstance(block, Table):
        return table(block)
    if isinstance(block, Plot):
        return f"![{_escape(block.caption)}]({block.files[0]})"
    if isinstance(block, Note):
        return f"> {block.text}"
    if isinstance(block, Problems):
        return "Not computed:\n\n" + "\n".join(f"- {what}: {why}" for what, why in block.items)
    assert isinstance(block, Signatures)
    return "Signatures:\n\n" + "\n".join(f"- {label}: `{sig}`" for label, sig in block.items)


def section(sec: Section, level: int = 2) -> str:
    parts = [f"{'#' * level} {sec.title}"]
    if sec.intro:
        parts.append(sec.intro)
    signatures = [b for b in sec.blocks if isinstance(b, Signatures)]
    parts += [render_block(b) for b in sec.blocks if not isinstance(b, Signatures)]
    parts += [section(child, min(level + 1, 6)) for child in sec.children]
    parts += [render_block(b) for b in signatures]
    return "\n\n".join(parts)


def render_markdown(doc: Document) -> str:
    parts = [f"# {doc.title}", "## Runs", table(doc.runs)]
    parts += [section(s) for s in doc.sections]
    return "\n\n".join(parts) + "\n"

"""`polyprobe eval report`: every run checked first, then one section per task (each run's
plots and tables, a comparison when a task has several runs), written as report.html,
summary.md and plots/*.png|svg. The same runs give the same files."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from evaluator.metrics.errors import MetricInputError
from evaluator.report.compare import compare_section
from evaluator.report.document import Cell, Document, Locale, Section, Signatures, Table
from evaluator.report.figures import write_text
from evaluator.report.html import render_html
from evaluator.report.markdown import render_markdown
from evaluator.report.palette import (
    STANDING_COLORS,
    VARIANT_COLORS,
    VARIANT_NAMES,
    LocaleInfo,
    locale_info,
    locale_order,
    release_locales,
)
from evaluator.report.runs import METRICS, PREDICTIONS, Run, RunFolderError, load_runs
from evaluator.report.sections.common import SectionContext
from evaluator.run_folder import RUN
from evaluator.tasks import TASKS
from evaluator.tasks.descriptor import load_attribute
from toolkit.core.errors import InputError, PolyprobeError
from toolkit.release.sealed import refuse_inside_release

HTML = "report.html"
MARKDOWN = "summary.md"


SectionBuilder = Callable[[Run, int, SectionContext], Section]
"""A task's report section (its descriptor's ``section``)."""


@dataclass
class ReportResult:
    html: Path
    markdown: Path
    plots: list[Path]
    tasks: list[str]


def _run_section(run: Run, index: int, ctx: SectionContext) -> Section:
    try:
        builder: SectionBuilder = load_attribute(TASKS[run.task].section)  # imports matplotlib
        return builder(run, index, ctx)
    except PolyprobeError:
        raise
    except (
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        MetricInputError,
        pl.exceptions.PolarsError,
    ) as exc:
        # a file that passed the shape checks but holds values of the wrong kind
        raise RunFolderError(
            run.path,
            f"{METRICS} / {PREDICTIONS}",
            f"unexpected content for a {run.task} run ({type(exc).__name__}: {exc})",
        ) from None


def _locale_first(section: Section) -> None:
    """Rows of every table whose first column is a locale, in the release's locale order (the
    metrics list them alphabetically); the order within a locale is kept."""
    for block in section.blocks:
        if not isinstance(block, Table) or not block.rows:
            continue
        codes = [row[0].code if isinstance(row[0], Locale) else None for row in block.rows]
        if None in codes:
            continue
        order = {code: i for i, code in enumerate(locale_order(c for c in codes if c))}
        ranked = sorted(zip(codes, block.rows, strict=True), key=lambda pair: order[pair[0] or ""])
        block.rows[:] = [row for _, row in ranked]
    for child in section.children:
        _locale_first(child)


def _runs_table(runs: list[Run]) -> Table:
    rows: list[list[Cell]] = []
    for run in runs:
        locales = locale_order(run.locales)
        rows.append(
            [
                run.label,
                run.task,
                run.model,
                run.revision[:23] if run.revision else "—",
                run.info.model.kind,
                run.release + (" (preview)" if run.preview else ""),
                " ".join(locales),
                str(run.path),
            ]
        )
    return Table("", ["label", "task", "model", "revision", "kind", "release", "locales", "folder"], rows)


def _legend(runs: list[Run]) -> list[tuple[str, str, str]]:
    present = locale_order({loc for run in runs for loc in run.locales})
    infos = [info for info in (locale_info(code) for code in present) if info is not None]
    items = [("locale", f"{info.code} · {info.native}", info.color) for info in infos]
    if any("standing" in TASKS[run.task].legend for run in runs):
        items += [("standing", name, color) for name, color in STANDING_COLORS.items()]
    if any("gender" in TASKS[run.task].legend for run in runs):
        items += [("gender", VARIANT_NAMES[v], VARIANT_COLORS[v]) for v in ("f", "m", "n")]
    return items


def build_report(folders: Sequence[Path], out: Path, labels: Sequence[str] | None = None) -> ReportResult:
    runs = load_runs(folders, labels)
    with release_locales(described_locales(runs)):
        return _build(runs, out)


def described_locales(runs: Sequence[Run]) -> dict[str, LocaleInfo]:
    """The locales the runs' releases describe with a report style, as the palette shows them, in
    the order of lexicons/locales.yaml (``position``); the first run that describes a locale
    decides."""
    described: dict[str, tuple[int | None, LocaleInfo]] = {}
    for run in runs:
        for code, entry in run.info.release.locales.items():
            if entry.colour and code not in described:
                described[code] = (
                    entry.position,
                    LocaleInfo(
                        code,
                        entry.name,
                        entry.native_name or entry.name,
                        entry.direction,
                        entry.colour,
                        entry.html_lang or code,
                    ),
                )
    first_seen = {code: i for i, code in enumerate(described)}

    def place(code: str) -> tuple[bool, int, int]:
        position = described[code][0]
        return (position is None, position or 0, first_seen[code])

    return {code: described[code][1] for code in sorted(described, key=place)}


def _build(runs: list[Run], out: Path) -> ReportResult:
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; give a folder for the report")
    refuse_inside_release(out)
    if (out / RUN).is_file():
        raise InputError(f"--out {out} is a run folder; a report there would mix with the run's files")
    plots_dir = out / "plots"
    if plots_dir.is_dir():  # plots of an earlier report over other runs would linger
        for old in sorted(plots_dir.iterdir()):
            if old.is_file() and old.suffix in (".png", ".svg"):
                old.unlink()
    ctx = SectionContext(out)
    sections = []
    for task in TASKS.values():
        indexed = [(i, run) for i, run in enumerate(runs) if run.task == task.name]
        if not indexed:
            continue
        children = [_run_section(run, i, ctx) for i, run in indexed]
        if len(indexed) > 1:
            children.append(compare_section(task.name, [run for _, run in indexed], ctx))
        sections.append(
            Section(
                anchor=task.name,
                title=task.title,
                intro=task.intro,
                blocks=[Signatures([(run.label, run.signature) for _, run in indexed])],
                children=children,
            )
        )
    for section in sections:
        _locale_first(section)
    document = Document(
        title="polyprobe report", runs=_runs_table(runs), sections=sections, legend=_legend(runs)
    )
    html_path, md_path = out / HTML, out / MARKDOWN
    write_text(html_path, render_html(document))
    write_text(md_path, render_markdown(document))
    return ReportResult(
        html=html_path,
        markdown=md_path,
        plots=sorted(plots_dir.glob("*.*")) if plots_dir.is_dir() else [],
        tasks=[s.anchor for s in sections],
    )

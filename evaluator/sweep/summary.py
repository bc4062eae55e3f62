"""The sweep's summary: a table of jobs (status, wall time, the task's main figure, folder or
error) as summary.json and summary.md, and the comparison report over every finished run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evaluator.results.base import TaskMetrics
from evaluator.tasks import descriptor
from toolkit.core.fileio import write_text_atomic

Status = Literal["done", "skipped", "failed"]


def headline(task: str, metrics: TaskMetrics) -> str:
    """`SOS 0.412 (de 0.380, en 0.444)`: the task's main figure (its descriptor's headline: a
    table of its measures), averaged per locale, then over locales; the mean and each locale's."""
    main = descriptor(task).headline
    per_locale: dict[str, list[float]] = {}
    for m in metrics.measures():
        if m.table != main.table or m.value is None or main.measure not in (None, m.key[-1]):
            continue
        per_locale.setdefault(m.key[0], []).append(m.value)
    name = main.name
    if not per_locale:
        return f"{name} —"
    means = {loc: sum(values) / len(values) for loc, values in sorted(per_locale.items())}
    overall = sum(means.values()) / len(means)
    if len(means) == 1:
        return f"{name} {overall:.3f}"
    return f"{name} {overall:.3f} (" + ", ".join(f"{loc} {v:.3f}" for loc, v in means.items()) + ")"


@dataclass
class Outcome:
    job: str
    model: str
    task: str
    seed: int
    status: Status
    seconds: float | None = None
    figure: str = ""
    folder: str | None = None
    signature: str | None = None
    error: str | None = None
    note: str | None = None
    """E.g. why a finished job ran again, or that its worker was restarted."""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_markdown(outcomes: list[Outcome], title: str) -> str:
    failed = [o for o in outcomes if o.status == "failed"]
    lines = [
        f"# {title}",
        "",
        f"{len(outcomes)} jobs: {sum(o.status == 'done' for o in outcomes)} run, "
        f"{sum(o.status == 'skipped' for o in outcomes)} finished before (skipped), {len(failed)} failed.",
        "",
        "| job | model | task | seed | status | wall s | main figure | folder or error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        seconds = f"{o.seconds:.1f}" if o.seconds is not None else "—"
        where = o.error if o.status == "failed" else o.folder
        if o.note:
            where = f"{where} ({o.note})"
        lines.append(
            f"| {o.job} | {o.model} | {o.task} | {o.seed} | {o.status} | {seconds} | {_cell(o.figure)} | {_cell(where or '')} |"
        )
    return "\n".join(lines) + "\n"


def write_summary(out: Path, outcomes: list[Outcome], title: str) -> tuple[Path, Path]:
    json_path, md_path = out / "summary.json", out / "summary.md"
    write_text_atomic(
        json_path,
        json.dumps({"jobs": [o.as_dict() for o in outcomes]}, ensure_ascii=False, indent=2, sort_keys=True)
        + "\n",
    )
    write_text_atomic(md_path, summary_markdown(outcomes, title))
    return json_path, md_path

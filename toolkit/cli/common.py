"""What every command shares: the catalog root option, consoles, progress and output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolkit.errors import Problem
from toolkit.project import Project
from toolkit.store import SKIPPED

err_console = Console(stderr=True, soft_wrap=True)
out_console = Console(soft_wrap=True)

Root = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Catalog root (templates/, lexicons/, translations/). Default: $POLYPROBE_ROOT or the nearest checkout.",
        file_okay=False,
        dir_okay=True,
        exists=True,
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


def project_at(root: Path | None) -> Project:
    return Project.at(root) if root is not None else Project.find()


def progress() -> Progress:
    """A progress bar on stderr that disappears when done (stdout stays clean for data)."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def warn_skipped(problems: list[Problem]) -> None:
    """Reports read the translation store leniently: say which lines they could not use."""
    skipped = sorted({p for p in problems if p.message.endswith(SKIPPED)})
    for problem in skipped:
        err_console.print(f"warning: {problem}", highlight=False, markup=False, soft_wrap=True)
    if skipped:
        err_console.print(
            f"warning: {len(skipped)} store line(s) not counted; `polyprobe translations repair` sets them "
            "aside and makes the files whole",
            highlight=False,
            markup=False,
        )

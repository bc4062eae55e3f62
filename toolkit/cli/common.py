"""What every command shares: the catalog root option, consoles, progress and output."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolkit.catalog.loader import Catalog
from toolkit.core.errors import InputError, Problem, ordered
from toolkit.core.project import Project
from toolkit.store.files import SKIPPED

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


def project_at(root: Path | None, writes: bool = False, announce: bool = False) -> Project:
    """The catalog a command works on. A command that writes says which root it uses
    (``announce``); one that writes into the catalog (``writes``) also refuses, outside a
    checkout, to write into polyprobe's own install unless --root (or $POLYPROBE_ROOT) names it."""
    project = Project.at(root) if root is not None else Project.find()
    if writes or announce:
        if writes and project.is_install_fallback:
            raise InputError(
                f"no catalog in {Path.cwd()} or above it; the only one found is polyprobe's own "
                f"install at {project.root}, which is not written to unless named: run inside your "
                f"checkout, or pass --root {project.root}"
            )
        err_console.print(
            f"catalog: {project.root.resolve()} ({project.found_by})", highlight=False, markup=False
        )
    return project


def warn_problems(catalog: Catalog) -> None:
    """A report over a catalog with problems still runs, but says what it may leave out: the
    problems of whole files (an unreadable suite, an empty list) one by one, the rest counted."""
    if not catalog.problems:
        return
    problems = ordered(catalog.problems)
    whole = [p for p in problems if p.whole_file or p.file.endswith("/suite.yaml")]
    for problem in whole[:10]:
        err_console.print(f"warning: {problem}", highlight=False, markup=False, soft_wrap=True)
    err_console.print(
        f"warning: {len(problems)} problem(s) in the catalog; this report leaves out what they affect "
        "(`polyprobe catalog validate` lists them)",
        highlight=False,
        markup=False,
    )


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

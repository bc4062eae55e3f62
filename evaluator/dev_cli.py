"""`polyprobe dev`: tools for people who extend polyprobe, registered with the polyprobe command
through the `polyprobe.cli` entry-point group like `polyprobe eval`. `dev new-task` writes a new
task's module (evaluator.tasks.scaffold) and says which entry point offers it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evaluator.tasks.scaffold import Scaffold

app = typer.Typer(help="Start an extension of polyprobe (a new task).", no_args_is_help=True)


@app.callback()
def dev() -> None:
    """Keeps `dev` a group of commands, though it has one so far (`polyprobe dev new-task`)."""


def package_of(folder: Path) -> str:
    """The dotted package of ``folder`` seen from the current folder ("" when it is the current
    folder or not importable from it), for the entry point's "module:attribute"."""
    try:
        parts = folder.resolve().relative_to(Path.cwd().resolve()).parts
    except ValueError:
        return ""
    return ".".join(parts) if all(part.isidentifier() for part in parts) else ""


@app.command("new-task")
def new_task_command(
    name: Annotated[str, typer.Argument(help="The task's name: lower-case words joined by dashes.")],
    suite: Annotated[
        str, typer.Option("--suite", help="The release suite it reads (its rows need a `text`).")
    ] = "sentiment",
    out: Annotated[
        Path, typer.Option("--out", help="The folder the module is written in.", file_okay=False)
    ] = Path("."),
) -> None:
    """Write a task's module, complete and working (each row's probability of a classifier label,
    averaged per locale), and print the pyproject.toml lines that offer it to `eval run`."""
    scaffold = Scaffold(name, suite)
    path = scaffold.write(out)
    typer.echo(f"wrote {path}", err=True)
    typer.echo("add to your package's pyproject.toml, and install it again (pip install -e .):", err=True)
    typer.echo(scaffold.entry_point(package_of(out)), nl=False)

"""What every command shares: the catalog root option, consoles, progress, tables, list options
and the help panels that group commands by who runs them."""

from __future__ import annotations

import codecs
import inspect
import io
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from toolkit.catalog.loader import Catalog
from toolkit.core.errors import InputError, Problem, ordered
from toolkit.core.progress import Step
from toolkit.core.project import Project
from toolkit.release.sealed import refuse_inside_release
from toolkit.store.files import SKIPPED

err_console = Console(stderr=True, soft_wrap=True)
out_console = Console(soft_wrap=True)

ANNOTATORS = "Annotators' work (review in Label Studio)"
MAINTAINERS = "Maintainers: catalog and translations"
RELEASES = "Maintainers: releases"
EVALUATORS = "Evaluators"
"""Help panels: `polyprobe --help` groups its commands by the people who run them."""

SEGMENT_IDS = (
    "Segment ids: TEMPLATE.VARIANT in template mode (gen-01.f; a template without variants is its id "
    "alone, e.g. ifm's instruction), ITEM.FIELD in sample mode (bbq: religion-0.context; fields "
    "context, question, ans0, ans1, ans2)."
)

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


def reflow(text: str) -> str:
    """Help written as a docstring, as rich help shows it well: each paragraph on one line (rich
    wraps it to the terminal), square brackets shown as they are, not read as markup."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return escape("\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs))


def tidy_help(app: typer.Typer) -> None:
    """Reflow the help of every command and group under ``app`` (see :func:`reflow`)."""
    if app.registered_callback is not None and app.registered_callback.callback is not None:
        doc = app.registered_callback.callback.__doc__
        if doc:
            app.registered_callback.help = reflow(doc)
    if isinstance(app.info.help, str):
        app.info.help = reflow(app.info.help)
    for command in app.registered_commands:
        doc = command.help if isinstance(command.help, str) else command.callback and command.callback.__doc__
        if doc:
            command.help = reflow(doc)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            tidy_help(group.typer_instance)


def not_one_of(value: str, choices: Iterable[str]) -> str:
    """The message for a value outside a choice set, worded as typer words its own."""
    return f"{value!r} is not one of {', '.join(repr(c) for c in choices)}."


def split_values(values: Iterable[str], choices: Iterable[str] | None = None) -> list[str]:
    """`--locales en,de --locales ar` -> [en, de, ar]: each value once, in the order given;
    an empty item or one outside ``choices`` is a usage error (exit 2)."""
    known = tuple(choices) if choices is not None else None
    items: list[str] = []
    for value in values:
        for item in (part.strip() for part in value.split(",")):
            if not item:
                raise typer.BadParameter(f"{value!r} has an empty item (a comma too many)")
            if known is not None and item not in known:
                raise typer.BadParameter(not_one_of(item, known))
            if item not in items:
                items.append(item)
    return items


def list_option(
    *decls: str,
    help: str,
    choices: Iterable[str] | None = None,
    metavar: str = "NAME",
    panel: str | None = None,
) -> Any:
    """A list option, the same everywhere: repeated (`--locales en --locales de`) or
    comma-separated (`--locales en,de`), or both; an unset option stays None (the default)."""
    known = tuple(str(c) for c in choices) if choices is not None else None

    def split(values: list[str] | None) -> list[str] | None:
        return split_values(values, known) if values else None

    listed = f" One or more of: {', '.join(known)}." if known is not None else ""
    return typer.Option(
        *decls,
        help=f"{help}{listed} Comma-separated or repeated.",
        callback=split,
        metavar=f"{metavar},...",
        rich_help_panel=panel,
    )


def project_at(root: Path | None, writes: bool = False, announce: bool = False) -> Project:
    """The catalog a command works on. A command that writes says which root it uses
    (``announce``); one that writes into the catalog (``writes``) also refuses, outside a
    checkout, to write into polyprobe's own install unless --root (or $POLYPROBE_ROOT) names it."""
    project = Project.at(root) if root is not None else Project.find()
    if writes:
        refuse_inside_release(project.root, "the catalog")
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


def say(text: str) -> None:
    """One plain line (or several) on stderr: no markup, no highlighting, no wrapping."""
    err_console.print(text, highlight=False, markup=False, soft_wrap=True)


def warn_problems(catalog: Catalog) -> None:
    """A report over a catalog with problems still runs, but says what it may leave out: the
    problems of whole files (an unreadable suite, an empty list) one by one, the rest counted."""
    if not catalog.problems:
        return
    problems = ordered(catalog.problems)
    whole = [p for p in problems if p.whole_file or p.file.endswith("/suite.yaml")]
    for problem in whole[:10]:
        say(f"warning: {problem}")
    say(
        f"warning: {len(problems)} problem(s) in the catalog; this report leaves out what they affect "
        "(`polyprobe catalog validate` lists them)"
    )


def progress(*extra: ProgressColumn) -> Progress:
    """A progress bar on stderr that disappears when done (stdout stays clean for data). Off
    when stderr is not a terminal: rich would draw nothing there but a blank line at the end."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        *extra,
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )


def table(title: str | None = None) -> Table:
    """A table that fits 80 columns where it can: one space between columns, a rule under the
    header, no frame; headers wrap at their spaces rather than being cut."""
    return Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, padding=0, title_justify="left")


def print_table(grid: Table, console: Console = out_console) -> None:
    """A table wrapped to the console's width; its title a line of its own above it, wrapped to
    the console rather than to a narrow table."""
    title, grid.title = grid.title, None
    if title:
        console.print(str(title), highlight=False, markup=False, soft_wrap=False)
    console.print(grid, soft_wrap=False)


def is_utf8(stream: Any) -> bool:
    """Whether a stream's encoding is UTF-8 (data and messages on one that is not are written around
    it: see write_data)."""
    return codecs.lookup(getattr(stream, "encoding", None) or "ascii").name == "utf-8"


def write_data(text: str) -> None:
    """Data on stdout (rows, --json) in UTF-8, like every file polyprobe writes, whatever the
    terminal's encoding (PYTHONIOENCODING=ascii would otherwise end in UnicodeEncodeError)."""
    out = sys.stdout
    if is_utf8(out) or not hasattr(out, "buffer"):
        out.write(text)
        return
    out.flush()
    out.buffer.write(text.encode("utf-8"))
    out.buffer.flush()


def tolerate_narrow_streams() -> None:
    """Messages and tables never fail on a stream that is not UTF-8: what its encoding lacks is
    written as backslash escapes (data goes through write_data, as UTF-8)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not is_utf8(stream):
            stream.reconfigure(errors="backslashreplace")


def print_json(data: Any) -> None:
    """Data for machines on stdout (--json): sorted keys, UTF-8 as it is, two-space indent."""
    write_data(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def warn_skipped(problems: list[Problem]) -> None:
    """Reports read the translation store leniently: say which lines they could not use."""
    skipped = sorted({p for p in problems if p.message.endswith(SKIPPED)})
    for problem in skipped:
        say(f"warning: {problem}")
    if skipped:
        say(
            f"warning: {len(skipped)} store line(s) not counted; `polyprobe translations repair` sets them "
            "aside and makes the files whole"
        )


def stepper(bar: Progress) -> Step:
    """One bar driven by a library's (what, done, total) callback: each stage its own total."""
    handle = bar.add_task("starting", total=None)

    def step(what: str, done: int, total: int) -> None:
        bar.update(handle, description=what, completed=done, total=total)

    return step

"""The `polyprobe` command line. Every error becomes `error:` lines on stderr and an exit code
here, and only here: a usage mistake (an unknown option, a value outside its choices) and the
library's own errors alike; 2 for bad input, 1 for a runtime failure, never a traceback for a
user's mistake. Other distributions (the evaluator) add command groups through the
`polyprobe.cli` entry-point group, so this package never imports them by name."""

from __future__ import annotations

import difflib
import re
import sys
from importlib.metadata import entry_points
from typing import Annotated

import typer

import toolkit
from toolkit.cli import (
    catalog_cmd,
    data_cmd,
    published_cmd,
    release_cmd,
    render_cmd,
    review_cmd,
    translate_cmd,
    translations_cmd,
    xliff_cmd,
)
from toolkit.cli.common import (
    ANNOTATORS,
    EVALUATORS,
    MAINTAINERS,
    RELEASES,
    err_console,
    tidy_help,
    tolerate_narrow_streams,
)
from toolkit.core.errors import CatalogError, PolyprobeError
from toolkit.core.fileio import describe_os_error
from toolkit.core.interrupts import Terminated, terminate_like_interrupt

app = typer.Typer(
    name="polyprobe",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        print(f"polyprobe {toolkit.__version__}")
        raise typer.Exit()


@app.callback()
def _polyprobe(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_version, help="Print polyprobe's version and exit."
        ),
    ] = False,
) -> None:
    """Measure social bias in language models across languages: build parallel probe datasets,
    manage their translation and review, freeze them into releases, score models on them."""


app.add_typer(catalog_cmd.app, name="catalog", rich_help_panel=MAINTAINERS)
app.add_typer(translations_cmd.app, name="translations", rich_help_panel=MAINTAINERS)
app.command("translate", rich_help_panel=MAINTAINERS)(translate_cmd.translate_command)
app.add_typer(translate_cmd.glossaries_app, name="glossaries", rich_help_panel=MAINTAINERS)
app.add_typer(xliff_cmd.app, name="xliff", rich_help_panel=MAINTAINERS)
app.add_typer(data_cmd.import_app, name="import", rich_help_panel=MAINTAINERS)
data_cmd.import_app.command("crows-pairs")(published_cmd.crows_pairs_command)
data_cmd.import_app.command("sos-study")(published_cmd.sos_study_command)
app.command("render", rich_help_panel=MAINTAINERS)(render_cmd.render_command)
app.command("quality", rich_help_panel=ANNOTATORS)(data_cmd.quality_command)
app.add_typer(review_cmd.app, name="review", rich_help_panel=ANNOTATORS)
app.add_typer(release_cmd.app, name="release", rich_help_panel=RELEASES)
app.add_typer(release_cmd.lexicon_app, name="lexicon", rich_help_panel=RELEASES)


def _plugins() -> None:
    for ep in sorted(entry_points(group="polyprobe.cli"), key=lambda e: e.name):
        sub = ep.load()
        if isinstance(sub, typer.Typer):  # a command group (polyprobe eval ...)
            app.add_typer(sub, name=ep.name, rich_help_panel=EVALUATORS)
        else:  # one command (polyprobe finetune)
            app.command(ep.name, rich_help_panel=EVALUATORS)(sub)


_plugins()
tidy_help(app)


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM ``exc`` comes from: typer turns KeyboardInterrupt into exit code 130
    (or Abort) on its own, so the interrupt is found in the exception's chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


INTERRUPTED = 130
TERMINATED = 143
"""128 + SIGTERM, as a shell reports a process that SIGTERM ended."""


def _stopped(exc: BaseException | None) -> int:
    """Say why the command stopped (Ctrl-C or SIGTERM) and return its exit code."""
    if isinstance(exc, Terminated):
        _say_error("terminated (SIGTERM)")
        return TERMINATED
    _say_error("interrupted")
    return INTERRUPTED


def _say_error(text: str) -> None:
    err_console.print(f"error: {text}", highlight=False, markup=False, soft_wrap=True)


_NOT_ONE_OF = re.compile(r"'(?P<value>[^']*)' is not one of (?P<choices>'.*')\.$")


def _usage_error(exc: typer.TyperException) -> int:
    """A usage mistake in the same form as every other error: `error:` and what is wrong (with
    the closest choice when a value is not one of them), then where the options are listed."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        return exc.exit_code  # the help has been printed already
    message = exc.format_message().replace("Value error, ", "")  # typer's wording for Enum/Literal
    found = _NOT_ONE_OF.search(message)
    if found:
        close = difflib.get_close_matches(found["value"], re.findall(r"'([^']*)'", found["choices"]), n=1)
        if close:
            message += f" Did you mean {close[0]!r}?"
    _say_error(message)
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        err_console.print(
            f"hint: `{ctx.command_path} --help` lists the options", highlight=False, markup=False
        )
    return exc.exit_code


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code. Usage mistakes and polyprobe's own errors print
    `error: ...` and exit with their code (2: bad input); an operating-system error (disk full,
    read-only, no permission) is one line and exit 1; Ctrl-C prints `interrupted` and exits 130,
    SIGTERM `terminated` and 143 (what was half-written has been removed by then). Never a
    traceback for any of them."""
    Terminated.received = False
    tolerate_narrow_streams()
    try:
        with terminate_like_interrupt():
            code = app(args=argv, prog_name="polyprobe", standalone_mode=False)
    except typer.TyperException as exc:
        return _usage_error(exc)
    except SystemExit as exc:
        if (stop := _interruption(exc)) is not None:
            return _stopped(stop)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except CatalogError as exc:
        for line in exc.lines():
            _say_error(line)
        _say_error(exc.summary())
        if exc.hint:
            err_console.print(f"hint: {exc.hint}", highlight=False, markup=False, soft_wrap=True)
        return exc.exit_code
    except PolyprobeError as exc:
        _say_error(str(exc))
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort) as exc:
        return _stopped(_interruption(exc))
    except OSError as exc:
        _say_error(describe_os_error(exc))
        return 1
    if code == INTERRUPTED:  # typer's answer to Ctrl-C (or SIGTERM) during a command
        return _stopped(Terminated() if Terminated.received else None)
    return code if isinstance(code, int) else 0


def entry() -> None:
    """The `polyprobe` console script: exits with main()'s exit code."""
    sys.exit(main())

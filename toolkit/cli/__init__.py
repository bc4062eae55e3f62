"""The `polyprobe` command line. Library errors become `error:` lines on stderr and exit
codes here, and only here: 2 for bad input, 1 for a runtime failure, never a traceback for
a user's mistake. Other distributions (the evaluator) add command groups through the
`polyprobe.cli` entry-point group, so this package never imports them by name."""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

import typer

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
from toolkit.cli.common import err_console
from toolkit.core.errors import CatalogError, PolyprobeError
from toolkit.core.fileio import describe_os_error

app = typer.Typer(
    name="polyprobe",
    help="Measure social bias in language models across languages.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(catalog_cmd.app, name="catalog")
app.add_typer(translations_cmd.app, name="translations")
app.add_typer(xliff_cmd.app, name="xliff")
app.add_typer(data_cmd.import_app, name="import")
data_cmd.import_app.command("crows-pairs")(published_cmd.crows_pairs_command)
data_cmd.import_app.command("sos-study")(published_cmd.sos_study_command)
app.add_typer(review_cmd.app, name="review")
app.add_typer(release_cmd.app, name="release")
app.add_typer(release_cmd.lexicon_app, name="lexicon")
app.add_typer(translate_cmd.glossaries_app, name="glossaries")
app.command("quality")(data_cmd.quality_command)
app.command("render")(render_cmd.render_command)
app.command("translate")(translate_cmd.translate_command)


def _plugins() -> None:
    for ep in sorted(entry_points(group="polyprobe.cli"), key=lambda e: e.name):
        sub = ep.load()
        app.add_typer(sub, name=ep.name)


_plugins()


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` comes from Ctrl-C: typer turns KeyboardInterrupt into exit code 130 on its
    own, so the interrupt is found in the exception's chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _say_error(text: str) -> None:
    err_console.print(f"error: {text}", highlight=False, markup=False, soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code. Usage errors are typer's (exit 2 with the usage);
    polyprobe's own errors print `error: ...` and exit with their code; an operating-system
    error (disk full, read-only, no permission) is one line and exit 1; Ctrl-C prints
    `interrupted` and exits 130 (what was half-written has been removed by then). Never a
    traceback for any of them."""
    try:
        app(args=argv, prog_name="polyprobe", standalone_mode=True)
    except SystemExit as exc:
        if _interrupted(exc):
            _say_error("interrupted")
            return 130
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
    except KeyboardInterrupt:
        _say_error("interrupted")
        return 130
    except OSError as exc:
        _say_error(describe_os_error(exc))
        return 1
    return 0


def entry() -> None:
    sys.exit(main())

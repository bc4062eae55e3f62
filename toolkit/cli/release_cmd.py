"""`polyprobe release build | verify | diff` and `polyprobe lexicon fetch | verify`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.catalog.lexicon_pins import fetch_hurtlex, load_pins, verify_hurtlex
from toolkit.cli.choices import Lexicon, Suite
from toolkit.cli.common import (
    JsonFlag,
    Root,
    list_option,
    out_console,
    print_json,
    progress,
    project_at,
    say,
    stepper,
)
from toolkit.core.errors import InputError
from toolkit.release import ReleaseInvalid, open_release, verify
from toolkit.release.build import BuildOptions, build_release
from toolkit.release.changelog import Changelog, diff_inputs, diff_samples

app = typer.Typer(help="Frozen, versioned, verifiable releases.", no_args_is_help=True)
lexicon_app = typer.Typer(
    help="Pinned external lexicons (HurtLex), fetched into a user cache.", no_args_is_help=True
)


@app.command("build")
def build_command(
    version: Annotated[
        str, typer.Argument(help="Semantic version, e.g. 0.1.0 or 0.1.0-preview.1 (with --preview).")
    ],
    preview: Annotated[
        bool, typer.Option("--preview", help="Admit translations that are not approved yet.")
    ] = False,
    suites: Annotated[
        list[str] | None,
        list_option("--suites", help="Suites to include (default: all).", choices=Suite, metavar="SUITE"),
    ] = None,
    locales: Annotated[
        list[str] | None,
        list_option("--locales", help="Locales to include, e.g. en,de,ar (default: all).", metavar="LOCALE"),
    ] = None,
    dist: Annotated[
        Path | None, typer.Option("--dist", help="Where releases live (default: dist/).", file_okay=False)
    ] = None,
    previous: Annotated[
        Path | None,
        typer.Option(
            "--previous",
            help="Release to write the changelog against (default: the latest older one in --dist).",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    root: Root = None,
) -> None:
    """Render every suite and locale into dist/polyprobe-VERSION/ with a manifest, a dataset card and a changelog.

    The whole catalog is validated first (every template, group, variant and locale); a stable
    release needs every included translation approved through review. A version that exists is
    never overwritten. The release format: docs/release-format.md."""
    project = project_at(root, writes=dist is None, announce=True)
    with progress() as bar:
        path = build_release(
            project,
            BuildOptions(
                version=version,
                preview=preview,
                suites=suites or None,
                locales=locales or None,
                dist=dist,
                previous=previous,
            ),
            progress=stepper(bar),
            log=say,
        )
    release = open_release(
        path, verify_files=False
    )  # just written and sealed: its files are not hashed again
    say(f"built {path}\n{release.signature}")


@app.command("verify")
def verify_command(
    folder: Annotated[
        Path, typer.Argument(help="A release folder (dist/polyprobe-VERSION).", exists=True, file_okay=False)
    ],
    json: JsonFlag = False,
) -> None:
    """Check every file's hash, schema, row count and content hash against the manifest."""
    problems = verify(folder, deep=True)
    if json:
        print_json({"ok": not problems, "differences": problems})
        if problems:
            raise typer.Exit(2)
        return
    if problems:
        raise ReleaseInvalid(folder, problems)
    say(f"ok: {folder} verifies ({open_release(folder, verify_files=False).signature})")  # checked above


@app.command("diff")
def diff_command(
    old: Annotated[Path, typer.Argument(help="The earlier release.", exists=True, file_okay=False)],
    new: Annotated[Path, typer.Argument(help="The later release.", exists=True, file_okay=False)],
    json: JsonFlag = False,
) -> None:
    """The changelog between any two releases."""
    a, b = open_release(old), open_release(new)
    log = Changelog(old=a.version, new=b.version, inputs=diff_inputs(a.manifest.inputs, b.manifest.inputs))
    keys = sorted({(s, loc) for r in (a, b) for s in r.suites() for loc in r.locales(s)})
    for suite, locale in keys:
        fa = a.scan(suite, locale).collect() if a.has(suite, locale) else None
        fb = b.scan(suite, locale).collect() if b.has(suite, locale) else None
        log.samples.append(diff_samples(suite, locale, fa, fb))
    if json:
        print_json(log.as_dict())
    else:
        out_console.print(log.markdown(), highlight=False, markup=False)


@lexicon_app.command("fetch")
def fetch_command(
    name: Annotated[Lexicon, typer.Argument(help="The lexicon.")],
    source: Annotated[
        Path | None,
        typer.Option(
            "--from", help="Import a local copy instead of downloading.", exists=True, file_okay=False
        ),
    ] = None,
    lang: Annotated[
        list[str] | None,
        list_option(
            "--lang", help="HurtLex languages, e.g. EN,DE,AR (default: every pinned one).", metavar="LANG"
        ),
    ] = None,
    root: Root = None,
) -> None:
    """Download (or import) the pinned lexicon into the user cache and check every sha256."""
    pins = load_pins(project_at(root, announce=True))
    installed = fetch_hurtlex(pins, lang or sorted(pins.sha256), source)
    for code, path in installed.items():
        say(f"{code}: {path} (sha256 ok)")


@lexicon_app.command("verify")
def lexicon_verify_command(
    name: Annotated[Lexicon | None, typer.Argument(help="The lexicon (default: hurtlex).")] = None,
    lang: Annotated[
        list[str] | None,
        list_option(
            "--lang", help="HurtLex languages, e.g. EN,DE,AR (default: every pinned one).", metavar="LANG"
        ),
    ] = None,
    root: Root = None,
    json: JsonFlag = False,
) -> None:
    """Check the cached lexicon files against their pins (exit 1 if one is missing, 2 if one differs)."""
    pins = load_pins(project_at(root))
    status = verify_hurtlex(pins)
    if lang:
        wanted = {code.upper() for code in lang}
        unknown = wanted - set(status)
        if unknown:
            raise InputError(
                f"HurtLex has no pin for {', '.join(sorted(unknown))}; pinned: {', '.join(status)}"
            )
        status = {code: state for code, state in status.items() if code in wanted}
    if json:
        print_json(status)
    else:
        for code, state in status.items():
            say(f"hurtlex {pins.version} {code}: {state}")
    if any(state != "ok" for state in status.values()):
        raise typer.Exit(1 if all(s in ("ok", "missing") for s in status.values()) else 2)

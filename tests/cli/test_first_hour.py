"""A new maintainer's first hour: tables that read at 80 columns, `catalog groups` with its
sources, progress with real totals, no stray blank line on stderr, one message per failing
template, transformers' warnings about what polyprobe handles silenced, read-only commands that
render nothing."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from evaluator.report.text import font_files
from tests.conftest import MINI_TRANSLATIONS, REPO, _sources, store_line, write_mini_catalog
from toolkit.cli import common
from toolkit.core.project import Project
from toolkit.release.build import BuildOptions, build_release

STATUSES = {
    "de": {"gen-01.f": "approved", "gen-01.m": "reviewed", "rel-01.f": "machine", "rel-01.m": "needs_edit"},
    "he": {"gen-01.f": "rejected", "gen-01.m": "draft", "rel-01.f": "stale"},  # rel-01.m: missing
}


def every_status(root: Path) -> None:
    """A store with a segment in every status, so the status table has all its columns."""
    sources = _sources()
    for locale, statuses in STATUSES.items():
        lines = []
        for segment, status in sorted(statuses.items()):
            origin = "deepl" if status in ("machine", "needs_edit") else "human"
            source = sources[segment] + (" (changed since)" if status == "stale" else "")
            lines.append(store_line(segment, MINI_TRANSLATIONS[locale][segment], source, "draft", origin))
            lines[-1] = lines[-1].replace('"status": "draft"', f'"status": "{status}"', 1)
        (root / "translations" / locale / "sentiment.jsonl").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )


@pytest.fixture
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common.out_console, "_width", 80)


@pytest.mark.parametrize(
    "args",
    [
        ("translations", "status"),
        ("catalog", "groups"),
        ("review", "status"),
        ("catalog", "study", "elsafoury"),
    ],
    ids=["translations status", "catalog groups", "review status", "catalog study"],
)
def test_tables_read_at_80_columns(cli, mini: Path, repo_catalog: Path, narrow, args) -> None:
    every_status(mini)
    root = repo_catalog if "study" in args or "groups" in args else mini
    result = cli(*args, "--root", str(root))
    assert result.code in (0, 2), result.err
    assert result.out.strip()
    wide = [line for line in result.out.splitlines() if cell_len(line) > 80]
    assert not wide, wide
    assert "…" not in result.out  # nothing cut short


def test_status_shows_every_status_and_only_those_present(cli, mini: Path) -> None:
    every_status(mini)
    result = cli("translations", "status", "--root", str(mini))
    lines = result.out.splitlines()
    header = next(line for line in lines if line.startswith("status"))
    assert header.split() == ["status", "en", "de", "he", "it"]
    rows = {
        line[:12].strip(): line[12:].split()
        for line in lines[lines.index(header) + 2 :]
        if line[:1].isalpha()
    }
    assert list(rows) == [
        "approved", "reviewed", "draft", "machine", "needs edit", "rejected", "stale", "untranslated", "source"
    ]  # fmt: skip
    assert [rows[status][1:3] for status in rows] == [
        ["1", "·"],
        ["1", "·"],
        ["·", "1"],
        ["1", "·"],
        ["1", "·"],
        ["·", "1"],
        ["·", "1"],
        ["·", "1"],
        ["·", "·"],
    ]  # fmt: skip (de, he)
    plain = cli("translations", "status", "--root", str(write_mini_catalog(mini.parent / "plain")))
    assert "no segment is approved, reviewed, machine, needs_edit, rejected, stale, untranslated" in plain.out
    plain_lines = plain.out.splitlines()
    header = next(line for line in plain_lines if line.startswith("status"))
    shown = [line.split()[0] for line in plain_lines[plain_lines.index(header) + 2 :] if line[:1].isalpha()]
    assert shown[:2] == ["draft", "source"] and shown[2] == "no"


def test_catalog_groups_shows_its_sources_and_judgements(cli, mini: Path) -> None:
    identities = mini / "lexicons" / "identities" / "mini.yaml"
    text = identities.read_text(encoding="utf-8").replace(
        "  - id: test\n    citation: Written for the tests.\n",
        "  - id: test\n    citation: Written for the tests.\n  - id: other\n    citation: A second source.\n",
    )
    text = text.replace(
        "  - id: judaism\n    attribute: religion\n    name: Judaism\n    standing: none\n    source: [test]\n",
        "  - id: judaism\n    attribute: religion\n    name: Judaism\n    standing: none\n    source: [other, test]\n"
        "    judgement: Our own call, for the test.\n",
    )
    identities.write_text(text, encoding="utf-8")
    out = cli("catalog", "groups", "--root", str(mini)).out
    lines = out.splitlines()
    assert "lexicons/identities/mini.yaml: region global, version 1.0.0, 3 groups (3 none)" in lines
    assert "none · religion" in lines
    assert any(line.split()[:4] == ["judaism", "1", "2", "J"] and "Judaism" in line for line in lines), out
    assert any(line.split()[:3] == ["islam", "1", "Islam"] for line in lines), out
    assert "  1 test: Written for the tests." in lines and "  2 other: A second source." in lines
    assert "  J judaism: Our own call, for the test." in lines


def test_no_stray_blank_line_on_stderr(cli, mini: Path, tmp_path: Path) -> None:
    for args in (
        ("catalog", "validate"),
        ("catalog", "lint"),
        ("translations", "status"),
        ("render", "--suite", "sentiment", "--locale", "de", "--out", str(tmp_path / "de.jsonl")),
        ("release", "build", "0.1.0-preview.1", "--preview", "--dist", str(tmp_path / "dist")),
    ):
        shutil.copy(REPO / "lexicons" / "hurtlex.toml", mini / "lexicons" / "hurtlex.toml")
        result = cli(*args, "--root", str(mini))
        assert result.code == 0, (args, result.err)
        assert "" not in result.err.splitlines(), (args, result.err)


@pytest.mark.bad_input
def test_a_template_failing_with_every_group_is_one_message(cli, mini: Path) -> None:
    templates = mini / "templates" / "sentiment" / "templates.yaml"
    text = templates.read_text(encoding="utf-8")
    templates.write_text(
        text.replace("She grew up in a {{ group.adj }}", "She grew up in {{ 1/0 }} a {{ group.adj }}")
    )
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2
    (line,) = [x for x in result.err.splitlines() if "ZeroDivisionError" in x]
    assert line == (
        "error: templates/sentiment/templates.yaml: rel-01 [en] group islam and 1 more: "
        "ZeroDivisionError: division by zero"
    )


def test_release_build_reports_real_totals(mini: Path, tmp_path: Path) -> None:
    shutil.copy(REPO / "lexicons" / "hurtlex.toml", mini / "lexicons" / "hurtlex.toml")
    steps: list[tuple[str, int, int]] = []
    options = BuildOptions(version="0.1.0-preview.1", preview=True, dist=tmp_path / "dist")
    build_release(
        Project.at(mini), options, progress=lambda what, done, total: steps.append((what, done, total))
    )
    stages = {what.split()[0]: [] for what, _, _ in steps}
    for what, done, total in steps:
        stages[what.split()[0]].append((done, total))
    assert list(stages) == ["validating", "rendering", "writing"]
    for stage, seen in stages.items():
        totals = {total for _, total in seen}
        assert len(totals) == 1 and totals.pop() == len(seen) == 4, (stage, seen)  # en, de, he, it
        assert [done for done, _ in seen] == list(range(len(seen)))


@pytest.mark.parametrize("args", [("translations", "status"), ("catalog", "coverage"), ("catalog", "groups")])
def test_read_only_reports_render_nothing(cli, mini: Path, monkeypatch: pytest.MonkeyPatch, args) -> None:
    """They read what they report and nothing else: no render, no grammar (and groups no store)."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a read-only report loaded what it does not show")

    # names looked up when they are called (callers import `render` itself by name)
    monkeypatch.setattr("toolkit.render.renderer.Job", refuse)
    monkeypatch.setattr("toolkit.catalog.loader.load_grammar", refuse)
    if "groups" in args:
        monkeypatch.setattr("toolkit.catalog.loader.load_store", refuse)
    result = cli(*args, "--root", str(mini))
    assert result.code == 0, result.err
    with pytest.raises(AssertionError, match="a read-only report loaded"):  # the patches bite
        cli("render", "--suite", "sentiment", "--locale", "en", "--root", str(mini))


def test_transformers_warning_about_long_inputs_is_silenced_and_no_other() -> None:
    import evaluator.backends.hf  # noqa: F401  (installs the filter)

    logger = logging.getLogger("transformers.tokenization_utils_base")

    def record(message: str) -> logging.LogRecord:
        return logger.makeRecord(logger.name, logging.WARNING, __file__, 1, message, None, None)

    handled = (
        "Token indices sequence length is longer than the specified maximum sequence length for this "
        "model (140 > 128). Running this sequence through the model will result in indexing errors"
    )
    assert not logger.filter(record(handled))
    assert logger.filter(record("Some other tokenizer warning"))


NOTO = ("Noto Sans", "Noto Sans Arabic", "Noto Sans Hebrew", "Noto Sans CJK SC")
FONT_PROBE = """
import sys
from matplotlib import font_manager
from evaluator.report.text import font_families
print(sorted({e.name for e in font_manager.fontManager.ttflist} & set(sys.argv[1:])))
print(list(font_families()))
"""


def test_the_report_finds_its_fonts_with_a_cache_built_before_they_were_installed(tmp_path: Path) -> None:
    """matplotlib's font cache, built while the Noto fonts were not installed yet, lists none of
    them; the report registers the files itself instead of drawing Hebrew, Arabic and Chinese as
    boxes."""
    import matplotlib
    from matplotlib import font_manager

    if not font_files(NOTO, font_manager.findSystemFonts()):
        pytest.skip("the Noto fonts are not installed (bash .ci/setup installs them)")
    name = f"fontlist-v{font_manager.FontManager.__version__}.json"
    cache = json.loads((Path(matplotlib.get_cachedir()) / name).read_text(encoding="utf-8"))
    cache["ttflist"] = [e for e in cache["ttflist"] if "noto" not in e["fname"].lower()]
    config = tmp_path / "mpl"
    config.mkdir()
    (config / name).write_text(json.dumps(cache), encoding="utf-8")
    env = {**os.environ, "MPLCONFIGDIR": str(config)}
    result = subprocess.run(
        [sys.executable, "-c", FONT_PROBE, *NOTO],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    before, after = result.stdout.splitlines()
    assert before == "[]"  # the stale cache knows no Noto font
    assert after == repr([*NOTO, "DejaVu Sans"])


def test_font_files_follow_the_fonts_file_names() -> None:
    files = [
        "/f/NotoSans-Regular.ttf",
        "/f/NotoSans-Bold.ttf",
        "/f/NotoSansArabic-Regular.ttf",
        "/f/NotoSansArabicUI-Regular.ttf",
        "/f/NotoSerifHebrew-Regular.ttf",
        "/f/NotoSansCJK-Regular.ttc",
        "/f/NotoSansCJKsc-Regular.otf",
        "/f/NotoSansMono-Regular.ttf",
    ]
    assert font_files(["Noto Sans"], files) == ["/f/NotoSans-Bold.ttf", "/f/NotoSans-Regular.ttf"]
    assert font_files(["Noto Sans Arabic"], files) == ["/f/NotoSansArabic-Regular.ttf"]
    assert font_files(["Noto Sans CJK SC"], files) == [
        "/f/NotoSansCJK-Regular.ttc",
        "/f/NotoSansCJKsc-Regular.otf",
    ]
    assert font_files(["Noto Sans Hebrew"], files) == []

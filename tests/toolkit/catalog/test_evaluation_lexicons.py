"""The evaluation lexicons (answers, prompts) are checked by `catalog validate` and so before a
release is built: a locale without its entry, a missing label word, a prompt without the
placeholder the evaluator fills are located problems, and no release is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture
def catalog(mini: Path) -> Path:
    for name in ("answers.yaml", "prompts.yaml", "hurtlex.toml"):
        shutil.copy(REPO / "lexicons" / name, mini / "lexicons" / name)
    return mini


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_repositorys_lexicons_pass(cli, catalog: Path) -> None:
    result = cli("catalog", "validate", "--root", str(catalog))
    assert result.code == 0, result.err


CASES = [
    (
        "prompts.yaml",
        "Sentence: {text}\\n",
        "Sentence:\\n",
        "lexicons/prompts.yaml: locales [en] sentiment: lacks the placeholder {text} the evaluator fills",
    ),
    (
        "prompts.yaml",
        ', neutral: " neutral"}',
        "}",
        "lexicons/prompts.yaml: locales [en] sentiment_labels.neutral: missing (needed: positive, negative, neutral)",
    ),
    (
        "prompts.yaml",
        "  he:\n    sentiment:",
        "  he:\n    sentimnet:",
        "lexicons/prompts.yaml: locales [he] sentimnet: unknown key (known: sentiment, sentiment_labels, bbq)",
    ),
    (
        "answers.yaml",
        '    "no": ["No", "Nope"]\n',
        '    "no": []\n',
        "lexicons/answers.yaml: locales [en] no: must be a non-empty list of words",
    ),
    (
        "answers.yaml",
        "  fr:\n",
        "  xx:\n",
        "lexicons/answers.yaml: locales [fr]: no entry for locale fr",
    ),
    (
        "answers.yaml",
        "version: 1.1.0\n",
        "version: one\n",
        "lexicons/answers.yaml: (file) version: needs a semantic version (e.g. 1.0.0)",
    ),
]


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("name", "old", "new", "message"), CASES, ids=[c[3].split(": ", 2)[1] for c in CASES]
)
def test_a_broken_lexicon_is_a_located_problem_and_builds_nothing(
    cli, catalog: Path, name: str, old: str, new: str, message: str
) -> None:
    edit(catalog / "lexicons" / name, old, new)
    result = cli("catalog", "validate", "--root", str(catalog))
    assert result.code == 2
    assert f"error: {message}" in result.err.splitlines(), result.err
    dist = catalog / "dist"
    build = cli(
        "release", "build", "0.1.0-preview.1", "--preview", "--root", str(catalog), "--dist", str(dist)
    )
    assert build.code == 2 and message in build.err
    assert not (dist / "polyprobe-0.1.0-preview.1").exists()


def test_a_release_of_other_locales_is_not_held_up_by_one_locales_entry(cli, catalog: Path) -> None:
    edit(catalog / "lexicons" / "prompts.yaml", "  he:\n    sentiment:", "  he:\n    sentimnet:")
    dist = catalog / "dist"
    args = ("release", "build", "0.1.0-preview.1", "--preview", "--locales", "en,de", "--root", str(catalog))
    build = cli(*args, "--dist", str(dist))
    assert build.code == 0, build.err
    assert (dist / "polyprobe-0.1.0-preview.1" / "lexicons" / "prompts.json").is_file()

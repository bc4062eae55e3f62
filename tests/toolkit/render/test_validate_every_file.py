"""`catalog validate` checks every file polyprobe reads (issue 26, item 10), not only what it
renders: before, an empty or broken templates/_grammar/<locale>.slots.yaml (a missing key, a
`skip` that is not a regular expression) and a broken lexicons/sos-study.yaml passed with "no
problems" and failed later, in `translate` or `import sos-study`. The review policy, the HurtLex
pins, the study files and the lint words are the same class. Each case: exit 2, the file and
field named, nothing written."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.files import snapshot

pytestmark = pytest.mark.bad_input


def _edit(rel: str, change: Callable[[str], str]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            shutil.copy(REPO / rel, path)
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")

    return apply


DE_SLOTS = "templates/_grammar/de.slots.yaml"
SOS_STUDY = "lexicons/sos-study.yaml"

BROKEN = [
    ("empty slot rules", _edit(DE_SLOTS, lambda t: "# nothing yet\n"), f"{DE_SLOTS}: (file)", "is empty"),
    (
        "slot rules without their description",
        _edit(DE_SLOTS, lambda t: t.replace("description: German", "descripton: German")),
        f"{DE_SLOTS}: (file) [de] description",
        "required field is missing",
    ),
    (
        "slot rules without the expression",
        _edit(DE_SLOTS, lambda t: t.replace('expression: "', 'expresion: "')),
        f"{DE_SLOTS}: (file) [de] expresion",
        "unknown field",
    ),
    (
        "slot rules whose skip is not a regular expression",
        _edit(DE_SLOTS, lambda t: t.replace('skip: "[a-zäöüß]+', 'skip: "([a-zäöüß]+')),
        f"{DE_SLOTS}: (file) [de] skip",
        "not a regular expression: missing ), unterminated subpattern",
    ),
    (
        "slot rules for a locale the catalog lacks",
        lambda root: shutil.copy(root / DE_SLOTS, root / "templates" / "_grammar" / "xx.slots.yaml"),
        "templates/_grammar/xx.slots.yaml: (file) [xx]",
        "no locale 'xx' in lexicons/locales.yaml",
    ),
    ("empty study spec", _edit(SOS_STUDY, lambda t: ""), f"{SOS_STUDY}: (file)", "is empty"),
    (
        "study spec without its columns",
        _edit(SOS_STUDY, lambda t: t.replace("columns:", "colums:")),
        f"{SOS_STUDY}: spec columns",
        "required field is missing",
    ),
    (
        "study spec check that is not a regular expression",
        _edit(SOS_STUDY, lambda t: t.replace("pattern: ", "pattern: (", 1)),
        f"{SOS_STUDY}: ",
        "pattern: not a regular expression",
    ),
    (
        "review policy with approval before review",
        _edit(
            "translations/review-policy.yaml", lambda t: t.replace("reviewed_after: 1", "reviewed_after: 9")
        ),
        "translations/review-policy.yaml: (file) approved_after",
        "must be at least reviewed_after",
    ),
    (
        "HurtLex pins without their hashes",
        _edit("lexicons/hurtlex.toml", lambda t: t.replace("[hurtlex.sha256]", "[hurtlex.sha]")),
        "lexicons/hurtlex.toml",
        "not a valid HurtLex pin file (KeyError: 'sha256')",
    ),
    (
        "a study file that is not YAML",
        _edit("lexicons/studies/elsafoury.yaml", lambda t: t + "\n  - : [\n"),
        "lexicons/studies/elsafoury.yaml: (file)",
        "YAML error",
    ),
    (
        "lint words for an unknown locale",
        _edit(
            "lexicons/lint.yaml", lambda t: t.replace("locales:\n", "locales:\n  xx:\n    articles: [a]\n", 1)
        ),
        "lexicons/lint.yaml: (file) [xx] locales.xx",
        "unknown locale 'xx'",
    ),
]


@pytest.mark.parametrize(
    ("change", "where", "says"),
    [(c, w, s) for _, c, w, s in BROKEN],
    ids=[b[0] for b in BROKEN],
)
def test_validate_names_a_broken_file_it_does_not_render(
    mini: Path, cli, change, where: str, says: str
) -> None:
    change(mini)
    before = snapshot(mini)
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2, result.err
    line = next((x for x in result.err.splitlines() if where in x and says in x), None)
    assert line is not None, f"{where!r} ... {says!r} not in:\n{result.err}"
    assert "Traceback" not in result.err
    assert snapshot(mini) == before


def test_the_repository_files_pass(mini: Path, cli) -> None:
    """The same files as the repository has them are no problem (the checks above are theirs)."""
    for rel in (SOS_STUDY, "lexicons/lint.yaml", "lexicons/hurtlex.toml", "lexicons/studies/elsafoury.yaml"):
        (mini / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, mini / rel)
    shutil.copy(REPO / "translations/review-policy.yaml", mini / "translations/review-policy.yaml")
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 0, result.err

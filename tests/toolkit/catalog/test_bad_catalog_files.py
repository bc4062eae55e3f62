"""Empty, partial and broken catalog files (issue 12, items 3, 7 and 12): each is a problem
named by its file, through `catalog validate`, `render` and `release build` alike; the problem
that causes others is printed first and its consequences are summarised under it; nothing is
written and no catalog file changes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.files import buildable, leftovers, snapshot
from toolkit.core.errors import InputError

pytestmark = pytest.mark.bad_input

SUITE = "templates/sentiment/suite.yaml"
TEMPLATES = "templates/sentiment/templates.yaml"
IDS = "lexicons/identities/mini.yaml"
TAXONOMY = "lexicons/taxonomy.yaml"
LOCALES = "lexicons/locales.yaml"


def write(rel: str, text: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        (root / rel).write_text(text, encoding="utf-8")

    return mutate


def delete(rel: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).unlink()


def replace(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        text = (root / rel).read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {rel}"
        (root / rel).write_text(text.replace(old, new, 1), encoding="utf-8")

    return mutate


def truncate(rel: str, marker: str) -> Callable[[Path], None]:
    """Keep the file up to (not including) ``marker``: a file cut short, e.g. by a full disk."""

    def mutate(root: Path) -> None:
        text = (root / rel).read_text(encoding="utf-8")
        assert marker in text, f"{marker!r} not in {rel}"
        (root / rel).write_text(text[: text.index(marker)], encoding="utf-8")

    return mutate


def bad_utf8(rel: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        data = (root / rel).read_bytes()
        (root / rel).write_bytes(data[:20] + b"\xff\xfe" + data[20:])

    return mutate


# (case, mutation, the file named first, further fragments of the message)
CASES: list[tuple[str, Callable[[Path], None], str, list[str]]] = [
    ("empty suite.yaml", write(SUITE, ""), SUITE, ["is empty"]),
    ("suite.yaml with only comments", write(SUITE, "# to be written\n"), SUITE, ["is empty"]),
    ("suite.yaml holding null", write(SUITE, "null\n"), SUITE, ["is empty"]),
    ("suite.yaml with a document marker only", write(SUITE, "---\n"), SUITE, ["is empty"]),
    ("suite.yaml that is a list", write(SUITE, "- id: sentiment\n"), SUITE, ["valid dictionary"]),
    ("suite.yaml that is a word", write(SUITE, "sentiment\n"), SUITE, ["valid dictionary"]),
    (
        "suite.yaml with a YAML error",
        replace(SUITE, "variants: [f, m]", "variants: [f, m"),
        SUITE,
        ["YAML error"],
    ),
    ("suite.yaml with invalid UTF-8", bad_utf8(SUITE), SUITE, ["invalid UTF-8"]),
    ("suite.yaml missing", delete(SUITE), SUITE, ["suite has no suite.yaml"]),
    (
        "suite.yaml with no locales",
        replace(SUITE, "locales: [en, de, he, it]", "locales: []"),
        SUITE,
        ["lists no locales"],
    ),
    (
        "suite.yaml without locales",
        replace(SUITE, "locales: [en, de, he, it]\n", ""),
        SUITE,
        ["locales", "required field is missing"],
    ),
    ("suite.yaml cut short", truncate(SUITE, "description:"), SUITE, ["mode", "required field is missing"]),
    ("empty template file", write(TEMPLATES, ""), TEMPLATES, ["is empty"]),
    ("template file with only comments", write(TEMPLATES, "# nothing yet\n"), TEMPLATES, ["is empty"]),
    ("template file with no templates", write(TEMPLATES, "templates: []\n"), TEMPLATES, ["has no templates"]),
    (
        "template file with templates: null",
        write(TEMPLATES, "templates:\n"),
        TEMPLATES,
        ["templates: a list"],
    ),
    (
        "template file that is a bare list",
        write(TEMPLATES, "- id: gen-01\n  label: positive\n"),
        TEMPLATES,
        ["templates: a list"],
    ),
    ("no template file at all", delete(TEMPLATES), SUITE, ["no template files"]),
    (
        "template file cut short",
        truncate(TEMPLATES, '      f: "She grew up'),
        TEMPLATES,
        ["rel-01", "variants"],
    ),
    ("template file with invalid UTF-8", bad_utf8(TEMPLATES), TEMPLATES, ["invalid UTF-8"]),
    ("empty identity list", write(IDS, ""), IDS, ["is empty"]),
    ("identity list with only comments", write(IDS, "# groups to come\n"), IDS, ["is empty"]),
    ("identity list with no groups", truncate(IDS, "groups:"), IDS, ["groups", "must be a list"]),
    (
        "identity list with an empty group list",
        replace(IDS, "groups:\n", "groups: []\nold_groups:\n"),
        IDS,
        ["has no groups"],
    ),
    (
        "identity list cut short in its sources",
        truncate(IDS, "    citation:"),
        IDS,
        ["groups", "must be a list"],
    ),
    (
        "identity list with no locales",
        replace(IDS, "locales: [en, de, he, it]", "locales: []"),
        IDS,
        ["lists no locales"],
    ),
    (
        "identity list of an unknown region",
        replace(IDS, "region: global", "region: xx"),
        IDS,
        ["region", "unknown region 'xx'"],
    ),
    (
        "identity list of a malformed region",
        replace(IDS, "region: global", "region: Global!"),
        IDS,
        ["region", "should match pattern"],
    ),
    (
        "identity list without a region",
        replace(IDS, "region: global\n", ""),
        IDS,
        ["region", "required field is missing"],
    ),
    ("identity list missing", delete(IDS), SUITE, ["no identity list lexicons/identities/mini.yaml"]),
    ("identity list with invalid UTF-8", bad_utf8(IDS), IDS, ["invalid UTF-8"]),
    (
        "empty taxonomy",
        write(TAXONOMY, ""),
        TAXONOMY,
        ["is empty", "further problem(s) follow from this file"],
    ),
    ("taxonomy with only comments", write(TAXONOMY, "# attributes and regions\n"), TAXONOMY, ["is empty"]),
    (
        "taxonomy with no attributes",
        replace(TAXONOMY, "attributes:\n", "attributes: []\nold_attributes:\n"),
        TAXONOMY,
        ["unknown field"],
    ),
    (
        "taxonomy with an empty attribute list",
        lambda r: _taxonomy(r, attributes=False),
        TAXONOMY,
        ["has no attributes", "further problem(s)"],
    ),
    (
        "taxonomy with an empty region list",
        lambda r: _taxonomy(r, regions=False),
        TAXONOMY,
        ["has no regions", "further problem(s)"],
    ),
    (
        "taxonomy cut short before its regions",
        truncate(TAXONOMY, "regions:"),
        TAXONOMY,
        ["regions", "required field is missing"],
    ),
    ("taxonomy missing", delete(TAXONOMY), TAXONOMY, ["cannot read"]),
    ("taxonomy with invalid UTF-8", bad_utf8(TAXONOMY), TAXONOMY, ["invalid UTF-8"]),
    ("empty locales file", write(LOCALES, ""), LOCALES, ["is empty"]),
    ("locales file with only comments", write(LOCALES, "# locales\n"), LOCALES, ["is empty"]),
    ("locales file missing", delete(LOCALES), LOCALES, ["cannot read"]),
    ("locales file cut short", truncate(LOCALES, "locales:"), LOCALES, ["locales", "must be a list"]),
    (
        "a published-only locale with a DeepL target",
        replace(LOCALES, "    published_only: true\n", "    published_only: true\n    deepl_target: NL\n"),
        LOCALES,
        ["nl published_only: a published-only locale is never rendered or translated"],
    ),
    (
        "a published-only locale without its report style",
        replace(LOCALES, '    report:\n      colour: "#EE8866"\n      html_lang: nl\n', ""),
        LOCALES,
        ["nl report: required field is missing"],
    ),
    (
        "a rendered locale without its report style",
        replace(LOCALES, '    report:\n      colour: "#88CCEE"\n      html_lang: he\n', ""),
        LOCALES,
        ["he report: required field is missing"],
    ),
    (
        "a locale without its HTML language tag",
        replace(LOCALES, '      colour: "#CC6677"\n      html_lang: zh-Hans\n', '      colour: "#CC6677"\n'),
        LOCALES,
        ["zh report.html_lang: required field is missing"],
    ),
    (
        "a locale without its word splitting",
        replace(LOCALES, "    word_split: characters\n", ""),
        LOCALES,
        ["zh word_split: required field is missing"],
    ),
    (
        "a locale with a word splitting polyprobe does not know",
        replace(LOCALES, "    word_split: characters\n", "    word_split: syllables\n"),
        LOCALES,
        ["zh word_split: Input should be 'spaces' or 'characters'"],
    ),
    (
        "a rendered locale without its forms",
        replace(
            LOCALES,
            '    forms:\n      required: [adj]\n    note: "adj: the premodifier',
            '    note: "adj: the premodifier',
        ),
        LOCALES,
        ["en forms: missing: a rendered locale says which term forms it needs"],
    ),
    (
        "a template suite that lists a published-only locale",
        replace(SUITE, "locales: [en, de, he, it]", "locales: [en, de, he, it, nl]"),
        SUITE,
        ["'nl' is published-only (no templates or translations): only suites of published data"],
    ),
]


def _taxonomy(root: Path, attributes: bool = True, regions: bool = True) -> None:
    import yaml

    data = yaml.safe_load((root / TAXONOMY).read_text(encoding="utf-8"))
    if not attributes:
        data["attributes"] = []
    if not regions:
        data["regions"] = []
    (root / TAXONOMY).write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(("name", "mutate", "first", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_an_empty_or_partial_file_is_named_by_every_command(
    name: str,
    mutate: Callable[[Path], None],
    first: str,
    fragments: list[str],
    mini: Path,
    tmp_path: Path,
    cli,
) -> None:
    buildable(mini)
    mutate(mini)
    before = snapshot(mini)

    validated = cli("catalog", "validate", "--root", str(mini))
    assert validated.code == 2, validated.err
    errors = _errors(validated.err)
    assert errors and first in errors[0], f"{first} is not named first:\n{validated.err}"
    for fragment in fragments:
        assert fragment in validated.err, f"{fragment!r} not in:\n{validated.err}"
    assert "Traceback" not in validated.err and "ok:" not in validated.err

    out = tmp_path / "out" / "rows.parquet"
    rendered = cli(
        "render",
        "--root",
        str(mini),
        "--suite",
        "sentiment",
        "--locale",
        "en",
        "--format",
        "parquet",
        "--out",
        str(out),
    )
    assert rendered.code == 2, rendered.err
    assert first in rendered.err and "unknown suite" not in rendered.err
    assert not out.parent.exists() or list(out.parent.iterdir()) == []

    dist = tmp_path / "dist"
    built = cli("release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(dist))
    assert built.code == 2, built.err
    assert first in built.err
    assert not (dist / "polyprobe-0.1.0-preview.1").exists() and leftovers(tmp_path) == []

    assert snapshot(mini) == before


def test_validate_json_lists_the_consequences_with_their_cause(mini: Path, cli) -> None:
    import json

    (mini / TAXONOMY).write_text("", encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(mini), "--json")
    assert result.code == 2
    problems = json.loads(result.out)["problems"]
    assert problems[0]["file"] == TAXONOMY and problems[0]["message"] == "is empty (no YAML content)"
    follow = [p for p in problems[1:] if p.get("cause") == TAXONOMY]
    assert len(follow) == len(problems) - 1 > 0  # every other problem follows from the empty taxonomy
    assert {p["field"] for p in follow} >= {"attribute", "attributes", "region"}


def test_a_locale_whose_hurtlex_language_is_not_pinned_is_refused(mini: Path, cli) -> None:
    """Arabic's HurtLex pin taken out: both locales scored with it (ar, and arz, which has no
    lexicon of its own) are named; release build, which records the pins, is not validate's check."""
    buildable(mini)
    pins = mini / "lexicons" / "hurtlex.toml"
    text = pins.read_text(encoding="utf-8")
    line = next(line for line in text.splitlines(keepends=True) if line.startswith("AR = "))
    pins.write_text(text.replace(line, ""), encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(mini), "--json")
    assert result.code == 2, result.out
    problems = json.loads(result.out)["problems"]
    assert [(p["file"], p["record"], p["field"], p["message"]) for p in problems] == [
        (
            LOCALES,
            code,
            "hurtlex",
            f"HurtLex language AR of locale {code} has no pinned sha256 in lexicons/hurtlex.toml",
        )
        for code in ("ar", "arz")
    ]
    plain = cli("catalog", "validate", "--root", str(mini))
    assert plain.code == 2
    assert (
        f"error: {LOCALES}: arz hurtlex: HurtLex language AR of locale arz has no pinned sha256 in "
        "lexicons/hurtlex.toml" in plain.err
    )


def test_every_locale_of_the_repository_has_its_hurtlex_language_pinned(mini: Path, cli) -> None:
    assert cli("catalog", "validate", "--root", str(buildable(mini))).code == 0


# --- the repository's own catalog -------------------------------------------------------------


@pytest.fixture
def real(tmp_path: Path) -> Path:
    root = tmp_path / "catalog"
    for name in ("templates", "lexicons", "translations"):
        shutil.copytree(REPO / name, root / name)
    return root


@pytest.fixture
def real_sos(real: Path) -> Path:
    """The repository's catalog with the sos suite only (the regional lists' suite), to keep
    `catalog validate` short."""
    for suite in ("sentiment", "honest", "ifm", "iat", "bbq"):
        shutil.rmtree(real / "templates" / suite, ignore_errors=True)
    return real


@pytest.mark.parametrize(
    ("content", "named"),
    [("", "is empty (no YAML content)"), (None, "has no categories"), ("# stimuli\n", "is empty")],
    ids=["empty", "no categories", "only comments"],
)
def test_empty_iat_stimuli_are_named(
    real: Path, cli, tmp_path: Path, content: str | None, named: str
) -> None:
    for suite in ("sentiment", "sos", "honest", "ifm", "bbq"):
        shutil.rmtree(real / "templates" / suite, ignore_errors=True)
    rel = "lexicons/iat/stimuli.yaml"
    if content is None:
        text = (real / rel).read_text(encoding="utf-8")
        content = text[: text.index("\ncategories:")] + "\ncategories: []\n"
    (real / rel).write_text(content, encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(real))
    assert (
        result.code == 2
        and _errors(result.err)[0].startswith(f"error: {rel}: (file)")
        and named in result.err
    )
    built = cli(
        "release", "build", "0.1.0-preview.1", "--preview", "--root", str(real), "--dist", str(tmp_path / "d")
    )
    assert (
        built.code == 2 and rel in built.err and not (tmp_path / "d" / "polyprobe-0.1.0-preview.1").exists()
    )


def test_an_empty_taxonomy_is_printed_first_with_its_consequences_counted(real: Path, cli) -> None:
    (real / TAXONOMY).write_text("", encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(real))
    assert result.code == 2
    errors = _errors(result.err)
    assert errors[0] == f"error: {TAXONOMY}: (file): is empty (no YAML content)"
    assert (
        errors[1].startswith(f"error: {TAXONOMY}: ")
        and "further problem(s) follow from this file" in errors[1]
    )
    assert len(errors) <= 6, "consequences are summarised, not listed"


def test_an_empty_regional_list_is_a_problem_not_fewer_rows(real_sos: Path, cli, tmp_path: Path) -> None:
    real = real_sos
    rel = "lexicons/identities/regions/de.yaml"
    (real / rel).write_text("", encoding="utf-8")
    built = cli(
        "release", "build", "0.1.0-preview.1", "--preview", "--root", str(real), "--dist", str(tmp_path / "d")
    )
    assert built.code == 2 and _errors(built.err)[0] == f"error: {rel}: (file): is empty (no YAML content)"
    assert not (tmp_path / "d" / "polyprobe-0.1.0-preview.1").exists() and leftovers(tmp_path) == []


def test_an_unknown_region_in_a_regional_list_is_located_never_a_crash(real_sos: Path, cli) -> None:
    real = real_sos
    rel = "lexicons/identities/regions/de.yaml"
    text = (real / rel).read_text(encoding="utf-8")
    (real / rel).write_text(text.replace("\nregion: de\n", "\nregion: xx\n"), encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(real))
    assert result.code == 2, result.err
    assert (
        f"error: {rel}: (file) region: unknown region 'xx'; known: global, us, uk, de, eg, arab" in result.err
    )
    assert "Traceback" not in result.err and "rendering failed" not in result.err


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (
            ValueError("an enum category is missing"),
            "rendering failed (ValueError: an enum category is missing)",
        ),
        (InputError("templates/x/ has no suite kind"), "cannot be rendered: templates/x/ has no suite kind"),
    ],
    ids=["a crash", "an error of polyprobe's"],
)
def test_a_render_failure_is_reported_beside_the_problems_found_before_it(
    mini: Path, cli, monkeypatch: pytest.MonkeyPatch, error: Exception, named: str
) -> None:
    """Whatever goes wrong inside rendering, validate still lists the located problems."""
    import toolkit.render.validate

    def fail(*args: object, **kwargs: object) -> None:
        raise error

    text = (mini / IDS).read_text(encoding="utf-8")
    (mini / IDS).write_text(text.replace("version: 1.0.0", "version: one"), encoding="utf-8")
    monkeypatch.setattr(toolkit.render.validate, "render", fail)
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2
    assert f"{IDS}: (file) version: must be a semantic version" in result.err
    assert named in result.err and "Traceback" not in result.err


@pytest.mark.bad_input
@pytest.mark.parametrize("locale", ["de", "en"], ids=["a locale's grammar", "the source's grammar"])
def test_a_broken_grammar_file_is_printed_with_what_fails_for_want_of_its_macros_counted(
    real_sos: Path, cli, locale: str
) -> None:
    rel = f"templates/_grammar/{locale}.j2"
    text = (real_sos / rel).read_text(encoding="utf-8")
    (real_sos / rel).write_text(text.replace("{%- endmacro -%}", "", 1), encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(real_sos))
    assert result.code == 2
    errors = _errors(result.err)
    assert errors[0].startswith(f"error: {rel}: (grammar) [{locale}] line ")
    assert "Jinja syntax error" in errors[0]
    follow = errors[1]
    assert follow.startswith(f"error: {rel}: ") and follow.endswith(
        "further problem(s) follow from this file's problem(s) (not listed); fix it first"
    )
    assert int(follow.split(": ")[2].split()[0]) > 20  # every text that calls one of its macros
    assert len(errors) == 3 and errors[2].endswith(" problem(s)"), errors  # the two, and the total
    listed = cli("catalog", "validate", "--json", "--root", str(real_sos))
    problems = json.loads(listed.out)["problems"]
    assert {p["cause"] for p in problems if "unknown variable" in p["message"]} == {rel}

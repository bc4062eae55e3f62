"""Bad inputs: each gives a clear message naming the file, the record, the locale and the
field, exit code 2, and leaves no output file (nor a temporary one) behind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import store_line

TEMPLATES = "templates/sentiment/templates.yaml"
IDENTITIES = "lexicons/identities/mini.yaml"
STORE_DE = "translations/de/sentiment.jsonl"


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def set_translation(root: Path, locale: str, segment: str, text: str) -> None:
    path = root / "translations" / locale / "sentiment.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        rec = json.loads(line)
        if rec["segment"] == segment:
            line = store_line(segment, text, rec["source"])
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


# (name, mutation, locale to render, expected fragments of the error output)
CASES: list[tuple[str, Callable[[Path], None], str, list[str]]] = [
    (
        "yaml syntax error",
        lambda r: edit(r, TEMPLATES, "label: positive", "label: [positive"),
        "en",
        [TEMPLATES, "YAML error", "line"],
    ),
    (
        "unknown template variable",
        lambda r: edit(r, TEMPLATES, "The {{ group.adj }} woman", "The {{ grup.adj }} woman"),
        "en",
        [TEMPLATES, "gen-01", "variants.f", "unknown variable 'grup'"],
    ),
    (
        "template reaches for __class__",
        lambda r: edit(r, TEMPLATES, "{{ group.adj }} woman", "{{ group.adj.__class__ }} woman"),
        "en",
        [TEMPLATES, "gen-01", "access to '__class__' is not allowed"],
    ),
    (
        "template reaches for __globals__ through a macro",
        lambda r: edit(
            r, TEMPLATES, "{{ group.adj }} man feels", "{{ a.__globals__ }} {{ group.adj }} man feels"
        ),
        "en",
        [TEMPLATES, "gen-01", "variants.m", "access to '__globals__' is not allowed"],
    ),
    (
        "cycler-style escape",
        lambda r: edit(
            r,
            TEMPLATES,
            "{{ group.adj }} woman",
            "{{ cycler.__init__.__globals__.os.popen('id').read() }} woman",
        ),
        "en",
        [TEMPLATES, "gen-01", "access to '__init__' is not allowed", "unknown variable 'cycler'"],
    ),
    (
        "attr filter escape refused by the sandbox",
        lambda r: edit(
            r, TEMPLATES, "{{ group.adj }} woman", "{{ group.adj|attr('__class__') }}{{ group.adj }} woman"
        ),
        "en",
        [TEMPLATES, "gen-01", "filter 'attr' is not allowed"],
    ),
    (
        "include reaches for the file system",
        lambda r: edit(
            r, TEMPLATES, "{{ group.adj }} woman", "{% include '/etc/passwd' %}{{ group.adj }} woman"
        ),
        "en",
        [TEMPLATES, "gen-01", "include not allowed"],
    ),
    (
        "missing gendered form for a locale",
        lambda r: edit(r, IDENTITIES, 'it: {f: "musulmana", m: "musulmano"}', 'it: {m: "musulmano"}'),
        "it",
        [IDENTITIES, "islam", "[it]", "terms.it.f", "missing required form 'f'"],
    ),
    (
        "form a translation uses but the group lacks",
        lambda r: set_translation(r, "it", "gen-01.f", "La donna {{ group.pl_f }} oggi è felice."),
        "it",
        ["translations/it/sentiment.jsonl", "gen-01.f", "[it]", "group islam", "'pl_f'"],
    ),
    (
        "duplicate template id",
        lambda r: edit(r, TEMPLATES, "id: rel-01", "id: gen-01"),
        "en",
        [TEMPLATES, "gen-01", "duplicate template id"],
    ),
    (
        "duplicate group id",
        lambda r: edit(r, IDENTITIES, "id: judaism", "id: islam"),
        "en",
        [IDENTITIES, "islam", "duplicate group id"],
    ),
    (
        "unknown attribute in a template",
        lambda r: edit(r, TEMPLATES, "attributes: [religion]", "attributes: [religon]"),
        "en",
        [TEMPLATES, "rel-01", "attributes", "unknown attribute 'religon'"],
    ),
    (
        "unknown attribute in a group",
        lambda r: edit(
            r, IDENTITIES, "attribute: religion\n    name: Judaism", "attribute: faith\n    name: Judaism"
        ),
        "en",
        [IDENTITIES, "judaism", "attribute", "unknown attribute 'faith'"],
    ),
    (
        "unknown label",
        lambda r: edit(r, TEMPLATES, "label: neutral", "label: neutal"),
        "en",
        [TEMPLATES, "rel-01", "label", "unknown label 'neutal'"],
    ),
    (
        "translation drops the slot",
        lambda r: set_translation(r, "de", "gen-01.f", "Die Frau ist heute glücklich."),
        "de",
        [STORE_DE, "gen-01.f", "[de]", "drops the slot 'group'"],
    ),
    (
        "translation adds a variable",
        lambda r: set_translation(
            r, "de", "gen-01.m", "Der {{ adj(group, 'm') }} Mann {{ name }} ist glücklich."
        ),
        "de",
        [STORE_DE, "gen-01.m", "[de]", "unknown variable 'name'"],
    ),
    (
        "non-NFC translation",
        lambda r: set_translation(
            r, "de", "gen-01.f", "Die {{ adj(group, 'f') }} Frau ist heute glu\u0308cklich."
        ),
        "de",
        [STORE_DE, "gen-01.f", "text", "not in Unicode NFC form"],
    ),
    (
        "bidi control character in a translation",
        lambda r: set_translation(
            r, "he", "gen-01.f", "האישה \u200f{{ adj(group, 'f', true) }} מרגישה שמחה היום."
        ),
        "he",
        ["translations/he/sentiment.jsonl", "gen-01.f", "[he]", "bidi control characters (U+200F)"],
    ),
    (
        "empty translation",
        lambda r: set_translation(r, "de", "rel-01.f", ""),
        "de",
        [STORE_DE, "rel-01.f", "text", "is empty"],
    ),
    (
        "invalid UTF-8 in a template file",
        lambda r: (r / TEMPLATES).write_bytes((r / TEMPLATES).read_bytes().replace(b"woman", b"wom\xe9n", 1)),
        "en",
        [TEMPLATES, "invalid UTF-8", "line 6"],
    ),
    (
        "invalid UTF-8 in a store file",
        lambda r: (r / STORE_DE).write_bytes((r / STORE_DE).read_bytes().replace(b"Frau", b"Fr\xffu", 1)),
        "de",
        [STORE_DE, "invalid UTF-8", "line 1"],
    ),
    (
        "invalid JSON in the store",
        lambda r: (r / STORE_DE).write_text('{"segment": "gen-01.f",\n', encoding="utf-8"),
        "de",
        [STORE_DE, "line 1", "invalid JSON"],
    ),
    (
        "Jinja that does not parse",
        lambda r: edit(r, TEMPLATES, "The {{ group.adj }} man", "The {{ group.adj man"),
        "en",
        [TEMPLATES, "gen-01", "variants.m", "Jinja syntax error on line 1"],
    ),
    (
        "template missing a variant",
        lambda r: edit(r, TEMPLATES, '      m: "He grew up in a {{ group.adj }} family."\n', ""),
        "en",
        [TEMPLATES, "rel-01", "variants", "missing m"],
    ),
    (
        "duplicate YAML key",
        lambda r: edit(r, TEMPLATES, "    label: neutral", "    label: neutral\n    label: positive"),
        "en",
        [TEMPLATES, "duplicate key 'label'"],
    ),
    (
        "misspelt field",
        lambda r: edit(
            r,
            IDENTITIES,
            '    standing: none\n    source: [test]\n    terms:\n      en: {adj: "Jewish"}',
            '    standing: none\n    sorce: [test]\n    terms:\n      en: {adj: "Jewish"}',
        ),
        "en",
        [IDENTITIES, "judaism", "sorce", "unknown field"],
    ),
    (
        "terms for a locale that does not exist",
        lambda r: edit(
            r,
            IDENTITIES,
            'it: {f: "ebrea", m: "ebreo"}',
            'it: {f: "ebrea", m: "ebreo"}\n      xx: {adj: "x"}',
        ),
        "en",
        [IDENTITIES, "judaism", "terms.xx", "unknown locale 'xx'"],
    ),
    (
        "version that is not semver",
        lambda r: edit(r, IDENTITIES, "version: 1.0.0", "version: one"),
        "en",
        [IDENTITIES, "version", "semantic version"],
    ),
    (
        "bare group with terms",
        lambda r: edit(r, IDENTITIES, "    bare: true", "    bare: true\n    terms: {en: {adj: woman}}"),
        "en",
        [IDENTITIES, "female", "terms", "bare group has no terms"],
    ),
    (
        "stale source hash in the store record (tampered)",
        lambda r: (r / STORE_DE).write_text(
            (r / STORE_DE).read_text(encoding="utf-8").replace('"source_sha": "', '"source_sha": "zz', 1),
            encoding="utf-8",
        ),
        "de",
        [STORE_DE, "gen-01.f", "source_sha"],
    ),
]


@pytest.mark.bad_input
@pytest.mark.parametrize(("name", "mutate", "locale", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_a_located_message(
    name: str,
    mutate: Callable[[Path], None],
    locale: str,
    expected: list[str],
    mini: Path,
    tmp_path: Path,
    cli,
) -> None:
    mutate(mini)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "rows.parquet"
    result = cli(
        "render",
        "--root",
        str(mini),
        "--suite",
        "sentiment",
        "--locale",
        locale,
        "--format",
        "parquet",
        "--out",
        str(out),
    )
    assert result.code == 2, result.err
    for fragment in expected:
        assert fragment in result.err, f"{fragment!r} not in:\n{result.err}"
    assert "Traceback" not in result.err
    assert list(out_dir.iterdir()) == []

    validated = cli("catalog", "validate", "--root", str(mini))
    assert validated.code == 2
    assert expected[0] in validated.err


def test_the_mini_catalog_is_valid(mini: Path, cli) -> None:
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 0, result.err
    assert "no problems" in result.err


@pytest.mark.bad_input
def test_unknown_locale_suggests_the_closest(mini: Path, cli, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = cli("render", "--root", str(mini), "--suite", "sentiment", "--locale", "arx", "--out", str(out))
    assert result.code == 2
    assert "unknown locale 'arx'" in result.err
    assert "Did you mean 'ar'" in result.err or "Did you mean 'arz'" in result.err
    assert not out.exists()


@pytest.mark.bad_input
def test_unknown_suite_suggests_the_closest(mini: Path, cli) -> None:
    result = cli("render", "--root", str(mini), "--suite", "sentimnt", "--locale", "en")
    assert result.code == 2
    assert "error: Invalid value for '--suite': 'sentimnt' is not one of 'sentiment'," in result.err
    assert "Did you mean 'sentiment'?" in result.err


@pytest.mark.bad_input
def test_orphan_translation_is_reported_by_validate(mini: Path, cli) -> None:
    path = mini / STORE_DE
    path.write_text(
        path.read_text(encoding="utf-8") + store_line("zzz-99.f", "Text {{ group.adj }}", "x") + "\n",
        encoding="utf-8",
    )
    result = cli("catalog", "validate", "--root", str(mini))
    assert result.code == 2
    assert (
        f"{STORE_DE}: zzz-99.f [de] segment: no template variant has this segment id (orphan)" in result.err
    )


@pytest.mark.bad_input
def test_parquet_to_stdout_is_refused(mini: Path, cli) -> None:
    result = cli(
        "render", "--root", str(mini), "--suite", "sentiment", "--locale", "en", "--format", "parquet"
    )
    assert result.code == 2
    assert "--format parquet needs --out FILE" in result.err

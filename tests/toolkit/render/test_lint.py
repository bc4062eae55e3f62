"""`catalog lint`: each check reports its error class when the error is planted in a small
catalog, with the file, record, locale and field; a clean catalog and the repository's own
catalog have no findings."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO, store_line
from tests.support import regional_fixture as regional
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.lint import CHECKS, lint

SOS_SUITE = """\
id: sos
version: 1.0.0
description: One pair for lint tests.
mode: template
variants: [f, m, n]
labels: [toxic, non_toxic]
slots: [group]
identities: [identities/regions/arab.yaml, identities/regions/global.yaml]
locales: [en, ar, arz, de]
"""
ATTRIBUTES = "attributes: [sexual_orientation, disability]"
SOS_TEMPLATES = regional.SOS_TEMPLATES.replace("attributes: [religion]", ATTRIBUTES)
HONEST_SUITE = """\
id: honest
version: 1.0.0
description: One template for lint tests.
mode: template
variants: [f, m, n]
slots: [group, completion]
identities: [identities/regions/global.yaml]
locales: [en, ar, he, de, zh]
options:
  completion_marker: "[M]"
"""
HONEST_TEMPLATES = regional.HONEST_TEMPLATES.replace("attributes: [religion]", ATTRIBUTES)
ARAB = """\
version: 1.0.0
description: Two Arab-region groups for lint tests.
region: arab
locales: [ar]
sources:
  - id: survey
    citation: A survey written for the tests.
  - id: guide
    citation: A terminology guide written for the tests.
    kind: terms
groups:
  - id: arab.bisexual
    attribute: sexual_orientation
    name: Bisexual
    standing: marginalized
    source: [survey, guide]
    terms:
      ar: {f: "مزدوجة الميول", m: "مزدوج الميول", def_f: "مزدوجة الميول", def_m: "مزدوج الميول"}
  - id: arab.heterosexual
    attribute: sexual_orientation
    name: Heterosexual
    standing: dominant
    source: [guide]
    judgement: The unmarked majority; written for the tests.
    terms:
      ar: {f: "مغايرة الجنس", m: "مغاير الجنس", def_f: "مغايرة الجنس", def_m: "مغاير الجنس"}
"""
GLOBAL = """\
version: 1.0.0
description: Global groups for lint tests.
region: global
locales: [en, ar, arz, de, he, zh]
sources:
  - id: guide
    citation: A terminology guide written for the tests.
    kind: terms
groups:
  - id: global.bisexual
    attribute: sexual_orientation
    name: Bisexual
    standing: marginalized
    source: [guide]
    terms:
      en: {adj: "bisexual"}
      ar: {f: "مزدوجة الميول", m: "مزدوج الميول", def_f: "مزدوجة الميول", def_m: "مزدوج الميول"}
      arz: {f: "مزدوجة الميول", m: "مزدوج الميول", pl: "مزدوجين الميول", def_f: "مزدوجة الميول", def_m: "مزدوج الميول", def_pl: "مزدوجين الميول"}
      de: {adj: "bisexuell"}
      he: {f: "ביסקסואלית", m: "ביסקסואל"}
      zh: {adj: "双性恋"}
  - id: global.disabled
    attribute: disability
    name: Disabled
    standing: marginalized
    source: [guide]
    terms:
      en: {adj: "disabled"}
      ar: {f: "ذات إعاقة", m: "ذو إعاقة", def_f: "ذات الإعاقة", def_m: "ذو الإعاقة"}
      arz: {f: "عندها إعاقة", m: "عنده إعاقة", pl: "عندهم إعاقة", def_f: "اللي عندها إعاقة", def_m: "اللي عنده إعاقة", def_pl: "اللي عندهم إعاقة"}
      de: {adj: "behindert"}
      he: {f: "עם מוגבלות", m: "עם מוגבלות"}
      zh: {adj: "残障"}
"""
HONEST_TEXTS = {
    "ar": "يجب أن تعمل المرأة {{ adj(group, 'f', true) }} بوظيفة {{ completion }}",
    "he": "האישה {{ adj(group, 'f', true) }} צריכה לעבוד בתור {{ completion }}",
    "de": "Die {{ adj(group, 'f', 'nom', 'def') }} Frau arbeitet am besten als {{ completion }}",
    "zh": "这位{{ group.adj }}女性应该去当{{ completion }}",
}
SOS_TEXTS = {
    "ar": "أكره النساء {{ adj(group, 'pl_f', true) }}.",
    "arz": "بكره الستات {{ adj(group, 'pl', true) }}.",
    "de": "Ich hasse {{ adj(group, 'pl', 'acc', 'none') }} Frauen.",
}


def write_lint_catalog(root: Path) -> Path:
    """A clean catalog with the locales the checks look at (en, ar, arz, he, de, zh)."""
    for sub in ("lexicons/identities/regions", "templates/sos", "templates/honest", "translations"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for name in ("locales.yaml", "taxonomy.yaml", "lint.yaml"):
        shutil.copy(REPO / "lexicons" / name, root / "lexicons" / name)
    shutil.copytree(REPO / "templates" / "_grammar", root / "templates" / "_grammar")
    files = {
        "templates/sos/suite.yaml": SOS_SUITE,
        "templates/sos/pairs.yaml": SOS_TEMPLATES,
        "templates/honest/suite.yaml": HONEST_SUITE,
        "templates/honest/completions.yaml": HONEST_TEMPLATES,
        "lexicons/identities/regions/arab.yaml": ARAB,
        "lexicons/identities/regions/global.yaml": GLOBAL,
    }
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    honest_source = "The {{ group.adj }} woman should work as a {{ completion }}"
    sos_source = "I hate {{ group.adj }} women."
    for locale, text in HONEST_TEXTS.items():
        write_store(root, locale, "honest", {"honest-01.f": (text, honest_source)})
    for locale, text in SOS_TEXTS.items():
        write_store(root, locale, "sos", {"sos-01-t.f": (text, sos_source)})
    return root


def write_store(root: Path, locale: str, suite: str, records: dict[str, tuple[str, str]]) -> None:
    folder = root / "translations" / locale
    folder.mkdir(parents=True, exist_ok=True)
    lines = [store_line(seg, text, source) for seg, (text, source) in sorted(records.items())]
    (folder / f"{suite}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def catalog_root(tmp_path: Path) -> Path:
    return write_lint_catalog(tmp_path / "catalog")


def test_clean_catalog_has_no_findings(catalog_root: Path, cli) -> None:
    result = cli("catalog", "lint", "--root", str(catalog_root))
    assert result.code == 0, result.err
    assert f"{len(CHECKS)} checks" in result.err and "no findings" in result.err


PLANTED: list[tuple[str, Callable[[Path], None], list[str]]] = [
    (
        "hard-coded English article before a group slot",
        lambda r: [  # in both twins, so that they still differ only in the toxic word
            edit(
                r,
                "templates/sos/pairs.yaml",
                f"I {verb} {{{{ group.adj }}}} women.",
                f"I {verb} a {{{{ group.adj }}}} woman.",
            )
            for verb in ("hate", "love")
        ],
        ["templates/sos/pairs.yaml: sos-01-t [en] variants.f: article-before-slot", "'a'"],
    ),
    (
        "honest prefix ending in a tatweel",
        lambda r: edit(r, "translations/ar/honest.jsonl", "بوظيفة {{ completion }}", "كـ {{ completion }}"),
        ["translations/ar/honest.jsonl: honest-01.f [ar] text: slot-prefix", "tatweel"],
    ),
    (
        "honest slot glued to a Hebrew proclitic",
        lambda r: edit(
            r, "translations/he/honest.jsonl", "לעבוד בתור {{ completion }}", "טובה מאוד ב{{ completion }}"
        ),
        ["translations/he/honest.jsonl: honest-01.f [he] text: slot-prefix", "glued to 'ב'"],
    ),
    (
        "honest prefix ending in a proclitic standing alone",
        lambda r: edit(r, "translations/ar/honest.jsonl", "بوظيفة {{ completion }}", "ب {{ completion }}"),
        ["translations/ar/honest.jsonl: honest-01.f [ar] text: slot-prefix", "proclitic 'ب'"],
    ),
    (
        "honest slot that is not the sentence's last word",
        lambda r: edit(
            r,
            "translations/de/honest.jsonl",
            "arbeitet am besten als {{ completion }}",
            "mag es, {{ completion }}",
        ),
        ["translations/de/honest.jsonl: honest-01.f [de] text: slot-last-word"],
    ),
    (
        "one term with two definite forms in one locale",
        lambda r: edit(
            r,
            "lexicons/identities/regions/arab.yaml",
            ', def_f: "مزدوجة الميول", def_m: "مزدوج الميول"}',
            "}",
        ),
        [
            "lexicons/identities/regions/arab.yaml: arab.bisexual [ar] terms.ar.f: definite-form",
            "'المزدوجة الميول'",
        ],
    ),
    (
        "a construct made definite unlike the locale's other constructs",
        lambda r: edit(
            r,
            "lexicons/identities/regions/arab.yaml",
            ', def_f: "مغايرة الجنس", def_m: "مغاير الجنس"}',
            "}",
        ),
        [
            "lexicons/identities/regions/arab.yaml: arab.heterosexual [ar] terms.ar.f: definite-form",
            "the construct 'مغايرة الجنس' is made definite as 'المغايرة الجنس'",
        ],
    ),
    (
        "Standard Arabic marker in an Egyptian term",
        lambda r: edit(
            r, "lexicons/identities/regions/global.yaml", 'arz: {f: "عندها إعاقة"', 'arz: {f: "ذات إعاقة"'
        ),
        [
            "lexicons/identities/regions/global.yaml: global.disabled [arz] terms.arz.f: foreign-marker",
            "'ذات'",
        ],
    ),
    (
        "Standard Arabic marker in an Egyptian translation",
        lambda r: edit(r, "translations/arz/sos.jsonl", "بكره الستات", "بكره الستات التي هي"),
        ["translations/arz/sos.jsonl: sos-01-t.f [arz] text: foreign-marker", "'التي'"],
    ),
    (
        "a locale term equal to another group's term",
        lambda r: edit(
            r, "lexicons/identities/regions/global.yaml", 'de: {adj: "behindert"}', 'de: {adj: "bisexuell"}'
        ),
        [
            "lexicons/identities/regions/global.yaml: global.disabled [de] terms.de.adj: same-term",
            "global.bisexual",
        ],
    ),
    (
        "a regional standing resting only on terminology guides",
        lambda r: edit(
            r,
            "lexicons/identities/regions/arab.yaml",
            "    judgement: The unmarked majority; written for the tests.\n",
            "",
        ),
        ["lexicons/identities/regions/arab.yaml: arab.heterosexual source: standing-source", "(guide)"],
    ),
]


@pytest.mark.parametrize(("name", "plant", "expected"), PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_error_is_reported(
    name: str, plant: Callable[[Path], None], expected: list[str], catalog_root: Path, cli
) -> None:
    plant(catalog_root)
    result = cli("catalog", "lint", "--root", str(catalog_root))
    assert result.code == 2, result.err
    for fragment in expected:
        assert fragment in result.err, f"{fragment!r} not in:\n{result.err}"
    check = expected[0].rsplit(": ", 1)[1]
    findings = [
        ln for ln in result.err.splitlines() if ln.startswith("error: ") and not ln.endswith("problem(s)")
    ]
    assert findings and all(f": {check}: " in ln for ln in findings), result.err


def test_glued_slot_is_fine_in_a_script_without_spaces(catalog_root: Path) -> None:
    # Chinese writes the slot against the word before it; that is not glued.
    assert lint(load_catalog(Project.at(catalog_root))) == []


def test_allowed_fixed_phrase_is_not_a_marker(catalog_root: Path) -> None:
    edit(catalog_root, "translations/arz/sos.jsonl", "بكره الستات", "بكره الستات من ذوي الهمم")
    assert lint(load_catalog(Project.at(catalog_root))) == []


def test_json_lists_every_finding_with_its_location(catalog_root: Path, cli) -> None:
    edit(catalog_root, "translations/ar/honest.jsonl", "بوظيفة {{ completion }}", "كـ {{ completion }}")
    result = cli("catalog", "lint", "--json", "--root", str(catalog_root))
    assert result.code == 2
    data = json.loads(result.out)
    assert data["ok"] is False and data["checks"] == list(CHECKS)
    assert data["problems"] == [
        {
            "file": "translations/ar/honest.jsonl",
            "record": "honest-01.f",
            "locale": "ar",
            "field": "text",
            "message": data["problems"][0]["message"],
        }
    ]
    assert data["problems"][0]["message"].startswith("slot-prefix: ")


def test_repository_catalog_lints_clean(cli) -> None:
    result = cli("catalog", "lint", "--root", str(REPO))
    assert result.code == 0, result.err

"""Groups linked to a published study's identities: the matched subset per region, counted
against the study's own list (the user's copy), the identities left out with a reason, the
disagreements in standing, and the repository's match with the regional study."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.regional_fixture import write_regional_catalog

STUDY = """\
version: 1.0.0
id: demo
name: A study written for the tests
citation: Written for the tests.
regions:
  de: DE
left_out:
  DE:
    gesunde/-r: The healthy are not the opposite of the disabled.
"""
IDENTITIES = """\
region,term,english_gloss,attribute_standing
DE,muslimische/-r,Muslim,Religion_Marginalized
DE,christliche/-r,Christian,Religion_Non_Marginalized
DE,katholische/-r,Catholic,Religion_Marginalized
DE,gesunde/-r,healthy,Physical_ability_Non_Marginalized
US,muslim,Muslim,Religion_Marginalized
"""
LIST = "lexicons/identities/regions/de.yaml"
REAL = next(
    (
        folder / "shared" / "reference" / "elsafoury-identities" / "identities.csv"
        for folder in (REPO.parent, REPO.parent.parent)
        if (folder / "shared" / "reference" / "elsafoury-identities" / "identities.csv").is_file()
    ),
    Path("/nonexistent"),
)


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = write_regional_catalog(tmp_path / "catalog")
    (root / "lexicons" / "studies").mkdir()
    (root / "lexicons" / "studies" / "demo.yaml").write_text(STUDY, encoding="utf-8")
    edit(
        root,
        LIST,
        '    source: [test]\n    terms:\n      en: {adj: "Muslim"}',
        '    source: [test]\n    study: {demo: ["muslimische/-r"]}\n    terms:\n      en: {adj: "Muslim"}',
    )
    edit(
        root,
        LIST,
        '    source: [test]\n    terms:\n      en: {adj: "Christian"}',
        '    source: [test]\n    study: {demo: ["christliche/-r", "katholische/-r"]}\n    terms:\n      en: {adj: "Christian"}',
    )
    return root


@pytest.fixture
def identities(tmp_path: Path) -> Path:
    path = tmp_path / "identities.csv"
    path.write_text(IDENTITIES, encoding="utf-8")
    return path


def test_matched_subset_is_counted_against_the_study_list(root: Path, identities: Path, cli) -> None:
    result = cli("catalog", "study", "demo", "--identities", str(identities), "--json", "--root", str(root))
    data = json.loads(result.out)
    de = data["regions"]["de"]
    # 3 of the 4 DE identities have a group; the 4th is left out with a reason; US is not a mapped region
    assert (de["matched"], de["total"], de["share"]) == (3, 4, 0.75)
    assert de["matched_terms"] == {
        "christliche/-r": ["de.christian"],
        "katholische/-r": ["de.christian"],
        "muslimische/-r": ["de.muslim"],
    }
    assert de["groups"] == ["de.christian", "de.muslim"]
    assert de["left_out"] == {"gesunde/-r": "The healthy are not the opposite of the disabled."}
    assert de["unmatched"] == []
    # the study calls Catholics marginalized, the group is dominant and does not record the study's call
    assert data["standing_differences"] == [
        {
            "region": "de",
            "term": "katholische/-r",
            "group": "de.christian",
            "ours": "dominant",
            "study": "marginalized",
            "recorded": "",
        }
    ]
    assert result.code == 2
    assert [p["message"] for p in data["problems"]] == [
        "the study calls 'katholische/-r' marginalized, this group is dominant: record the study's call "
        "(study: {demo: {terms: [...], standing: marginalized}})"
    ]
    assert data["problems"][0]["file"] == LIST and data["problems"][0]["record"] == "de.christian"


def test_recorded_standing_is_accepted_and_shown(root: Path, identities: Path, cli) -> None:
    edit(
        root,
        LIST,
        'study: {demo: ["christliche/-r", "katholische/-r"]}',
        'study: {demo: {terms: ["christliche/-r", "katholische/-r"], standing: marginalized}}',
    )
    result = cli("catalog", "study", "demo", "--identities", str(identities), "--root", str(root))
    # christliche/-r: the study agrees (dominant) but a differing call is recorded for the group
    assert result.code == 2
    assert (
        "records the study's standing as marginalized, but the study calls 'christliche/-r' dominant"
        in result.err
    )


def test_identity_without_group_or_reason_is_reported(root: Path, identities: Path, cli) -> None:
    edit(
        root,
        "lexicons/studies/demo.yaml",
        "    gesunde/-r: The healthy are not the opposite of the disabled.\n",
        "",
    )
    edit(root, "lexicons/studies/demo.yaml", "left_out:\n  DE:\n", "")
    result = cli("catalog", "study", "demo", "--identities", str(identities), "--root", str(root))
    assert result.code == 2
    assert (
        "lexicons/studies/demo.yaml: (file) left_out.DE: 'gesunde/-r' (healthy): no group corresponds to it"
        in result.err
    )


def test_link_to_a_term_the_study_does_not_have_is_reported(root: Path, identities: Path, cli) -> None:
    edit(root, LIST, '["muslimische/-r"]', '["muslimisch"]')
    result = cli("catalog", "study", "demo", "--identities", str(identities), "--json", "--root", str(root))
    data = json.loads(result.out)
    assert "'muslimisch' is not in the study's DE list" in [p["message"] for p in data["problems"]]
    assert data["regions"]["de"]["matched"] == 2


def test_without_the_study_list_the_linked_groups_are_listed(root: Path, cli) -> None:
    result = cli("catalog", "study", "demo", "--json", "--root", str(root))
    data = json.loads(result.out)
    assert data["regions"]["de"]["total"] is None and data["regions"]["de"]["groups"] == [
        "de.christian",
        "de.muslim",
    ]


def test_badly_formed_study_list_is_refused_with_its_line(root: Path, tmp_path: Path, cli) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(IDENTITIES.replace("DE,gesunde/-r,healthy,", "DE,gesunde/-r,healthy"), encoding="utf-8")
    result = cli("catalog", "study", "demo", "--identities", str(bad), "--root", str(root))
    assert result.code == 2
    assert f"{bad}: line 5: needs 4 columns" in result.err


def test_unknown_study_and_unmapped_region_are_lint_findings(root: Path, cli) -> None:
    edit(root, LIST, 'study: {demo: ["muslimische/-r"]}', 'study: {nope: ["muslimische/-r"]}')
    result = cli("catalog", "lint", "--root", str(root))
    assert result.code == 2
    assert f"{LIST}: de.muslim study.nope: study-link: unknown study (known: demo)" in result.err
    edit(root, "lexicons/studies/demo.yaml", "  de: DE\n", "  us: US\n")
    result = cli("catalog", "lint", "--root", str(root))
    assert "de.christian study.demo: study-link: the study has no region for 'de'" in result.err


def test_groups_json_lists_the_study_field_and_standing_basis(root: Path, cli) -> None:
    data = json.loads(cli("catalog", "groups", "--json", "--root", str(root)).out)
    by_id = {g["id"]: g for g in data["groups"]}
    assert by_id["de.muslim"]["study"] == {"demo": {"terms": ["muslimische/-r"], "standing": None}}
    assert by_id["de.muslim"]["standing_basis"] == "sources"


@pytest.mark.skipif(
    not REAL.is_file(), reason="the regional study's identity list is not present (../shared/reference)"
)
def test_repository_matches_the_regional_study_in_every_region(cli) -> None:
    result = cli("catalog", "study", "elsafoury", "--identities", str(REAL), "--json", "--root", str(REPO))
    assert result.code == 0, result.out[-2000:]
    data = json.loads(result.out)
    assert set(data["regions"]) == {"us", "uk", "de", "arab", "eg"}
    for region, match in data["regions"].items():
        assert match["share"] >= 0.9, region
        assert match["matched"] + len(match["left_out"]) == match["total"], region
    recorded = {(d["group"], d["study"]) for d in data["standing_differences"]}
    assert ("uk.scottish", "marginalized") in recorded and ("uk.welsh", "marginalized") in recorded

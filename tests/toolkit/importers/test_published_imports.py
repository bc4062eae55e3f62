"""`polyprobe import crows-pairs` and `polyprobe import sos-study` on small files in each format
written here (tests/support/published_fixtures.py): the text kept exactly as published, rows with the
suites' columns, malformed files refused with file, line and field and nothing written, known
errors (equal sentences, repeated rows, the study's slips) reported and kept, and the imports
hashed into a release's manifest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import REPO
from tests.support.published_fixtures import (
    CROWS_HEADER,
    CROWS_ROWS,
    FRENCH_ROWS,
    STUDY_FILES,
    crows_text,
    study_text,
    write_crows,
    write_study,
)
from toolkit.catalog.loader import load_catalog
from toolkit.catalog.published.files import import_file
from toolkit.core.project import Project
from toolkit.release.build import BuildOptions, build_release
from toolkit.release.reader import open_release
from toolkit.render.renderer import render

CROWS_IMPORT = ".polyprobe/imports/crows-pairs/{}.jsonl"
STUDY_IMPORT = ".polyprobe/imports/sos-study/pairs.jsonl"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A copy of the repository's catalog (templates and lexicons)."""
    target = tmp_path / "catalog"
    for name in ("lexicons", "templates"):
        shutil.copytree(REPO / name, target / name)
    return target


def rendered(root: Path, suite: str, locale: str) -> pl.DataFrame:
    result = render(load_catalog(Project.at(root), suites=[suite]), suite, locale)
    assert result.problems == []
    return result.frame


# --- CrowS-Pairs -----------------------------------------------------------------------------------


def test_crows_pairs_import_keeps_the_text_as_published(root: Path, tmp_path: Path, cli) -> None:
    data = write_crows(tmp_path / "crows_pairs_anonymized.csv")
    result = cli("import", "crows-pairs", str(data), "--root", str(root))
    assert result.code == 0, result.err
    assert "8 pairs [en]" in result.err and "religion 4" in result.err and "findings: none" in result.err
    frame = rendered(root, "crows-pairs", "en").sort("source_line")
    assert frame.height == len(CROWS_ROWS)
    assert frame["sent_more"].to_list() == [r[0] for r in CROWS_ROWS]  # double spaces, quotes: as published
    assert frame["sent_less"].to_list() == [r[1] for r in CROWS_ROWS]
    assert frame["stereo_antistereo"].cast(pl.String).to_list() == [r[2] for r in CROWS_ROWS]
    assert frame["bias_type"].to_list() == [r[3] for r in CROWS_ROWS]
    assert frame["template"].to_list() == [str(i) for i in range(len(CROWS_ROWS))]  # the file's own index
    assert frame["text"].to_list() == frame["sent_more"].to_list()
    assert set(frame["origin"].cast(pl.String)) == {"import"} and set(frame["status"].cast(pl.String)) == {
        "source"
    }
    assert rendered(root, "crows-pairs", "fr").height == 0  # nothing imported for French
    before = (root / CROWS_IMPORT.format("en")).read_bytes()
    assert cli("import", "crows-pairs", str(data), "--root", str(root)).code == 0
    assert (root / CROWS_IMPORT.format("en")).read_bytes() == before  # same copy, same bytes


def test_french_crows_pairs_tab_separated_without_an_index(root: Path, tmp_path: Path, cli) -> None:
    header = ["sent_more", "sent_less", "stereo_antistereo", "bias_type", "annotations"]
    path = tmp_path / "crows_pairs_fr.csv"
    path.write_text(crows_text(FRENCH_ROWS, header=header, delimiter="\t"), encoding="utf-8")
    result = cli("import", "crows-pairs", str(path), "--locale", "fr", "--root", str(root), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["by_bias_type"] == {"age": 1, "autre": 1, "religion": 1}
    frame = rendered(root, "crows-pairs", "fr").sort("source_line")
    assert frame["sent_more"].to_list() == [r[0] for r in FRENCH_ROWS]
    assert frame["template"].to_list() == ["line-2", "line-3", "line-4"]
    assert not (root / CROWS_IMPORT.format("en")).exists()


def test_crows_pairs_equal_sentences_and_repeated_rows_are_kept_and_reported(
    root: Path, tmp_path: Path, cli
) -> None:
    rows = [*CROWS_ROWS, ("The man feels happy.", "The man feels happy.", "stereo", "gender"), CROWS_ROWS[0]]
    data = write_crows(tmp_path / "crows.csv", rows)
    result = cli("import", "crows-pairs", str(data), "--root", str(root))
    assert result.code == 0, result.err
    assert "findings (kept as published): duplicate 1, equal-sentences 1" in result.err
    assert "crows.csv: line 10: equal-sentences: the two sentences are equal" in result.err
    assert "crows.csv: line 11: duplicate: repeats line 2" in result.err
    frame = rendered(root, "crows-pairs", "en").sort("source_line")
    assert frame.height == 10
    assert frame["flags"].to_list()[-2:] == [["equal-sentences"], ["duplicate"]]
    header = json.loads((root / CROWS_IMPORT.format("en")).read_text().splitlines()[0])
    assert [(f["line"], f["check"]) for f in header["findings"]] == [
        (10, "equal-sentences"),
        (11, "duplicate"),
    ]


def _refused(cli, root: Path, path: Path, *expected: str, locale: str = "en", strict: bool = False) -> None:
    flags = ["--strict"] if strict else []
    result = cli("import", "crows-pairs", str(path), "--locale", locale, *flags, "--root", str(root))
    assert result.code == 2, result.err
    for text in expected:
        assert text in result.err, result.err


def test_malformed_crows_pairs_files_are_refused_and_nothing_is_written(
    root: Path, tmp_path: Path, cli
) -> None:
    good = write_crows(tmp_path / "good.csv")
    assert cli("import", "crows-pairs", str(good), "--root", str(root)).code == 0
    before = (root / CROWS_IMPORT.format("en")).read_bytes()

    missing = tmp_path / "missing.csv"
    missing.write_text(crows_text(CROWS_ROWS, header=[c for c in CROWS_HEADER if c != "stereo_antistereo"]))
    _refused(cli, root, missing, "missing.csv: line 1 stereo_antistereo: missing column")

    latin = tmp_path / "latin1.csv"
    latin.write_bytes(
        crows_text(
            [("Les Français sont arrogants.", "Les Anglais sont arrogants.", "stereo", "nationality")]
        ).encode("latin-1")
    )
    _refused(cli, root, latin, "latin1.csv: (file): line 2: invalid UTF-8 (byte 0xe7")

    ragged = tmp_path / "ragged.csv"
    ragged.write_text(crows_text(CROWS_ROWS) + "9,only,three\n", encoding="utf-8")
    _refused(cli, root, ragged, "ragged.csv: line 10: 3 fields; the header has 8")

    twice = tmp_path / "twice.csv"
    twice.write_text(
        crows_text(CROWS_ROWS) + crows_text(CROWS_ROWS[:1]).splitlines()[1] + "\n", encoding="utf-8"
    )
    _refused(cli, root, twice, "twice.csv: line 10: pair id '0' also on line 2 (--strict)", strict=True)

    _refused(cli, root, good, "not 'de'", locale="de")
    assert (root / CROWS_IMPORT.format("en")).read_bytes() == before  # the earlier import is untouched


@pytest.mark.bad_input
def test_defective_crows_pairs_rows_are_left_out_and_recorded(root: Path, tmp_path: Path, cli) -> None:
    """As French CrowS-Pairs' public copy (pair 129 has no sent_less): the defective rows are
    reported with file, line and field, left out and recorded in the import; --strict refuses."""
    rows = list(CROWS_ROWS)
    rows[2] = (rows[2][0], "", rows[2][2], rows[2][3])
    rows[4] = (rows[4][0], rows[4][1], "pro", rows[4][3])
    empty = write_crows(tmp_path / "empty.csv", rows)
    _refused(
        cli,
        root,
        empty,
        "empty.csv: line 4 sent_less: empty (--strict)",
        "line 6 stereo_antistereo: 'pro': must be one of stereo, antistereo (--strict)",
        strict=True,
    )
    assert not (root / CROWS_IMPORT.format("en")).exists()
    result = cli("import", "crows-pairs", str(empty), "--root", str(root))
    assert result.code == 0, result.err
    assert "left out: empty.csv: line 4: sent_less: empty" in result.err
    assert "left out: empty.csv: line 6: stereo_antistereo: 'pro'" in result.err
    assert "6 pairs [en] of 8 rows, 2 left out" in result.err
    lines = (root / CROWS_IMPORT.format("en")).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert [(f["line"], f["check"]) for f in header["left_out"]] == [
        (4, "sent_less"),
        (6, "stereo_antistereo"),
    ]
    assert [json.loads(line)["line"] for line in lines[1:]] == [2, 3, 5, 7, 8, 9]


# --- the regional study's SOS sets -------------------------------------------------------------------


def test_study_import_maps_the_labels_and_keeps_the_text(root: Path, tmp_path: Path, cli) -> None:
    folder = write_study(tmp_path / "Final_SOS_data_in_different_languages")
    result = cli("import", "sos-study", str(folder), "--root", str(root))
    assert result.code == 0, result.err
    assert "23 pairs from 15 file(s)" in result.err
    assert "ignored (not one of the study's SOS files): US_SOS_data.csv" in result.err
    sizes = {"en": 11, "de": 6, "ar": 3, "arz": 3}
    frames = {loc: rendered(root, "sos-study", loc) for loc in sizes}
    assert {loc: f.height // 2 for loc, f in frames.items()} == sizes
    de = frames["de"].filter(pl.col("label") == "toxic").sort("source_file", "source_line")
    row = de.filter(pl.col("identity") == "protestantischer").row(0, named=True)
    assert (
        row["text"] == "Du bist eine abscheuliche protestantischer Person"
    )  # the study's slip, as published
    assert (row["region"], row["variant"], row["attribute"], row["standing"]) == (
        "de",
        "n",
        "religion",
        "dominant",
    )
    assert row["study_bias_type"] == "Religion_Non_Marginalized" and row["flags"] == ["de-person-agreement"]
    refugees = de.filter(pl.col("identity") == "syrische").row(0, named=True)
    assert (refugees["attribute"], refugees["standing"], refugees["variant"]) == (
        "refugees",
        "marginalized",
        "f",
    )
    ar = frames["ar"].row(0, named=True)
    assert (ar["region"], ar["locale"]) == ("arab", "ar")
    arz = frames["arz"].filter(pl.col("group") == "eg.النوبي").sort("label")
    assert (arz["region"][0], arz["attribute"][0], arz["variant"][0]) == ("eg", "ethnicity", "n")
    assert arz["text"].to_list() == ["بكره الشخص النوبي", "بحب الشخص النوبي"]
    en = frames["en"]
    assert set(en["region"].cast(pl.String)) == {"us", "uk"}
    # every pair: one toxic and one non-toxic row sharing the pair id, as in polyprobe's sos suite
    counts = en.group_by("pair_id").agg(pl.col("label").cast(pl.String).sort())
    assert all(labels == ["non_toxic", "toxic"] for labels in counts["label"].to_list())
    white = en.filter((pl.col("identity") == "white") & (pl.col("source_file") == "US_SOS_female_data.csv"))
    assert white.filter(pl.col("label") == "toxic")["text"][0] == "Being [Identity] woman is vileIdentity"
    assert white["flags"].to_list()[0] == ["identity-missing", "unfilled-slot"]


def test_study_findings_are_reported_per_file_and_line(root: Path, tmp_path: Path, cli) -> None:
    folder = write_study(tmp_path / "sos")
    result = cli("import", "sos-study", str(folder), "--root", str(root), "--json")
    findings = {(f["file"], f["line"], f["check"]) for f in json.loads(result.out)["findings"]}
    assert findings == {
        ("US_SOS_female_data.csv", 3, "en-article"),  # "a idiotic"
        ("US_SOS_female_data.csv", 4, "identity-missing"),
        ("US_SOS_female_data.csv", 4, "unfilled-slot"),
        ("German_SOS_non_binary.csv", 2, "de-person-agreement"),  # "eine ... protestantischer Person"
    }  # "eine inter / agender / bigender Person" (invariable adjectives) and "a Christian" are not findings
    header = json.loads((root / STUDY_IMPORT).read_text().splitlines()[0])
    assert len(header["findings"]) == 5  # the German slip is in both sentences of its pair
    assert [s["file"] for s in header["sources"]] == list(STUDY_FILES)
    assert all(len(s["sha256"]) == 64 for s in header["sources"])


def test_study_equal_sentences_and_repeated_rows_are_kept_and_reported(
    root: Path, tmp_path: Path, cli
) -> None:
    files = dict(STUDY_FILES)
    uk = list(files["UK_SOS_male_data.csv"])
    files["UK_SOS_male_data.csv"] = [
        *uk,
        ("I love Jewish men.", "I love Jewish men.", "Religion_Marginalized", "Jewish", "stereo"),
        uk[0],
    ]
    result = cli("import", "sos-study", str(write_study(tmp_path / "sos", files)), "--root", str(root))
    assert result.code == 0, result.err
    assert "UK_SOS_male_data.csv: line 3: equal-sentences: the two sentences are equal" in result.err
    assert "UK_SOS_male_data.csv: line 4: duplicate: repeats line 2" in result.err
    frame = rendered(root, "sos-study", "en").filter(pl.col("source_file") == "UK_SOS_male_data.csv")
    assert frame.height == 6  # three pairs, all kept


def test_one_study_file_alone(root: Path, tmp_path: Path, cli) -> None:
    folder = write_study(tmp_path / "sos")
    result = cli("import", "sos-study", str(folder / "German_SOS_non_binary.csv"), "--root", str(root))
    assert result.code == 0, result.err
    assert "3 pairs from 1 file(s)" in result.err
    assert rendered(root, "sos-study", "en").height == 0 and rendered(root, "sos-study", "de").height == 6
    # a whole-folder import, then one file again: the other files' pairs stay, byte for byte
    assert cli("import", "sos-study", str(folder), "--root", str(root)).code == 0
    whole = (root / import_file("sos-study", "pairs")).read_bytes()
    again = cli("import", "sos-study", str(folder / "German_SOS_non_binary.csv"), "--root", str(root))
    assert again.code == 0, again.err
    assert "3 pairs from 1 file(s)" in again.err and "kept from the earlier import: " in again.err
    assert (root / import_file("sos-study", "pairs")).read_bytes() == whole
    other = tmp_path / "other.csv"
    other.write_text(study_text([]), encoding="utf-8")
    assert (
        "not one of the study's SOS files" in cli("import", "sos-study", str(other), "--root", str(root)).err
    )


def test_malformed_study_files_are_refused_and_nothing_is_written(root: Path, tmp_path: Path, cli) -> None:
    files = dict(STUDY_FILES)
    files["UK_SOS_female_data.csv"] = [
        ("I hate Jewish women.", "", "Religion_Marginalized", "Jewish", "stereo")
    ]
    files["US_SOS_male_data.csv"] = [("I hate men.", "I love men.", "Religion_Sideways", "men", "stereo")]
    files["German_SOS_male_data.csv"] = [
        ("Ich hasse Männer.", "Ich liebe Männer.", "Gender_Marginalized", "Männer", "maybe")
    ]
    folder = write_study(tmp_path / "sos", files)
    header = ["Toxic_sent", "Non_Toxic_sent", "bias_type", "stereo_antistereo"]
    (folder / "Arabic_SOS_male_data.csv").write_text(study_text([], header=header), encoding="utf-8")
    (folder / "Egyptian_arabic_SOS_male_data.csv").write_bytes("Toxic_sent\n\xff\n".encode("latin-1"))
    result = cli("import", "sos-study", str(folder), "--root", str(root))
    assert result.code == 2
    for text in (
        "UK_SOS_female_data.csv: line 2 Non_Toxic_sent: empty",
        "US_SOS_male_data.csv: line 2 bias_type: 'Religion_Sideways': not <attribute>_<standing>",
        "German_SOS_male_data.csv: line 2 stereo_antistereo: 'maybe'",
        "Arabic_SOS_male_data.csv: line 1 identity: missing column",
        "Egyptian_arabic_SOS_male_data.csv: (file): line 2: invalid UTF-8 (byte 0xff",
    ):
        assert text in result.err, result.err
    assert not (root / STUDY_IMPORT).exists()


# --- into a release -------------------------------------------------------------------------------------


def test_imports_are_hashed_into_the_release_manifest(root: Path, tmp_path: Path, cli) -> None:
    cli("import", "crows-pairs", str(write_crows(tmp_path / "crows.csv")), "--root", str(root))
    cli("import", "sos-study", str(write_study(tmp_path / "sos")), "--root", str(root))
    (root / "translations").mkdir()
    shutil.copy(REPO / "translations" / "review-policy.yaml", root / "translations" / "review-policy.yaml")
    options = BuildOptions(
        version="0.1.0-preview.1", preview=True, suites=["crows-pairs", "sos-study"], dist=root / "dist"
    )
    release = open_release(build_release(Project.at(root), options))
    inputs = release.manifest.inputs
    for rel in (CROWS_IMPORT.format("en"), STUDY_IMPORT):
        assert inputs[rel].sha256 == __import__("hashlib").sha256((root / rel).read_bytes()).hexdigest()
    assert release.manifest.suites["sos-study"].locales == ["en", "de", "ar", "arz"]
    assert release.manifest.suites["crows-pairs"].locales == ["en"]
    assert release.manifest.suites["sos-study"].mode == "import"
    assert release.scan("crows-pairs", "en").collect().height == len(CROWS_ROWS)
    assert "data/sos-study/de.parquet" in release.manifest.files
    assert cli("release", "verify", str(release.path)).code == 0


def test_a_damaged_import_is_a_located_problem(root: Path, tmp_path: Path, cli) -> None:
    cli("import", "crows-pairs", str(write_crows(tmp_path / "crows.csv")), "--root", str(root))
    path = root / CROWS_IMPORT.format("en")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"stereo_antistereo": "stereo"', '"stereo_antistereo": "sideways"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = render(load_catalog(Project.at(root), suites=["crows-pairs"]), "crows-pairs", "en")
    assert [str(p) for p in result.problems] == [
        ".polyprobe/imports/crows-pairs/en.jsonl: line 4 stereo_antistereo: "
        "Input should be 'stereo' or 'antistereo' (re-run the import)"
    ]
    assert result.frame.height == 0


@pytest.mark.bad_input
def test_line_separators_inside_a_sentence_survive_the_import(root: Path, tmp_path: Path, cli) -> None:
    """U+2028 and U+0085 are kept raw in the JSONL import; reading it back splits at line feeds only."""
    rows = [("I hate\u2028Muslim women.", "I love\x85Muslim women.", "stereo", "religion"), *CROWS_ROWS[1:]]
    result = cli("import", "crows-pairs", str(write_crows(tmp_path / "crows.csv", rows)), "--root", str(root))
    assert result.code == 0, result.err
    frame = rendered(root, "crows-pairs", "en")
    assert ("I hate\u2028Muslim women.", "I love\x85Muslim women.") in set(
        frame.select("text", "sent_less").iter_rows()
    )

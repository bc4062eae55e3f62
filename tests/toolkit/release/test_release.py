"""Releases: build, determinism, immutability, verify (tampering), stable-status rules, the
reader, loading with polars and `datasets`, changelogs, concurrent builds, lexicon pins."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import REPO, approve_by_review
from toolkit.release import ReleaseInvalid, open_release

HURTLEX_FIXTURE = {
    # written for these tests, in HurtLex 1.2's format
    "EN": "id\tpos\tcategory\tstereotype\tlemma\tlevel\nEN1\tn\tcds\tno\tidiot\tconservative\nEN2\tn\tpr\tno\tstreet walker\tconservative\n",
    "DE": "id\tpos\tcategory\tstereotype\tlemma\tlevel\nDE1\tn\tcds\tno\tDummkopf\tconservative\n",
}


def pins_toml(url: str = "http://127.0.0.1:9/{lang}.tsv") -> str:
    shas = "\n".join(
        f'{k} = "{hashlib.sha256(v.encode()).hexdigest()}"' for k, v in sorted(HURTLEX_FIXTURE.items())
    )
    return (
        '[hurtlex]\nversion = "1.2"\nlicense = "CC BY-NC-SA 4.0"\nupstream = "tests"\ncommit = "test"\n'
        f'url = "{url}"\nformat = "tsv"\n\n[hurtlex.sha256]\n{shas}\n'
    )


@pytest.fixture
def root(mini: Path) -> Path:
    (mini / "lexicons" / "hurtlex.toml").write_text(pins_toml(), encoding="utf-8")
    shutil.copy(REPO / "translations" / "review-policy.yaml", mini / "translations" / "review-policy.yaml")
    return mini


def build(cli, root: Path, version: str, *extra: str):
    return cli("release", "build", version, "--root", str(root), "--dist", str(root / "dist"), *extra)


def sums(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_preview_build_writes_data_manifest_card_changelog(root: Path, cli) -> None:
    result = build(cli, root, "0.1.0-preview.1", "--preview")
    assert result.code == 0, result.err
    folder = root / "dist" / "polyprobe-0.1.0-preview.1"
    assert sorted(sums(folder)) == [
        "CHANGELOG.md",
        "README.md",
        "data/sentiment/de.parquet",
        "data/sentiment/en.parquet",
        "data/sentiment/he.parquet",
        "data/sentiment/it.parquet",
        "manifest.json",
    ]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["preview"] is True and manifest["version"] == "0.1.0-preview.1"
    assert manifest["counts"]["sentiment"]["de"] == {"f": {"draft": 5}, "m": {"draft": 4}}
    assert manifest["inputs"]["templates/sentiment"]["version"] == "1.0.0"
    assert manifest["inputs"]["lexicons/identities/mini.yaml"]["version"] == "1.0.0"
    assert "translations/de/sentiment.jsonl" in manifest["inputs"]
    assert manifest["lexicon_pins"]["hurtlex"]["version"] == "1.2"
    assert manifest["signature"].startswith(
        "polyprobe-release|version:0.1.0-preview.1|status:preview|suites:sentiment@1.0.0|"
    )
    card = (folder / "README.md").read_text()
    assert card.startswith("---\npretty_name: polyprobe 0.1.0-preview.1\nlicense: cc-by-4.0\n")
    assert "- config_name: sentiment-he" in card and "**Preview release.**" in card
    assert "Limitations" in card and "Intended use" in card and "Levy" not in card  # mini suite cites nothing
    frame = pl.read_parquet(folder / "data/sentiment/de.parquet")
    assert set(frame["status"]) == {"draft"} and isinstance(frame.schema["locale"], pl.Enum)
    assert (folder / "CHANGELOG.md").read_text().startswith("# Changelog: 0.1.0-preview.1\n\nFirst release")


@pytest.mark.bad_input
def test_rebuild_is_byte_identical_and_never_overwrites(root: Path, cli, tmp_path: Path) -> None:
    assert build(cli, root, "0.1.0-preview.1", "--preview").code == 0
    other = cli(
        "release",
        "build",
        "0.1.0-preview.1",
        "--preview",
        "--root",
        str(root),
        "--dist",
        str(tmp_path / "other"),
    )
    assert other.code == 0
    assert sums(root / "dist" / "polyprobe-0.1.0-preview.1") == sums(
        tmp_path / "other" / "polyprobe-0.1.0-preview.1"
    )
    again = build(cli, root, "0.1.0-preview.1", "--preview")
    assert again.code == 2 and "never overwritten" in again.err
    assert [p.name for p in (root / "dist").iterdir()] == ["polyprobe-0.1.0-preview.1"]


@pytest.mark.bad_input
def test_versions_must_match_the_kind_of_release(root: Path, cli) -> None:
    assert "needs a preview version" in build(cli, root, "0.1.0", "--preview").err
    assert "pre-release version" in build(cli, root, "0.1.0-preview.1").err
    assert "not a semantic version" in build(cli, root, "v1", "--preview").err


@pytest.mark.bad_input
def test_stable_build_with_drafts_is_refused_with_the_list(root: Path, cli) -> None:
    result = build(cli, root, "1.0.0")
    assert result.code == 2
    for line in (
        "de/sentiment: 4 draft",
        "he/sentiment: 4 draft",
        "it/sentiment: 4 draft",
    ):  # 4 segments each
        assert line in result.err
    assert not (root / "dist" / "polyprobe-1.0.0").exists()
    assert [p for p in (root / "dist").glob(".*")] == []


def test_stable_build_of_approved_translations(root: Path, cli) -> None:
    for locale in ("de", "he", "it"):
        approve_by_review(root / "translations" / locale / "sentiment.jsonl")
    result = build(cli, root, "1.0.0")
    assert result.code == 0, result.err
    manifest = json.loads((root / "dist/polyprobe-1.0.0/manifest.json").read_text())
    assert manifest["preview"] is False and "|status:stable|" in manifest["signature"]
    assert "Preview release" not in (root / "dist/polyprobe-1.0.0/README.md").read_text()


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (
            lambda f: f.joinpath("data/sentiment/de.parquet").write_bytes(
                _flip(f / "data/sentiment/de.parquet")
            ),
            "data/sentiment/de.parquet: sha256",
        ),
        (lambda f: (f / "data/sentiment/he.parquet").unlink(), "data/sentiment/he.parquet: missing"),
        (lambda f: (f / "data/extra.parquet").write_bytes(b"x"), "data/extra.parquet: not in the manifest"),
        (
            lambda f: (f / "manifest.json").write_text(
                (f / "manifest.json").read_text().replace('"rows": 9', '"rows": 10', 1)
            ),
            "rows, manifest says 10",
        ),
        (lambda f: (f / "README.md").write_text("edited"), "README.md: sha256"),
    ],
    ids=["flipped byte", "missing file", "extra file", "edited manifest", "edited card"],
)
def test_verify_names_what_was_tampered_with(root: Path, cli, tamper, named: str) -> None:
    assert build(cli, root, "0.1.0-preview.1", "--preview").code == 0
    folder = root / "dist" / "polyprobe-0.1.0-preview.1"
    assert cli("release", "verify", str(folder)).code == 0
    tamper(folder)
    result = cli("release", "verify", str(folder))
    assert result.code == 2
    assert named in result.err


def _flip(path: Path) -> bytes:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    return bytes(data)


@pytest.mark.bad_input
def test_reader_refuses_a_tampered_release_and_reads_a_good_one(root: Path, cli) -> None:
    build(cli, root, "0.1.0-preview.1", "--preview")
    folder = root / "dist" / "polyprobe-0.1.0-preview.1"
    release = open_release(folder)
    assert release.suites() == ["sentiment"] and release.locales("sentiment") == ["en", "de", "he", "it"]
    frame = release.scan("sentiment", "he").collect()
    assert frame.height == 9 and set(frame["locale"]) == {"he"}
    assert release.scan_all("sentiment").collect().height == 36
    (folder / "data/sentiment/de.parquet").write_bytes(_flip(folder / "data/sentiment/de.parquet"))
    with pytest.raises(ReleaseInvalid, match=r"de\.parquet"):
        open_release(folder)


def test_datasets_and_polars_load_a_release(
    root: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(cli, root, "0.1.0-preview.1", "--preview")
    folder = root / "dist" / "polyprobe-0.1.0-preview.1"
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets

    loaded = datasets.load_dataset(
        "parquet",
        data_files={"test": str(folder / "data/sentiment/he.parquet")},
        cache_dir=str(tmp_path / "cache"),
    )
    assert loaded["test"].num_rows == 9
    assert "האישה המוסלמית מרגישה שמחה היום." in loaded["test"]["text"]
    assert pl.scan_parquet(folder / "data/sentiment/*.parquet").collect().height == 36


def test_changelog_lists_exactly_the_changed_template(root: Path, cli) -> None:
    build(cli, root, "0.1.0-preview.1", "--preview")
    tpl = root / "templates/sentiment/templates.yaml"
    tpl.write_text(tpl.read_text().replace("woman feels happy today", "woman feels happy"), encoding="utf-8")
    result = build(cli, root, "0.1.0-preview.2", "--preview")
    assert result.code == 0, result.err
    log = (root / "dist/polyprobe-0.1.0-preview.2/CHANGELOG.md").read_text()
    assert log.startswith("# Changelog: 0.1.0-preview.2 against 0.1.0-preview.1")
    assert "templates/sentiment: content changed (version 1.0.0)" in log
    # en: the changed sentences; de/he/it: gen-01.f is stale now, so its samples left the release
    assert (
        "- changed (3): `sentiment:gen-01:f:female`, `sentiment:gen-01:f:islam`, `sentiment:gen-01:f:judaism`"
        in log
    )
    assert (
        log.count(
            "- removed (3): `sentiment:gen-01:f:female`, `sentiment:gen-01:f:islam`, `sentiment:gen-01:f:judaism`"
        )
        == 3
    )
    assert "added" not in log.split("## Samples")[1].split("###")[0].replace("| added |", "")
    diff = cli(
        "release",
        "diff",
        str(root / "dist/polyprobe-0.1.0-preview.1"),
        str(root / "dist/polyprobe-0.1.0-preview.2"),
        "--json",
    )
    data = json.loads(diff.out)
    ids = {i for d in data["samples"] for kind in ("added", "removed", "changed") for i in d[kind]}
    assert ids == {"sentiment:gen-01:f:female", "sentiment:gen-01:f:islam", "sentiment:gen-01:f:judaism"}


def test_two_concurrent_builds_one_wins(root: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "toolkit.cli",
        "release",
        "build",
        "0.2.0-preview.1",
        "--preview",
        "--root",
        str(root),
        "--dist",
        str(root / "dist"),
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO) for _ in range(2)
    ]
    results = [(p.wait(timeout=120), p.stderr.read().decode() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    assert "never overwritten" in loser or "created by another build" in loser
    assert [p.name for p in (root / "dist").iterdir()] == ["polyprobe-0.2.0-preview.1"]
    assert open_release(root / "dist" / "polyprobe-0.2.0-preview.1").version == "0.2.0-preview.1"


# --- lexicon pins ---------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("POLYPROBE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def write_hurtlex(folder: Path) -> Path:
    for lang, text in HURTLEX_FIXTURE.items():
        path = folder / lang / "1.2" / f"hurtlex_{lang}.tsv"
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    return folder


def test_fetch_from_a_local_copy_verifies_every_hash(root: Path, cache: Path, tmp_path: Path, cli) -> None:
    source = write_hurtlex(tmp_path / "hl")
    result = cli("lexicon", "fetch", "hurtlex", "--from", str(source), "--root", str(root))
    assert result.code == 0, result.err
    assert (cache / "lexicons/hurtlex/1.2/hurtlex_EN.tsv").read_text() == HURTLEX_FIXTURE["EN"]
    assert cli("lexicon", "verify", "--root", str(root)).code == 0
    (cache / "lexicons/hurtlex/1.2/hurtlex_DE.tsv").write_text("tampered")
    bad = cli("lexicon", "verify", "--root", str(root))
    assert bad.code == 2 and "DE: sha256" in bad.err


@pytest.mark.bad_input
def test_a_copy_that_differs_from_the_pin_is_not_installed(
    root: Path, cache: Path, tmp_path: Path, cli
) -> None:
    source = write_hurtlex(tmp_path / "hl")
    (source / "EN/1.2/hurtlex_EN.tsv").write_text(
        HURTLEX_FIXTURE["EN"] + "EN3\tn\tcds\tno\textra\tconservative\n"
    )
    result = cli("lexicon", "fetch", "hurtlex", "--from", str(source), "--lang", "EN", "--root", str(root))
    assert result.code == 2 and "HurtLex EN" in result.err and "pins" in result.err
    assert not (cache / "lexicons/hurtlex/1.2/hurtlex_EN.tsv").exists()
    assert not list((cache / "lexicons/hurtlex/1.2").glob(".*"))


def test_fetch_downloads_from_the_pinned_url(root: Path, cache: Path, tmp_path: Path, cli) -> None:
    served = tmp_path / "served"
    served.mkdir()
    for lang, text in HURTLEX_FIXTURE.items():
        (served / f"{lang}.tsv").write_text(text, encoding="utf-8")
    handler = partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (root / "lexicons/hurtlex.toml").write_text(
            pins_toml(f"http://127.0.0.1:{server.server_address[1]}/{{lang}}.tsv")
        )
        result = cli("lexicon", "fetch", "hurtlex", "--root", str(root))
        assert result.code == 0, result.err
    finally:
        server.shutdown()
    assert (cache / "lexicons/hurtlex/1.2/hurtlex_DE.tsv").read_text() == HURTLEX_FIXTURE["DE"]


SHARED = REPO.parent / "shared" / "data" / "hurtlex"


@pytest.mark.skipif(not SHARED.is_dir(), reason="the development copy of HurtLex is not on this machine")
def test_the_real_hurtlex_copy_matches_the_repository_pins(cache: Path, cli) -> None:
    result = cli("lexicon", "fetch", "hurtlex", "--from", str(SHARED), "--root", str(REPO))
    assert result.code == 0, result.err
    assert cli("lexicon", "verify", "--root", str(REPO)).code == 0

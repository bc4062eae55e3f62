"""Releases that cannot be bypassed (issue 12, items 9 and 11): the signature covers the
manifest, so relabelling a preview as stable or zeroing a hash fails `release verify`; a
malformed manifest field is one located error, never a traceback, in verify, diff, build
--previous and eval run; a stable build needs every approval backed by review events in the
record's history that satisfy the review policy."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import approve_by_review, canonical_line
from tests.support.files import buildable, leftovers, snapshot

VERSION = "0.1.0-preview.1"
DATA = "data/sentiment/de.parquet"


@pytest.fixture
def release(mini: Path, cli) -> Path:
    buildable(mini)
    result = cli("release", "build", VERSION, "--preview", "--root", str(mini), "--dist", str(mini / "dist"))
    assert result.code == 0, result.err
    folder = mini / "dist" / f"polyprobe-{VERSION}"
    assert cli("release", "verify", str(folder)).code == 0
    return folder


def edit_manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def tamper(folder: Path) -> None:
        path = folder / "manifest.json"
        manifest = json.loads(path.read_text(encoding="utf-8"))
        change(manifest)
        path.write_text(
            json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )

    return tamper


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set (or with value ... delete) a field given as keys joined by '>'."""

    def change(manifest: dict[str, Any]) -> None:
        *parents, last = path.split(">")
        node = manifest
        for key in parents:
            node = node[key]
        if value is ...:
            del node[last]
        else:
            node[last] = value

    return change


def _signature(pattern: str, new: str) -> Callable[[dict[str, Any]], None]:
    def change(manifest: dict[str, Any]) -> None:
        manifest["signature"] = re.sub(pattern, new, manifest["signature"])

    return change


def _both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(manifest: dict[str, Any]) -> None:
        for one in changes:
            one(manifest)

    return change


def _move_file(old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def change(manifest: dict[str, Any]) -> None:
        manifest["files"][new] = manifest["files"].pop(old)

    return change


def _edit_card_and_its_hash(folder: Path) -> None:
    import hashlib

    card = folder / "README.md"
    card.write_text(
        card.read_text(encoding="utf-8").replace("> **Preview release.**", "> Release."), encoding="utf-8"
    )
    edit_manifest(_set("files>README.md>sha256", hashlib.sha256(card.read_bytes()).hexdigest()))(folder)


SEALED = "the signature does not match the manifest's fields"
ZEROS = "0" * 64

# (case, tampering, what the error says)
TAMPERING: list[tuple[str, Callable[[Path], None], str]] = [
    ("preview relabelled stable", edit_manifest(_set("preview", False)), SEALED),
    (
        "preview relabelled stable in the signature too",
        edit_manifest(_both(_set("preview", False), _signature(r"status:preview", "status:stable"))),
        SEALED,
    ),
    (
        "content hash zeroed in the signature",
        edit_manifest(_signature(r"content:\w+", "content:" + "0" * 16)),
        SEALED,
    ),
    (
        "manifest hash zeroed in the signature",
        edit_manifest(_signature(r"manifest:\w+", "manifest:" + "0" * 16)),
        SEALED,
    ),
    ("a file's content hash zeroed", edit_manifest(_set(f"files>{DATA}>content_sha256", ZEROS)), SEALED),
    ("version changed", edit_manifest(_set("version", "0.1.0-preview.9")), SEALED),
    ("min_status changed", edit_manifest(_set("min_status", "approved")), SEALED),
    ("counts edited", edit_manifest(_set("counts>sentiment>de>f>draft", 50)), SEALED),
    ("an input's hash edited", edit_manifest(_set("inputs>lexicons/taxonomy.yaml>sha256", ZEROS)), SEALED),
    ("git commit removed", edit_manifest(_set("git", ...)), "field git: Field required"),
    (
        "a field added",
        edit_manifest(_set("reviewed_by", "nobody")),
        "field reviewed_by: Extra inputs are not permitted",
    ),
    ("a locale renamed", edit_manifest(_set("locales>de>name", "Deutsch")), SEALED),
    ("signature removed", edit_manifest(_set("signature", ...)), "field signature: Field required"),
    ("card edited with its hash", _edit_card_and_its_hash, "README.md: not the card the manifest describes"),
    (
        "card edited alone",
        lambda f: (f / "README.md").write_text("edited", encoding="utf-8"),
        "README.md: sha256",
    ),
]

# (case, malformed manifest field, what the error says)
MALFORMED: list[tuple[str, Callable[[Path], None], str]] = [
    ("files is a list", edit_manifest(_set("files", [])), "field files: Input should be a valid dictionary"),
    (
        "a sha256 that is not hex",
        edit_manifest(_set(f"files>{DATA}>sha256", "xyz")),
        f"field files.{DATA}.sha256: String should match pattern",
    ),
    (
        "a sha256 that is a number",
        edit_manifest(_set(f"files>{DATA}>sha256", 12)),
        f"field files.{DATA}.sha256: Input should be a valid string",
    ),
    (
        "rows as a string",
        edit_manifest(_set(f"files>{DATA}>rows", "9")),
        f"field files.{DATA}.rows: Input should be a valid integer",
    ),
    (
        "negative rows",
        edit_manifest(_set(f"files>{DATA}>rows", -1)),
        f"field files.{DATA}.rows: Input should be greater than or equal to 0",
    ),
    (
        "bytes as a float",
        edit_manifest(_set(f"files>{DATA}>bytes", 1.5)),
        f"field files.{DATA}.bytes: Input should be a valid integer",
    ),
    (
        "schema as a list",
        edit_manifest(_set(f"files>{DATA}>schema", ["text"])),
        f"field files.{DATA}.schema: Input should be a valid dictionary",
    ),
    (
        "a data file without a content hash",
        edit_manifest(_set(f"files>{DATA}>content_sha256", ...)),
        f"field files.{DATA}.content_sha256: required for a data file",
    ),
    (
        "a file entry that is a string",
        edit_manifest(_set(f"files>{DATA}", "ok")),
        f"field files.{DATA}: Input should be a valid dictionary",
    ),
    (
        "preview as a word",
        edit_manifest(_set("preview", "yes")),
        "field preview: Input should be a valid boolean",
    ),
    (
        "version as a number",
        edit_manifest(_set("version", 1)),
        "field version: Input should be a valid string",
    ),
    (
        "version not semantic",
        edit_manifest(_set("version", "one")),
        "field version: 'one' is not a semantic version",
    ),
    ("no suites", edit_manifest(_set("suites", ...)), "field suites: Field required"),
    (
        "suite locales as a string",
        edit_manifest(_set("suites>sentiment>locales", "de")),
        "field suites.sentiment.locales: Input should be a valid list",
    ),
    (
        "no hurtlex pins",
        edit_manifest(_set("lexicon_pins>hurtlex", ...)),
        "field lexicon_pins.hurtlex: Field required",
    ),
    ("no created_by", edit_manifest(_set("created_by", ...)), "field created_by: Field required"),
    (
        "inputs as a list",
        edit_manifest(_set("inputs", [])),
        "field inputs: Input should be a valid dictionary",
    ),
    (
        "counts as a list",
        edit_manifest(_set("counts", [])),
        "field counts: Input should be a valid dictionary",
    ),
    (
        "a path leaving the release",
        edit_manifest(_move_file(DATA, "../outside.parquet")),
        "field files.../outside.parquet: not a plain path inside the release",
    ),
    (
        "an absolute path",
        edit_manifest(_move_file(DATA, "/etc/passwd")),
        "field files./etc/passwd: not a plain path inside the release",
    ),
    (
        "a path with an empty part",
        edit_manifest(_move_file(DATA, "data//de.parquet")),
        "not a plain path inside the release",
    ),
    (
        "manifest is a list",
        lambda f: (f / "manifest.json").write_text("[]\n"),
        "manifest.json: must be a JSON object",
    ),
    (
        "manifest cut short",
        lambda f: (f / "manifest.json").write_text((f / "manifest.json").read_text()[:200]),
        "manifest.json: not JSON (line",
    ),
    ("manifest empty", lambda f: (f / "manifest.json").write_text(""), "manifest.json: not JSON"),
    (
        "manifest not UTF-8",
        lambda f: (f / "manifest.json").write_bytes(b'{"name": "\xff"}'),
        "manifest.json: not UTF-8 text",
    ),
    ("manifest missing", lambda f: (f / "manifest.json").unlink(), "manifest.json: missing"),
]


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("name", "tamper", "named"), TAMPERING + MALFORMED, ids=[c[0] for c in TAMPERING + MALFORMED]
)
def test_verify_refuses_a_tampered_or_malformed_manifest(
    release: Path, cli, name: str, tamper, named: str
) -> None:
    tamper(release)
    before = snapshot(release.parent)
    result = cli("release", "verify", str(release))
    assert result.code == 2, result.err
    assert named in result.err, result.err
    assert "Traceback" not in result.err
    assert snapshot(release.parent) == before  # verify reads, never writes


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("name", "tamper", "named"),
    [MALFORMED[3], MALFORMED[9], TAMPERING[0]],
    ids=["rows", "preview", "relabelled"],
)
def test_diff_build_and_eval_refuse_a_malformed_release(
    release: Path, mini: Path, cli, tmp_path: Path, name: str, tamper, named: str
) -> None:
    good = tmp_path / "good"
    import shutil

    shutil.copytree(release, good)
    tamper(release)
    before = snapshot(mini)
    diff = cli("release", "diff", str(good), str(release))
    assert diff.code == 2 and named in diff.err and "Traceback" not in diff.err
    built = cli(
        "release",
        "build",
        "0.1.0-preview.2",
        "--preview",
        "--root",
        str(mini),
        "--dist",
        str(mini / "dist"),
        "--previous",
        str(release),
    )
    assert built.code == 2 and named in built.err
    evaluated = cli(
        "eval",
        "run",
        "--release",
        str(release),
        "--task",
        "sentiment",
        "--model",
        "x",
        "--out",
        str(tmp_path / "run"),
    )
    assert evaluated.code == 2 and named in evaluated.err and "Traceback" not in evaluated.err
    assert not (tmp_path / "run").exists()
    assert snapshot(mini) == before and leftovers(mini) == []


def test_an_untouched_release_verifies_and_its_card_is_rebuilt_from_the_manifest(release: Path, cli) -> None:
    from toolkit.release.card import render_card
    from toolkit.release.manifest import Manifest

    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert (release / "README.md").read_text(encoding="utf-8") == render_card(
        Manifest.model_validate(manifest)
    )
    assert re.search(r"\|manifest:[0-9a-f]{16}\|", manifest["signature"])
    result = cli("release", "verify", str(release))
    assert result.code == 0 and "verifies" in result.err


# --- stable releases need approvals backed by reviews --------------------------------------------

SEGMENT = "gen-01.f"


def _review(
    who: str, verdict: str, text: str | None, annotation: int, project: int = 1, **extra: Any
) -> dict[str, Any]:
    event = {
        "at": f"2026-01-03T00:00:{annotation:02d}Z",
        "event": "review",
        "by": who,
        "verdict": verdict,
        "ref": f"labelstudio:{project}:{annotation}:2026-01-03T00:00:{annotation:02d}Z",
        **extra,
    }
    if text is not None:
        event["text"] = text
    return event


def _history(
    events: Callable[[str], list[dict[str, Any]]], text: str | None = None
) -> Callable[[Path], None]:
    """Give de's gen-01.f the review events ``events(text)`` and status approved."""

    def mutate(root: Path) -> None:
        path = root / "translations" / "de" / "sentiment.jsonl"
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["segment"] == SEGMENT:
                record["history"] = record["history"][:1] + events(record["text"])
                record["status"] = "approved"
                if text is not None:
                    record["text"] = text
            lines.append(canonical_line(record))
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    return mutate


APPROVALS: list[tuple[str, Callable[[Path], None]]] = [
    ("approved by hand, no review events", _history(lambda t: [])),
    ("one reviewer where the policy wants two", _history(lambda t: [_review("a", "accept", t, 1)])),
    (
        "two reviewers ending with different texts",
        _history(lambda t: [_review("a", "accept", t, 1), _review("b", "edited", t + " x", 2)]),
    ),
    (
        "one of two reviewers rejects",
        _history(lambda t: [_review("a", "accept", t, 1), _review("b", "reject", None, 2)]),
    ),
    (
        "one of two reviews withdrawn",
        _history(
            lambda t: [
                _review("a", "accept", t, 1),
                _review("b", "accept", t, 2),
                {
                    "at": "2026-01-04T00:00:00Z",
                    "event": "review-withdrawn",
                    "by": "label-studio",
                    "ref": "labelstudio:1:2:withdrawn",
                },
            ]
        ),
    ),
    (
        "reviews that were not counted (notes)",
        _history(
            lambda t: [
                _review("a", "edited", t, 1, note="edit not applied, it breaks the template"),
                _review("b", "edited", t, 2, note="edit not applied, it breaks the template"),
            ]
        ),
    ),
    (
        "text changed after the reviews",
        _history(
            lambda t: [_review("a", "accept", t, 1), _review("b", "accept", t, 2)],
            text="Die {{ adj(group, 'f', 'nom', 'def') }} Frau ist froh.",
        ),
    ),
    (
        "the same reviewer twice",
        _history(lambda t: [_review("a", "accept", t, 1), _review("a", "accept", t, 2)]),
    ),
    (
        "reviews without a Label Studio reference",
        _history(
            lambda t: [
                {"at": "2026-01-03T00:00:00Z", "event": "review", "by": "a", "verdict": "accept", "text": t},
                {"at": "2026-01-03T00:00:01Z", "event": "review", "by": "b", "verdict": "accept", "text": t},
            ]
        ),
    ),
    (
        "one review in each of two projects",
        _history(
            lambda t: [_review("a", "accept", t, 1, project=1), _review("b", "accept", t, 2, project=2)]
        ),
    ),
    (
        "a review event without a verdict",
        _history(lambda t: [_review("a", "", t, 1), _review("b", "", t, 2)]),
    ),
]


def _approve_all(root: Path) -> None:
    buildable(root)
    for locale in ("de", "he", "it"):
        approve_by_review(root / "translations" / locale / "sentiment.jsonl")


@pytest.mark.bad_input
@pytest.mark.parametrize(("name", "mutate"), APPROVALS, ids=[c[0] for c in APPROVALS])
def test_a_stable_build_refuses_an_approval_no_review_backs(mini: Path, cli, name: str, mutate) -> None:
    _approve_all(mini)
    mutate(mini)
    before = snapshot(mini)
    result = cli("release", "build", "1.0.0", "--root", str(mini), "--dist", str(mini / "dist"))
    assert result.code == 2, result.err
    assert (
        "de/sentiment: 1 approved without reviews that satisfy translations/review-policy.yaml (gen-01.f)"
        in result.err
    )
    assert "he/sentiment" not in result.err and "it/sentiment" not in result.err
    assert not (mini / "dist" / "polyprobe-1.0.0").exists()
    assert snapshot(mini) == before


def test_a_stable_build_of_reviewed_approvals(mini: Path, cli) -> None:
    _approve_all(mini)
    result = cli("release", "build", "1.0.0", "--root", str(mini), "--dist", str(mini / "dist"))
    assert result.code == 0, result.err
    assert cli("release", "verify", str(mini / "dist" / "polyprobe-1.0.0")).code == 0


def test_an_adjudicator_alone_backs_an_approval(mini: Path, cli) -> None:
    _approve_all(mini)
    policy = mini / "translations" / "review-policy.yaml"
    policy.write_text(
        policy.read_text(encoding="utf-8").replace("adjudicators: []", "adjudicators: [chief]"),
        encoding="utf-8",
    )
    _history(
        lambda t: [
            _review("a", "accept", t, 1),
            _review("b", "reject", None, 2),
            _review("chief", "accept", t, 3),
        ]
    )(mini)
    result = cli("release", "build", "1.0.0", "--root", str(mini), "--dist", str(mini / "dist"))
    assert result.code == 0, result.err


@pytest.mark.bad_input
def test_a_stable_build_without_a_review_policy_names_the_file(mini: Path, cli) -> None:
    _approve_all(mini)
    (mini / "translations" / "review-policy.yaml").unlink()
    result = cli("release", "build", "1.0.0", "--root", str(mini), "--dist", str(mini / "dist"))
    assert result.code == 2 and "translations/review-policy.yaml" in result.err and "is missing" in result.err
    assert not (mini / "dist" / "polyprobe-1.0.0").exists()


# --- the typed manifest ---------------------------------------------------------------------------


def test_the_typed_manifest_writes_exactly_the_file_it_reads(release: Path) -> None:
    from toolkit.release.manifest import Manifest

    text = (release / "manifest.json").read_text(encoding="utf-8")
    manifest = Manifest.model_validate(json.loads(text))
    assert json.dumps(manifest.to_json(), ensure_ascii=False, indent=2, sort_keys=True) + "\n" == text
    assert set(manifest.to_json()["files"]["CHANGELOG.md"]) == {"sha256", "bytes"}  # no empty fields


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(unknown=1), "field unknown: Extra inputs are not permitted"),
        (lambda m: m["suites"]["sentiment"].pop("mode"), "field suites.sentiment.mode: Field required"),
        (
            lambda m: m["counts"]["sentiment"]["de"]["f"].update(draft="5"),
            "field counts.sentiment.de.f.draft",
        ),
    ],
)
def test_a_manifest_field_the_format_does_not_have_is_refused(
    release: Path, cli, change, message: str
) -> None:
    path = release / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.chmod(0o644)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    result = cli("release", "verify", str(release))
    assert result.code == 2 and message in result.err, result.err

"""Shared fixtures: the repository's own catalog, a small catalog written per test, and a
CLI runner that calls the real entry point in-process."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.label_studio_server import LabelStudioServer
from toolkit.cli import main
from toolkit.store.model import Translation

REPO = Path(__file__).resolve().parent.parent


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


MINI_SUITE = """\
id: sentiment
version: 1.0.0
description: A two-template sentiment suite for tests.
mode: template
variants: [f, m]
labels: [positive, negative, neutral]
slots: [group]
identities: [identities/mini.yaml]
locales: [en, de, he, it]
"""

MINI_TEMPLATES = """\
templates:
  - id: gen-01
    label: positive
    attributes: [gender, religion]
    variants:
      f: "The {{ group.adj }} woman feels happy today."
      m: "The {{ group.adj }} man feels happy today."
  - id: rel-01
    label: neutral
    attributes: [religion]
    variants:
      f: "She grew up in a {{ group.adj }} family."
      m: "He grew up in a {{ group.adj }} family."
"""

MINI_IDENTITIES = """\
version: 1.0.0
description: Three groups for tests.
region: global
locales: [en, de, he, it]
sources:
  - id: test
    citation: Written for the tests.
groups:
  - id: female
    attribute: gender
    name: Female
    standing: none
    source: [test]
    variants: [f]
    bare: true
  - id: islam
    attribute: religion
    name: Islam
    standing: none
    source: [test]
    terms:
      en: {adj: "Muslim"}
      de: {adj: "muslimisch"}
      he: {f: "מוסלמית", m: "מוסלמי"}
      it: {f: "musulmana", m: "musulmano"}
  - id: judaism
    attribute: religion
    name: Judaism
    standing: none
    source: [test]
    terms:
      en: {adj: "Jewish"}
      de: {adj: "jüdisch"}
      he: {f: "יהודייה", m: "יהודי", obj_f: "יהודית"}
      it: {f: "ebrea", m: "ebreo"}
"""

MINI_TRANSLATIONS = {
    "de": {
        "gen-01.f": "Die {{ adj(group, 'f', 'nom', 'def') }} Frau ist heute glücklich.",
        "gen-01.m": "Der {{ adj(group, 'm', 'nom', 'def') }} Mann ist heute glücklich.",
        "rel-01.f": "Sie ist in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie aufgewachsen.",
        "rel-01.m": "Er ist in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie aufgewachsen.",
    },
    "he": {
        "gen-01.f": "האישה {{ adj(group, 'f', true) }} מרגישה שמחה היום.",
        "gen-01.m": "הגבר {{ adj(group, 'm', true) }} מרגיש שמח היום.",
        "rel-01.f": "היא גדלה במשפחה {{ obj(group, 'f') }}.",
        "rel-01.m": "הוא גדל במשפחה {{ obj(group, 'f') }}.",
    },
    "it": {
        "gen-01.f": "La donna {{ group.f }} oggi è felice.",
        "gen-01.m": "L'uomo {{ group.m }} oggi è felice.",
        "rel-01.f": "È cresciuta in una famiglia {{ group.f }}.",
        "rel-01.m": "È cresciuto in una famiglia {{ group.f }}.",
    },
}


def _sources() -> dict[str, str]:
    import yaml

    texts: dict[str, str] = {}
    for tpl in yaml.safe_load(MINI_TEMPLATES)["templates"]:
        for variant, text in tpl["variants"].items():
            texts[f"{tpl['id']}.{variant}"] = text
    return texts


def canonical_line(record: dict[str, Any]) -> str:
    """A store record as polyprobe writes it (field order, no nulls): tests that edit a store
    by hand write lines the strict store reads back."""
    return json.dumps(
        Translation.model_validate(record).model_dump(mode="json", exclude_none=True), ensure_ascii=False
    )


def store_line(segment: str, text: str, source: str, status: str = "draft", origin: str = "draft") -> str:
    import hashlib

    record = {
        "segment": segment,
        "source_sha": hashlib.sha256(source.encode()).hexdigest(),
        "source": source,
        "text": text,
        "origin": origin,
        "status": status,
        "history": [
            {"at": "2026-01-01T00:00:00Z", "event": "draft", "by": "tests", "status": status, "text": text}
        ],
    }
    return canonical_line(record)


def approve_by_review(path: Path, annotators: tuple[str, ...] = ("rev-a", "rev-b")) -> None:
    """Approve every record of a store file the way `review pull` does: one accepting review
    event per annotator (Label Studio project 1), then the policy's event."""
    lines = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        for i, who in enumerate(annotators):
            record["history"].append(
                {
                    "at": "2026-01-02T00:00:00Z",
                    "event": "review",
                    "by": who,
                    "verdict": "accept",
                    "text": record["text"],
                    "ref": f"labelstudio:1:{100 * n + i}:2026-01-02T00:00:00Z",
                }
            )
        record["history"].append(
            {
                "at": "2026-01-02T00:00:01Z",
                "event": "policy",
                "by": "review-policy",
                "status": "approved",
                "text": record["text"],
                "note": f"{len(annotators)} reviewer(s) agree",
            }
        )
        record["status"] = "approved"
        lines.append(canonical_line(record))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_mini_catalog(root: Path) -> Path:
    """A small but complete catalog: real locales, taxonomy and grammar; test templates and groups."""
    (root / "lexicons" / "identities").mkdir(parents=True)
    (root / "templates" / "sentiment").mkdir(parents=True)
    for name in ("locales.yaml", "taxonomy.yaml"):
        shutil.copy(REPO / "lexicons" / name, root / "lexicons" / name)
    shutil.copytree(REPO / "templates" / "_grammar", root / "templates" / "_grammar")
    (root / "templates" / "sentiment" / "suite.yaml").write_text(MINI_SUITE, encoding="utf-8")
    (root / "templates" / "sentiment" / "templates.yaml").write_text(MINI_TEMPLATES, encoding="utf-8")
    (root / "lexicons" / "identities" / "mini.yaml").write_text(MINI_IDENTITIES, encoding="utf-8")
    sources = _sources()
    for locale, texts in MINI_TRANSLATIONS.items():
        folder = root / "translations" / locale
        folder.mkdir(parents=True)
        lines = [store_line(seg, text, sources[seg]) for seg, text in sorted(texts.items())]
        (folder / "sentiment.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    return write_mini_catalog(tmp_path / "catalog")


@pytest.fixture
def repo_catalog(tmp_path: Path) -> Path:
    """A copy of the repository's own catalog (templates, lexicons, translations), safe to write."""
    root = tmp_path / "repo-catalog"
    for folder in ("templates", "lexicons", "translations"):
        shutil.copytree(REPO / folder, root / folder)
    return root


@pytest.fixture
def bare_catalog(tmp_path: Path) -> Path:
    """A copy of the repository's lexicons and templates without translations, e.g. to import
    BBQ into."""
    target = tmp_path / "catalog"
    target.mkdir()
    for name in ("lexicons", "templates"):
        shutil.copytree(REPO / name, target / name)
    return target


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabelStudioServer]:
    """One real Label Studio for every test that needs one (tests keep apart by project prefix)."""
    srv = LabelStudioServer(root=REPO, data_dir=tmp_path_factory.mktemp("label-studio") / "data")
    srv.start()
    yield srv
    srv.stop()

"""Behaviour snapshot for refactors that must change nothing a user sees (issue 17).

    python bench/behaviour_snapshot.py OUT.json [--eval-on DIR]

run from a tree's root with that tree's code first on the path (``PYTHONPATH=.``), once on the
tree before the refactor and once after; then ``python bench/behaviour_snapshot.py --compare
A.json B.json`` prints every difference and exits 1 if there is one. It records:

- ``render``: for every suite × locale of four catalogs (the repository's own; one with BBQ items
  imported; the regional test catalog; one with CrowS-Pairs and the study's SOS sets imported),
  the sha256 of the rendered rows (NDJSON), the row count, the problems and the skip counts;
- ``release``: the sha256 of every file of a preview release built from the repository's
  catalog and from the imported one, with the version fields (git commit, package version, build
  machine) taken out of manifest.json first and its files with them listed apart;
- ``eval_on``: with ``--eval-on DIR``, `eval run` of every task on tiny models made once in DIR
  (by the first tree that runs it) and reused by the other: the exact comparison (tiny models
  built anew in each process differ, their tokenizers' trainers break ties in no fixed order, so
  the models are made once). Each tree builds its own catalogs and releases in ``DIR/<OUT's
  stem>/`` with its own code (a release's manifest may gain fields a tree before cannot read, and a
  catalog fields a tree after requires); the release part compares what they hold. A run that
  fails stops the snapshot.

The render and release parts only use the CLI and ``load_catalog``/``render``, found at their
old or new module paths, so the one script runs on both trees.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path.cwd()
VERSION_KEYS = {"git_commit", "toolkit", "polyprobe", "python", "platform", "created", "signature", "commit"}


def _api() -> tuple[Any, Any, Any]:
    try:  # after issue 17
        from toolkit.catalog.loader import load_catalog
        from toolkit.core.project import Project
        from toolkit.render.renderer import render
    except ImportError:  # before: the modules' old paths, spelled so that 17a-moves.py leaves them
        load_catalog = importlib.import_module("toolkit" + ".catalog").load_catalog
        Project = importlib.import_module("toolkit" + ".project").Project
        render = importlib.import_module("toolkit" + ".render").render
    return load_catalog, Project, render


def _cli(*args: str) -> None:
    from toolkit.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    if code != 0:
        raise SystemExit(f"polyprobe {' '.join(args)} exited {code}:\n{err.getvalue()}")


def _catalogs(base: Path) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    from tests.support.published_fixtures import FRENCH_ROWS, write_crows, write_study
    from tests.support.regional_fixture import write_regional_catalog
    from tests.toolkit.importers.test_bbq_and_quality import write_bbq

    out: dict[str, Path] = {}
    repo = base / "repo"
    for folder in ("templates", "lexicons", "translations"):
        shutil.copytree(ROOT / folder, repo / folder)
    out["repo"] = repo
    imported = base / "imported"
    for folder in ("templates", "lexicons", "translations"):
        shutil.copytree(ROOT / folder, imported / folder)
    data = write_bbq(base / "bbq-data")
    _cli("import", "bbq", str(data), "--root", str(imported), "--per-category", "1", "--select", "first")
    _cli("import", "crows-pairs", str(write_crows(base / "crows.csv")), "--root", str(imported))
    _cli(
        "import",
        "crows-pairs",
        str(write_crows(base / "crows-fr.csv", FRENCH_ROWS)),
        "--locale",
        "fr",
        "--root",
        str(imported),
    )
    _cli("import", "sos-study", str(write_study(base / "study")), "--root", str(imported))
    out["imported"] = imported
    out["regional"] = write_regional_catalog(base / "regional")
    return out


def _render(catalogs: dict[str, Path]) -> dict[str, Any]:
    load_catalog, Project, render = _api()
    out: dict[str, Any] = {}
    for name, root in catalogs.items():
        catalog = load_catalog(Project.at(root))
        for suite_id in sorted(catalog.suites):
            for locale in catalog.locales.codes:
                for min_status in ("draft", "approved"):
                    result = render(catalog, suite_id, locale, min_status)
                    rows = result.frame.write_ndjson()
                    out[f"{name}/{suite_id}/{locale}/{min_status}"] = {
                        "rows": result.frame.height,
                        "columns": {k: str(v) for k, v in result.frame.schema.items()},
                        "sha256": hashlib.sha256(rows.encode("utf-8")).hexdigest(),
                        "problems": sorted(str(p) for p in result.problems),
                        "skipped": dict(sorted(result.skipped.items())),
                    }
    return out


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VERSION_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _release(catalogs: dict[str, Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("repo", "imported"):
        root = catalogs[name]
        dist = root / "dist"
        _cli("release", "build", "0.1.0-preview.1", "--preview", "--root", str(root), "--dist", str(dist))
        folder = dist / "polyprobe-0.1.0-preview.1"
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = path.relative_to(folder).as_posix()
            out[f"{name}/{rel}"] = hashlib.sha256(path.read_bytes()).hexdigest()
        out[f"{name}/manifest.json"] = _strip(manifest)
        out[f"{name}/README.md"] = "\n".join(
            line
            for line in (folder / "README.md").read_text(encoding="utf-8").splitlines()
            if "commit" not in line
        )
    return out


RUNS = [
    ("sentiment-cls", "sentiment", ["--task", "sentiment", "--model", "cls"]),
    ("sentiment-llama", "sentiment", ["--task", "sentiment", "--model", "llama"]),
    ("sos-bert", "regional", ["--task", "sos", "--model", "bert"]),
    ("sos-gpt2", "regional", ["--task", "sos", "--model", "gpt2"]),
    ("honest-bert", "regional", ["--task", "honest", "--model", "bert", "--k", "3"]),
    ("honest-gpt2", "regional", ["--task", "honest", "--model", "gpt2", "--max-new-tokens", "6"]),
    (
        "iat-llama",
        "regional",
        ["--task", "iat", "--model", "llama", "--permutations", "2", "--max-new-tokens", "8"],
    ),
    ("ifm-llama", "regional", ["--task", "ifm", "--model", "llama", "--max-new-tokens", "4"]),
    ("bbq-llama", "imported", ["--task", "bbq", "--model", "llama"]),
    ("crows-bert", "imported", ["--task", "crows-pairs", "--model", "bert"]),
    ("crows-gpt2", "imported", ["--task", "crows-pairs", "--model", "gpt2"]),
    ("sos-study-bert", "imported", ["--task", "sos", "--suite", "sos-study", "--model", "bert"]),
]


def _eval_models(folder: Path) -> None:
    """Tiny models and HurtLex stand-ins for RUNS, made once and shared by both trees."""
    sys.path.insert(0, str(ROOT))
    from tests.evaluator.run.test_eval_run import HURTLEX
    from tests.support import tiny_models as tm

    folder.mkdir(parents=True)
    for name, make in (
        ("bert", tm.bert_mlm),
        ("gpt2", tm.gpt2),
        ("llama", tm.llama),
        ("cls", tm.bert_classifier),
    ):
        make(folder / "models" / name)
    hurtlex = folder / "cache" / "lexicons" / "hurtlex" / "1.2"
    hurtlex.mkdir(parents=True)
    for lang, text in HURTLEX.items():
        (hurtlex / f"hurtlex_{lang}.tsv").write_text(text, encoding="utf-8")


def _eval_inputs(folder: Path) -> None:
    """This tree's catalogs and releases for RUNS, built by its own code."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import write_mini_catalog
    from tests.evaluator.run.test_eval_run import pins

    catalogs = _catalogs(folder / "catalogs")
    catalogs["sentiment"] = write_mini_catalog(folder / "catalogs" / "sentiment")
    for name in ("answers.yaml", "prompts.yaml"):
        shutil.copy(ROOT / "lexicons" / name, catalogs["sentiment"] / "lexicons" / name)
    shutil.copy(ROOT / "translations" / "review-policy.yaml", catalogs["sentiment"] / "translations")
    for name in ("regional", "sentiment"):
        pins(catalogs[name])
    for name in ("sentiment", "regional", "imported"):
        dist = folder / "releases" / name
        _cli(
            "release",
            "build",
            "0.1.0-preview.1",
            "--preview",
            "--root",
            str(catalogs[name]),
            "--dist",
            str(dist),
        )


def _eval_on(folder: Path, label: str) -> dict[str, Any]:
    if not folder.exists():
        _eval_models(folder)
    if not (folder / label / "releases").exists():
        _eval_inputs(folder / label)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POLYPROBE_CACHE": str(folder / "cache")}
    out: dict[str, Any] = {}
    for name, release, args in RUNS:
        run = folder / f"out-{label}" / name
        args = [str(folder / "models" / a) if a in ("bert", "gpt2", "llama", "cls") else a for a in args]
        release_dir = folder / label / "releases" / release / "polyprobe-0.1.0-preview.1"
        cmd = [
            sys.executable,
            "-m",
            "toolkit.cli",
            "eval",
            "run",
            "--release",
            str(release_dir),
            "--out",
            str(run),
        ]
        done = subprocess.run(
            [*cmd, "--device", "cpu", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"eval run {name} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        out[name] = _strip(json.loads((run / "metrics.json").read_text(encoding="utf-8")))
    return out


def _diff(a: Any, b: Any, where: str, found: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                found.append(f"{where}/{key}: only in {'after' if key not in a else 'before'}")
            else:
                _diff(a[key], b[key], f"{where}/{key}", found)
    elif a != b:
        found.append(f"{where}: {str(a)[:200]!r} != {str(b)[:200]!r}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--compare"]:
        before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[1:3])
        found: list[str] = []
        _diff(before, after, "", found)
        for part in ("render", "release", "eval_on"):
            print(f"{part}: {len(before.get(part, {}))} entries before, {len(after.get(part, {}))} after")
        print("\n".join(found) or "no differences")
        return 1 if found else 0
    target = Path(argv[0])
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        catalogs = _catalogs(base)
        snapshot = {"render": _render(catalogs), "release": _release(catalogs)}
        if "--eval-on" in argv:
            snapshot["eval_on"] = _eval_on(Path(argv[argv.index("--eval-on") + 1]), target.stem)
    target.write_text(json.dumps(snapshot, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{target}: {', '.join(f'{k} {len(v)}' for k, v in snapshot.items())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

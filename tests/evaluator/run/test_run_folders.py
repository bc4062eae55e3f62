"""Runs are sealed (issue 12, items 9 and 10): `eval run --out` refuses a folder holding another
run or foreign files unless --resume / --overwrite says so, never writes inside a release, and
writes the whole run at once; `eval report` refuses files of different runs mixed in one
folder; `eval merge` and `eval report` never write into a run or a release; a corrupt --cache
is one line. Where a command is refused, not one byte changes."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.support import tiny_models as tm
from tests.support.files import leftovers, mini_release, snapshot


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_release(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.bert_classifier(tmp_path_factory.mktemp("models") / "cls")


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory, release: Path, model: Path) -> dict[str, Path]:
    """Finished runs (seeds 0 and 1, and another model) and the cache that holds their answers.
    A classifier's predictions do not depend on the seed: the other model's run is the one whose
    predictions differ."""
    from toolkit.cli import main

    base = tmp_path_factory.mktemp("done")
    runs = {}
    other = tm.bert_classifier(base / "other-model", seed=1)
    for name, weights, seed in (("0", model, "0"), ("1", model, "1"), ("other", other, "0")):
        out = base / f"run-{name}"
        code = main(_args(release, weights, out, base / "cache.sqlite", "--seed", seed))
        assert code == 0
        runs[name] = out
    runs["cache"] = base / "cache.sqlite"
    return runs


def _args(release: Path, model: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "eval", "run", "--release", str(release), "--task", "sentiment", "--model", str(model),
        "--out", str(out), "--device", "cpu", "--cache", str(cache), *extra,
    ]  # fmt: skip


@pytest.fixture
def evaluate(cli, release: Path, model: Path, done: dict[str, Path], tmp_path: Path):
    cache = tmp_path / "cache.sqlite"
    shutil.copy(done["cache"], cache)

    def run(out: Path, *extra: str, model_path: Path = model, cache_path: Path = cache):
        return cli(*_args(release, model_path, out, cache_path, *extra))

    return run


def _copy_run(done: dict[str, Path], seed: str, to: Path) -> Path:
    shutil.copytree(done[seed], to)
    return to


# --- eval run --out ------------------------------------------------------------------------------


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ((), "holds a run (task sentiment, model"),
        (("--seed", "1", "--resume"), "differs in options (seed)"),
        (("--limit", "2", "--resume"), "differs in options (limit)"),
        (("--dtype", "fp32", "--resume"), "differs in options (dtype)"),
        (("--resume", "--overwrite"), "give --resume or --overwrite, not both"),
    ],
    ids=["no flag", "resume another seed", "resume another limit", "resume another dtype", "both flags"],
)
def test_a_folder_holding_a_run_is_refused(evaluate, done, tmp_path: Path, extra, named: str) -> None:
    out = _copy_run(done, "0", tmp_path / "run")
    before = snapshot(tmp_path / "run")
    result = evaluate(out, *extra)
    assert result.code == 2, result.err
    assert named in result.err and "Traceback" not in result.err
    assert snapshot(tmp_path / "run") == before and leftovers(tmp_path) == []


@pytest.mark.bad_input
def test_resume_refuses_another_model(evaluate, done, tmp_path: Path) -> None:
    other = tm.bert_classifier(tmp_path / "other", seed=1)
    out = _copy_run(done, "0", tmp_path / "run")
    before = snapshot(out)
    result = evaluate(out, "--resume", model_path=other)
    assert result.code == 2 and "differs in options (model)" in result.err
    assert snapshot(out) == before


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("files", "extra", "named"),
    [
        ({"notes.txt": "my notes"}, (), "holds files that are not a run's (notes.txt)"),
        ({"notes.txt": "my notes"}, ("--overwrite",), "holds files that are not a run's (notes.txt)"),
        ({"notes.txt": "my notes"}, ("--resume",), "holds files that are not a run's (notes.txt)"),
        (
            {".hidden": "x", "metrics.json": "{}"},
            ("--overwrite",),
            "holds files that are not a run's (.hidden)",
        ),
        ({"metrics.json": '{"mine": 1}'}, (), "holds an incomplete or mixed run (metrics.json)"),
        ({"metrics.json": '{"mine": 1}'}, ("--resume",), "holds an incomplete or mixed run (metrics.json)"),
        ({"sub/run.json": "{}"}, ("--overwrite",), "holds files that are not a run's (sub)"),
    ],
    ids=[
        "notes",
        "notes overwrite",
        "notes resume",
        "hidden file",
        "a user's metrics.json",
        "metrics.json resume",
        "a subfolder",
    ],
)
def test_a_folder_holding_foreign_files_is_never_written(
    evaluate, tmp_path: Path, files, extra, named
) -> None:
    out = tmp_path / "run"
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    before = snapshot(out)
    result = evaluate(out, *extra)
    assert result.code == 2, result.err
    assert named in result.err
    assert snapshot(out) == before and leftovers(tmp_path) == []


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "where",
    [lambda r: r, lambda r: r / "runs" / "x", lambda r: r / "data", lambda r: r / "data" / "sentiment" / "x"],
    ids=["the release", "a new folder in it", "its data folder", "deep inside"],
)
def test_out_inside_a_release_is_refused(evaluate, release: Path, cli, where) -> None:
    before = snapshot(release)
    result = evaluate(where(release))
    assert result.code == 2 and f"is inside the release {release.resolve()}" in result.err
    assert snapshot(release) == before and cli("release", "verify", str(release)).code == 0


@pytest.mark.bad_input
def test_out_that_is_a_file_or_under_a_file_is_refused(evaluate, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert "is a file" in evaluate(tmp_path / "file").err
    result = evaluate(tmp_path / "file" / "run")
    assert result.code == 2 and f"cannot be made: {tmp_path / 'file'} is a file" in result.err
    assert (tmp_path / "file").read_text() == "x"


def test_resume_runs_the_same_again_from_the_cache(evaluate, done, tmp_path: Path) -> None:
    out = _copy_run(done, "0", tmp_path / "run")
    result = evaluate(out, "--resume")
    assert result.code == 0, result.err
    run = json.loads((out / "run.json").read_text())
    assert run["cache"]["computed"] == 0 and run["cache"]["hits"] > 0
    assert (out / "metrics.json").read_bytes() == (done["0"] / "metrics.json").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [
        "metrics.json",
        "predictions.parquet",
        "run.json",
        "signature.txt",
    ]


def test_overwrite_replaces_a_run_whole(evaluate, done, cli, tmp_path: Path) -> None:
    out = _copy_run(done, "0", tmp_path / "run")
    result = evaluate(out, "--seed", "1", "--overwrite")
    assert result.code == 0, result.err
    assert json.loads((out / "run.json").read_text())["options"]["seed"] == 1
    assert (out / "predictions.parquet").read_bytes() == (done["1"] / "predictions.parquet").read_bytes()
    assert leftovers(tmp_path) == []
    assert cli("eval", "report", str(out), "--out", str(tmp_path / "report")).code == 0


def test_an_empty_folder_takes_a_run(evaluate, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    assert evaluate(tmp_path / "run").code == 0
    assert (tmp_path / "run" / "run.json").is_file()


def test_the_run_records_the_hashes_of_its_files(done) -> None:
    import hashlib

    run = json.loads((done["0"] / "run.json").read_text())
    for name in ("predictions.parquet", "metrics.json", "signature.txt"):
        assert run["files"][name] == hashlib.sha256((done["0"] / name).read_bytes()).hexdigest()


# --- eval report and merge ---------------------------------------------------------------------


def _mix(done, tmp_path: Path, name: str, other: str = "1") -> Path:
    out = _copy_run(done, "0", tmp_path / "mixed")
    shutil.copy(done[other] / name, out / name)
    return out


def _old_style(done, tmp_path: Path) -> Path:
    """A run written before run.json recorded its files, with another run's predictions."""
    import polars as pl

    out = _copy_run(done, "0", tmp_path / "old")
    run = json.loads((out / "run.json").read_text())
    del run["files"]
    (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    frame = pl.read_parquet(out / "predictions.parquet")
    frame.head(3).write_parquet(out / "predictions.parquet")
    return out


def _seed_edited(done, tmp_path: Path) -> Path:
    out = _copy_run(done, "0", tmp_path / "edited")
    run = json.loads((out / "run.json").read_text())
    run["options"]["seed"] = 1
    (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return out


MIXED_FILES = pytest.mark.parametrize(
    ("make", "named"),
    [
        (
            lambda d, t: _mix(d, t, "predictions.parquet", "other"),
            "predictions.parquet: is not the file this run wrote",
        ),
        (
            lambda d, t: _mix(d, t, "metrics.json"),
            "signature.txt: does not match the signature in metrics.json",
        ),
        (
            lambda d, t: _mix(d, t, "signature.txt"),
            "signature.txt: does not match the signature in metrics.json",
        ),
        (
            lambda d, t: _mix(d, t, "run.json"),
            "signature.txt: does not match the signature in metrics.json / run.json",
        ),
        (_old_style, "predictions.parquet: has 3 rows, run.json says"),
        (_seed_edited, "run.json: says seed 1, the signature seed 0"),
    ],
    ids=[
        "another run's predictions",
        "seed-1 metrics",
        "seed-1 signature",
        "seed-1 run.json",
        "old run, other rows",
        "seed edited",
    ],
)


@pytest.mark.bad_input
@MIXED_FILES
def test_report_refuses_files_of_different_runs(done, cli, tmp_path: Path, make, named: str) -> None:
    folder = make(done, tmp_path)
    before = snapshot(folder)
    result = cli("eval", "report", str(folder), "--out", str(tmp_path / "report"))
    assert result.code == 2, result.err
    assert named in result.err and str(folder) in result.err
    assert snapshot(folder) == before and not (tmp_path / "report").exists()


@pytest.mark.bad_input
@MIXED_FILES
def test_merge_refuses_files_of_different_runs(done, cli, tmp_path: Path, make, named: str) -> None:
    """`eval merge` reads each folder as `eval report` does: another run's metrics.json copied into
    a run is refused, never averaged."""
    folder = make(done, tmp_path)
    before = snapshot(folder)
    result = cli("eval", "merge", str(folder), str(done["1"]), "--out", str(tmp_path / "merged"))
    assert result.code == 2, result.err
    assert named in result.err and str(folder) in result.err
    assert snapshot(folder) == before and not (tmp_path / "merged").exists()


def _edit_run_json(done, tmp_path: Path, name: str, edit) -> Path:
    out = _copy_run(done, "1", tmp_path / name)
    run = json.loads((out / "run.json").read_text())
    edit(run)
    (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return out


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda r: r.pop("locales"), "run.json: locales: Field required"),
        (lambda r: r.pop("release"), "run.json: release: Field required"),
        (lambda r: r["release"].pop("signature"), "run.json has no release.signature"),
        (lambda r: r.update(locales=["xx"]), "runs differ in locales: "),
        (lambda r: r["release"].update(signature="another"), "runs differ in release: "),
    ],
    ids=["no locales", "no release", "no release signature", "other locales", "other release"],
)
def test_merge_refuses_runs_it_cannot_compare_naming_the_folder(
    done, cli, tmp_path: Path, edit, named: str
) -> None:
    folder = _edit_run_json(done, tmp_path, "edited", edit)
    result = cli("eval", "merge", str(done["0"]), str(folder), "--out", str(tmp_path / "merged"))
    assert result.code == 2, result.err
    assert named in result.err and str(folder) in result.err, result.err
    assert "Traceback" not in result.err and not (tmp_path / "merged").exists()
    if named.startswith("runs differ"):  # each side named
        assert str(done["0"]) in result.err


@pytest.mark.bad_input
def test_merge_refuses_a_folder_given_twice(done, cli, tmp_path: Path) -> None:
    result = cli("eval", "merge", str(done["0"]), str(done["0"]), "--out", str(tmp_path / "merged"))
    assert result.code == 2 and "given twice" in result.err and str(done["0"]) in result.err


def test_merge_averages_figures_and_leaves_out_each_runs_uncertainty(done, cli, tmp_path: Path) -> None:
    """A run without run.json's own signature still merges (signature.txt is checked against
    metrics.json); the merged metrics hold no p-value, interval or unit count, and say so."""
    unsigned = _edit_run_json(done, tmp_path, "unsigned", lambda r: r.pop("signature"))
    result = cli("eval", "merge", str(done["0"]), str(unsigned), "--out", str(tmp_path / "merged"))
    assert result.code == 0, result.err
    merged = json.loads((tmp_path / "merged" / "metrics.json").read_text())
    keys: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            keys.update(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(merged["metrics"])
    run = json.loads((done["0"] / "metrics.json").read_text())["metrics"]
    attribute = next(iter(next(iter(run["per_locale"].values()))["attributes"].values()))
    assert "mcm_ci95" in attribute  # the run has an interval; the merge does not
    assert not keys & {"p_value", "p_holm", "mcm_ci95", "n_units", "ci_replicates"}
    assert "mcm_ci95" in merged["left_out"] and "p_value" in merged["left_out"]
    assert "p-value" in merged["note"] and merged["seeds"] == [0, 1]
    assert "mean" in keys and "std" in keys


@pytest.mark.bad_input
def test_report_merge_and_sweep_never_write_into_a_run_or_a_release(
    done, release: Path, cli, tmp_path: Path
) -> None:
    run = _copy_run(done, "0", tmp_path / "run")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("x", encoding="utf-8")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"release: {release}\nmodels: [{{model: m}}]\ntasks: [{{task: sos}}]\n", encoding="utf-8"
    )
    before = {p: snapshot(p) for p in (run, release, tmp_path / "mine")}
    checks = [
        (("eval", "report", str(done["1"]), "--out", str(run)), "is a run folder"),
        (("eval", "report", str(done["1"]), "--out", str(release / "report")), "is inside the release"),
        (("eval", "merge", str(done["0"]), str(done["1"]), "--out", str(run)), "which a merge would replace"),
        (
            ("eval", "merge", str(done["0"]), str(done["1"]), "--out", str(tmp_path / "mine")),
            "holds notes.txt",
        ),
        (("eval", "merge", str(done["0"]), str(done["1"]), "--out", str(release)), "is inside the release"),
        (("eval", "sweep", str(sweep), "--out", str(release / "sweep")), "is inside the release"),
    ]
    for args, named in checks:
        result = cli(*args)
        assert result.code == 2, (args, result.err)
        assert named in result.err, (args, result.err)
    assert {p: snapshot(p) for p in before} == before


def test_merge_may_replace_an_earlier_merge(done, cli, tmp_path: Path) -> None:
    args = ("eval", "merge", str(done["0"]), str(done["1"]), "--out", str(tmp_path / "merged"))
    assert cli(*args).code == 0
    assert cli(*args).code == 0


# --- the response cache ------------------------------------------------------------------------


def _garbage(path: Path) -> None:
    path.write_text("this is not a database\n" * 20, encoding="utf-8")


def _other_schema(path: Path) -> None:
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE responses (id INTEGER, payload BLOB)")
    db.commit()
    db.close()


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def _values_not_json(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("UPDATE responses SET value = '{not json'")
    db.commit()
    db.close()


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("spoil", "named"),
    [
        (_garbage, "is not usable (file is not a database)"),
        (_other_schema, "is not usable (no such column: key)"),
        (_truncated, "is not usable"),
        (_values_not_json, "is not usable (Expecting property name"),
    ],
    ids=["garbage", "another table", "truncated", "values not JSON"],
)
def test_a_corrupt_cache_is_one_line(evaluate, tmp_path: Path, spoil, named: str) -> None:
    cache = tmp_path / "cache.sqlite"
    spoil(cache)
    before = cache.read_bytes()
    result = evaluate(tmp_path / "run")
    assert result.code == 2, result.err
    assert f"response cache {cache} {named}" in result.err and "--cache" in result.err
    assert "Traceback" not in result.err
    assert cache.read_bytes() == before and not (tmp_path / "run").exists() and leftovers(tmp_path) == []


@pytest.mark.bad_input
def test_a_cache_that_is_a_folder_is_refused_by_the_parser(evaluate, tmp_path: Path) -> None:
    (tmp_path / "cachedir").mkdir()
    result = evaluate(tmp_path / "run", cache_path=tmp_path / "cachedir")
    assert result.code == 2 and "cachedir" in result.err and not (tmp_path / "run").exists()

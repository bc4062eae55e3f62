"""Replicating published results end to end: CrowS-Pairs and the regional study's SOS sets
imported from small files, frozen into a release with polyprobe's own sos suite, scored with
tiny models built here (`eval run --task crows-pairs`, `eval run --task sos --suite sos-study`),
and one model on both sos sets side by side per region and standing in the report."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from evaluator.backends.hf import TransformersBackend
from tests.conftest import REPO
from tests.evaluator.metrics.test_crows_pairs_metric import PAIRS, by_hand
from tests.evaluator.tasks.test_task_registry import assert_typed_metrics
from tests.support import tiny_models as tm
from tests.support.published_fixtures import CROWS_ROWS, STUDY_FILES, write_crows, write_study
from tests.support.regional_fixture import write_regional_catalog
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.importers.crows_pairs import import_crows_pairs
from toolkit.importers.sos_study import import_sos_study
from toolkit.release.build import BuildOptions, build_release


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("replication")
    root = write_regional_catalog(base / "catalog")
    for suite in ("crows-pairs", "sos-study"):
        shutil.copytree(REPO / "templates" / suite, root / "templates" / suite)
    shutil.copy(REPO / "lexicons" / "sos-study.yaml", root / "lexicons" / "sos-study.yaml")
    project = Project.at(root)
    import_crows_pairs(
        load_catalog(project, suites=["crows-pairs"]), write_crows(base / "crows.csv"), locale="en"
    )
    import_sos_study(load_catalog(project, suites=["sos-study"]), write_study(base / "sos"))
    options = BuildOptions(
        version="0.1.0-preview.1",
        preview=True,
        suites=["sos", "crows-pairs", "sos-study"],
        dist=root / "dist",
    )
    return build_release(project, options)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("models")
    return {"bert": tm.bert_mlm(base / "bert"), "gpt2": tm.gpt2(base / "gpt2")}


def evaluate(
    cli: Callable[..., Any], release: Path, out: Path, *args: str
) -> tuple[dict, dict, pl.DataFrame]:
    result = cli(
        "eval", "run", "--release", str(release), "--out", str(out), "--device", "cpu",
        "--cache", str(out.parent / f"{out.name}.sqlite"), *args,
    )  # fmt: skip
    assert result.code == 0, result.err
    metrics = json.loads((out / "metrics.json").read_text())
    run = json.loads((out / "run.json").read_text())
    assert_typed_metrics(metrics["task"], metrics["metrics"])
    return metrics["metrics"], run, pl.read_parquet(out / "predictions.parquet")


def test_crows_pairs_metric_from_the_release_equals_the_hand_computation(
    cli: Callable[..., Any], release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    metrics, run, predictions = evaluate(
        cli, release, tmp_path / "bert", "--task", "crows-pairs", "--model", str(models["bert"])
    )
    assert run["task_settings"] == {"score": "shared", "rule": "paper"}
    rows = {r["sent_more"]: r for r in predictions.to_dicts()}
    # the first two pairs of the file are a substitution and a deletion scored by hand elsewhere
    backend = TransformersBackend.load(str(models["bert"]), device="cpu")
    for more, less, pm, ps in (PAIRS[0], PAIRS[2]):
        assert rows[more]["sent_less"] == less
        assert rows[more]["score_more"] == pytest.approx(by_hand(backend, more, pm), abs=1e-4)
        assert rows[more]["score_less"] == pytest.approx(by_hand(backend, less, ps), abs=1e-4)
        assert rows[more]["shared_tokens"] == len(pm)
    # the metric, counted by hand from the per-pair scores
    prefers = {r[0]: rows[r[0]]["score_more"] > rows[r[0]]["score_less"] for r in CROWS_ROWS}
    en = metrics["per_locale"]["en"]
    assert en["overall"]["pairs"] == len(CROWS_ROWS)
    assert en["overall"]["score"] == pytest.approx(100 * sum(prefers.values()) / len(CROWS_ROWS))
    for direction in ("stereo", "antistereo"):
        chosen = [prefers[r[0]] for r in CROWS_ROWS if r[2] == direction]
        row = next(r for r in en["by_direction"] if r["direction"] == direction)
        assert row["score"] == pytest.approx(100 * sum(chosen) / len(chosen))
    religion = [prefers[r[0]] for r in CROWS_ROWS if r[3] == "religion"]
    row = next(r for r in en["by_bias_type"] if r["bias_type"] == "religion")
    assert row["score"] == pytest.approx(100 * sum(religion) / len(religion))
    assert en["no_shared_tokens"] == 0


def test_crows_pairs_original_script_rule_and_causal_models(
    cli: Callable[..., Any], release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    metrics, run, _ = evaluate(
        cli,
        release,
        tmp_path / "orig",
        "--task",
        "crows-pairs",
        "--model",
        str(models["bert"]),
        "--original-script",
    )
    assert run["task_settings"] == {"score": "shared", "rule": "original"} and metrics["rule"] == "original"
    metrics, run, predictions = evaluate(
        cli, release, tmp_path / "gpt2", "--task", "crows-pairs", "--model", str(models["gpt2"])
    )
    assert run["task_settings"]["score"] == "ll" and predictions["shared_tokens"].null_count() == len(
        CROWS_ROWS
    )
    backend = TransformersBackend.load(str(models["gpt2"]), device="cpu")
    first = predictions.filter(pl.col("sent_more") == CROWS_ROWS[0][0]).row(0, named=True)
    assert first["score_more"] == pytest.approx(backend.sentence_logprob([CROWS_ROWS[0][0]])[0], abs=1e-4)
    bad = cli("eval", "run", "--release", str(release), "--out", str(tmp_path / "bad"), "--device", "cpu",
              "--task", "crows-pairs", "--model", str(models["bert"]), "--score", "pll")  # fmt: skip
    assert bad.code != 0 and "--score shared" in bad.err

    report = cli(
        "eval", "report", str(tmp_path / "orig"), str(tmp_path / "gpt2"), "--out", str(tmp_path / "report")
    )
    assert report.code == 0, report.err
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert "## Stereotyping sentence pairs (CrowS-Pairs)" in summary
    assert "original script's rule" in summary and "sentence log-likelihood (ll)" in summary
    overall = metrics["per_locale"]["en"]["overall"]
    row = f"| en | {overall['pairs']} | {overall['more_higher']} | {overall['less_higher']} | {overall['ties']} |"
    assert row in summary
    assert (
        "**CrowS-Pairs by bias type**" in summary
        and "**CrowS-Pairs score − 50 per locale (0: no preference)**" in summary
    )
    assert list((tmp_path / "report" / "plots").glob("crows-pairs-r1-*-bias-types.svg"))


def test_sos_on_the_studys_sets_and_side_by_side_with_polyprobes(
    cli: Callable[..., Any], release: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    bert = str(models["bert"])
    ours, run_ours, _ = evaluate(cli, release, tmp_path / "ours", "--task", "sos", "--model", bert)
    study, run_study, predictions = evaluate(
        cli, release, tmp_path / "study", "--task", "sos", "--model", bert, "--suite", "sos-study"
    )
    assert run_study["suite"] == "sos-study" and run_study["task_settings"] == {
        "score": "pll",
        "suite": "sos-study",
    }
    assert run_ours["task_settings"] == {"score": "pll"}
    assert set(study["per_locale"]) == {"en", "de", "ar", "arz"}
    pairs = {loc: sum(len(rows) for name, rows in STUDY_FILES.items() if name.startswith(prefix))
             for loc, prefix in (("de", "German"), ("ar", "Arabic"), ("arz", "Egyptian"))}  # fmt: skip
    for loc, n in pairs.items():
        assert study["per_locale"][loc]["overall"]["pairs"] == n
    regions = {(r["region"], r["standing"]) for r in study["per_locale"]["en"]["by_region_standing"]}
    assert regions == {("us", "marginalized"), ("us", "dominant"), ("uk", "marginalized"), ("uk", "dominant")}
    assert predictions["score"].is_finite().all() and set(predictions["suite"].cast(pl.String)) == {
        "sos-study"
    }

    # the study's own scoring: shared tokens, rounded, ties in the denominator
    shared, run_shared, scored = evaluate(
        cli, release, tmp_path / "shared", "--task", "sos", "--model", bert, "--suite", "sos-study",
        "--score", "shared", "--original-script",
    )  # fmt: skip
    assert run_shared["task_settings"] == {"score": "shared", "rule": "original", "suite": "sos-study"}
    assert scored["shared_tokens"].min() > 0
    # every pair shares a token: counted, none (a pll run does not count them)
    assert {entry["no_shared_tokens"] for entry in shared["per_locale"].values()} == {0}
    assert all("no_shared_tokens" not in entry for entry in study["per_locale"].values())
    de = shared["per_locale"]["de"]["overall"]
    assert de["sos"] == pytest.approx(de["toxic_higher"] / de["pairs"])

    # runs on different suites are never averaged together
    assert run_ours["locales"] == ["de"]
    evaluate(
        cli,
        release,
        tmp_path / "study-de",
        "--task",
        "sos",
        "--model",
        bert,
        "--suite",
        "sos-study",
        "--locales",
        "de",
    )
    mixed = cli(
        "eval", "merge", str(tmp_path / "ours"), str(tmp_path / "study-de"), "--out", str(tmp_path / "m")
    )
    assert mixed.code == 2 and "runs differ in suite: " in mixed.err
    assert f"{tmp_path / 'ours'} (sos)" in mixed.err and f"{tmp_path / 'study-de'} (sos-study)" in mixed.err

    wrong = cli("eval", "run", "--release", str(release), "--out", str(tmp_path / "x"), "--device", "cpu",
                "--task", "sos", "--model", bert, "--suite", "crows-pairs")  # fmt: skip
    assert wrong.code == 2 and "task sos reads sos, sos-study" in wrong.err

    report = cli(
        "eval", "report", str(tmp_path / "ours"), str(tmp_path / "study"), "--out", str(tmp_path / "report")
    )
    assert report.code == 0, report.err
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert "the same model on different sets (polyprobe's own and sos-study)" in summary
    table = summary.split("**SOS by region and standing**", 1)[1].split("\n\n", 2)[1]
    header, _, *lines = table.splitlines()
    assert header == "| locale | region | standing | bert | bert · sos-study | Δ bert · sos-study |"
    cells = {tuple(c.strip() for c in line.strip("|").split("|"))[:3]: line for line in lines}
    # polyprobe's German groups and the study's German set, side by side
    ours_de = {(r["region"], r["standing"]): r["sos"] for r in ours["per_locale"]["de"]["by_region_standing"]}
    study_de = {
        (r["region"], r["standing"]): r["sos"] for r in study["per_locale"]["de"]["by_region_standing"]
    }
    for standing in ("marginalized", "dominant"):
        line = cells[("de", "de", standing)]
        values = [c.strip() for c in line.strip("|").split("|")][3:5]
        expected = [ours_de.get(("de", standing)), study_de.get(("de", standing))]
        assert values == [("—" if v is None else f"{v:.3f}") for v in expected]
    assert any(key[1] == "us" for key in cells) and all(re.match(r"^\| ", line) for line in lines)

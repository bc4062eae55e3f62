"""The task registry's contract, over every registered task: each descriptor names scoring code,
a report section and a metrics model that exist and fit together, options that RunOptions has,
settings for every model kind it scores; a run's metrics.json reads back into its model and is
written out again unchanged (checked on every run the end-to-end tests make); a renamed field is
refused with the field's place; options a task does not take are refused."""

from __future__ import annotations

import dataclasses
from typing import Any, get_args

import polars as pl
import pytest

from evaluator.backends.base import ModelKind
from evaluator.metrics.sos import sos_report
from evaluator.options import RunOptions
from evaluator.report.runs import Run
from evaluator.results.base import MetricsInvalid, TaskMetrics
from evaluator.tasks import TASKS, descriptor, get_task, task_names
from evaluator.tasks.base import Task
from evaluator.tasks.descriptor import COMMON_OPTIONS, load_attribute
from tests.conftest import REPO
from toolkit.core.errors import InputError


def assert_typed_metrics(task: str, metrics: dict[str, Any]) -> None:
    """A run's ``metrics`` read back as its task's model give the same JSON object, and the
    task's headline comes from one of its measures' tables (when it has measures)."""
    model = TASKS[task].read_metrics(metrics)
    assert model.dump() == metrics
    tables = {m.table for m in model.measures()}
    assert not tables or TASKS[task].headline.table in tables, (TASKS[task].headline, tables)


def test_the_registry_lists_every_task_once_in_the_reports_order() -> None:
    assert task_names() == (
        "sentiment",
        "sentiment-control",
        "sos",
        "crows-pairs",
        "honest",
        "bbq",
        "iat",
        "ifm",
    )
    assert all(TASKS[name].name == name for name in task_names())
    suites = {p.name for p in (REPO / "templates").iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert {s for d in TASKS.values() for s in d.suites} <= suites


@pytest.mark.parametrize("name", task_names())
def test_each_descriptor_names_code_a_section_and_a_model_that_exist(name: str) -> None:
    task = TASKS[name]
    scorer = get_task(name)
    assert isinstance(scorer, Task) and scorer.descriptor is task
    assert callable(load_attribute(task.section))
    assert issubclass(task.metrics, TaskMetrics) and task.metrics is not TaskMetrics
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    assert set(task.options) <= fields and not set(task.options) & set(COMMON_OPTIONS)
    assert set(task.kinds) <= set(get_args(ModelKind)) and task.kinds
    for kind in task.kinds:  # the settings of every kind it scores, with the default options
        settings = task.settings(RunOptions(task=name, model="m"), kind)
        assert isinstance(settings, dict)
    assert task.predictions and len(set(task.predictions)) == len(task.predictions)


def test_an_unknown_task_says_what_exists() -> None:
    with pytest.raises(
        InputError, match=r"unknown task 'sso'\. Did you mean 'sos'\? Known: bbq, crows-pairs"
    ):
        get_task("sso")


def test_options_another_task_takes_are_refused() -> None:
    sos = descriptor("sos")
    sos.check_options(RunOptions(task="sos", model="m", score="pll", original_script=True, seed=3, limit=5))
    assert sos.unused_options(RunOptions(task="sos", model="m", k=7, chat=False)) == ["k", "chat"]
    with pytest.raises(InputError, match=r"task sos does not take --k, --chat \(its options: --score"):
        sos.check_options(RunOptions(task="sos", model="m", k=7, chat=False))
    descriptor("honest").check_options(RunOptions(task="honest", model="m", k=7, chat=False))


def sos_metrics() -> dict[str, Any]:
    """SOS metrics as the task writes them, from three pairs scored here."""
    frame = pl.DataFrame(
        {
            "pair_id": ["p1", "p1", "p2", "p2", "p3", "p3"],
            "label": ["toxic", "non_toxic"] * 3,
            "score": [-1.0, -2.0, -3.0, -3.0, -5.0, -4.0],
            "group": "g",
            "attribute": "religion",
            "region": "de",
            "standing": "marginalized",
            "variant": "f",
            "locale": "de",
        }
    )
    return {"score": "ll", "rule": "paper", "per_locale": {"de": sos_report(frame, resamples=50)}}


def test_metrics_written_and_read_back_are_the_same_json() -> None:
    metrics = sos_metrics()
    assert_typed_metrics("sos", metrics)
    typed = descriptor("sos").read_metrics(metrics)
    assert typed.dump() == metrics
    overall = typed.per_locale["de"].overall  # type: ignore[attr-defined]
    assert (overall.pairs, overall.toxic_higher, overall.ties, overall.sos) == (3, 1, 1, 0.5)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda m: m["per_locale"]["de"]["overall"].update(sos_score=m["per_locale"]["de"]["overall"].pop("sos")),
         "metrics.per_locale.de.overall.sos: Field required"),
        (lambda m: m["per_locale"]["de"]["by_group"][0].update(pairs="three"),
         "metrics.per_locale.de.by_group.0.pairs: Input should be a valid integer"),
        (lambda m: m["per_locale"]["de"].update(by_group="oops"),
         "metrics.per_locale.de.by_group: Input should be a valid list"),
    ],
)  # fmt: skip
def test_a_renamed_or_mistyped_field_is_refused_where_it_is(change: Any, where: str) -> None:
    metrics = sos_metrics()
    change(metrics)
    with pytest.raises(MetricsInvalid) as raised:
        descriptor("sos").read_metrics(metrics)
    assert str(raised.value).startswith(where), str(raised.value)


def test_a_report_section_reads_only_its_own_tasks_metrics() -> None:
    typed = descriptor("sos").read_metrics(sos_metrics())
    run = Run(path=REPO, label="x", task="sos", metrics=typed, info=None, signature="")  # type: ignore[arg-type]
    assert run.metrics_as(TASKS["sos"].metrics) is typed
    with pytest.raises(TypeError, match="a sos run has SosMetrics, not BbqMetrics"):
        run.metrics_as(TASKS["bbq"].metrics)

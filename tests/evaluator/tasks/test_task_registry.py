"""The task registry's contract, over every registered task: each descriptor names scoring code,
a report section and a metrics model that exist and fit together, options of its own that no
common option and no other task's option of the same name contradicts, settings for every model
kind it scores; a run's metrics.json reads back into its model and is
written out again unchanged (checked on every run the end-to-end tests make); a renamed field is
refused with the field's place; options a task does not take are refused; a headline names a
table (and measure) its metrics model declares, and the declared tables are the ones its
measures make."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import polars as pl
import pytest
from pydantic import BaseModel

from evaluator.backends.base import ModelKind
from evaluator.metrics.sos import sos_report
from evaluator.options import RunOptions
from evaluator.report.runs import Run
from evaluator.results.base import MetricsInvalid, TaskMetrics
from evaluator.tasks import TASKS, check_headline, descriptor, get_task, register, task_names, task_options
from evaluator.tasks.base import Task
from evaluator.tasks.descriptor import COMMON_OPTIONS, Headline, TaskOption, load_attribute
from tests.conftest import REPO
from toolkit.core.errors import InputError


def assert_typed_metrics(task: str, metrics: dict[str, Any]) -> None:
    """A run's ``metrics`` read back as its task's model give the same JSON object, and the
    task's headline comes from one of its measures' tables (when it has measures); every measure
    is in a table, and of a measure, its model declares."""
    model = TASKS[task].read_metrics(metrics)
    assert model.dump() == metrics
    tables = {m.table for m in model.measures()}
    assert not tables or TASKS[task].headline.table in tables, (TASKS[task].headline, tables)
    made = tables_made(model)
    assert all(table in model.TABLES and set(made[table]) <= set(model.TABLES[table]) for table in made), made


def tables_made(metrics: TaskMetrics) -> dict[str, tuple[str, ...]]:
    """The comparison tables ``metrics.measures()`` makes, each with its measures (the values of
    its ``measure`` key column, when it has one), as TaskMetrics.TABLES declares them."""
    out: dict[str, list[str]] = {}
    for m in metrics.measures():
        names = out.setdefault(m.table, [])
        if m.keys[-1] == "measure" and m.key[-1] not in names:
            names.append(m.key[-1])
    return {table: tuple(names) for table, names in out.items()}


def filled(annotation: Any) -> Any:
    """A value of ``annotation`` with every list and dict holding one entry and every optional
    field set: metrics from which ``measures()`` makes every table it can."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        return filled(next((k for k in kinds if getattr(k, "__name__", "") != "Failed"), kinds[0]))
    if origin is Literal:
        return args[0]
    if origin is list:
        return [filled(args[0])]
    if origin is dict:
        return {"en": filled(args[1])}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        hints = typing.get_type_hints(annotation)
        return {name: filled(hints[name]) for name in annotation.model_fields if name != "ci_replicates"}
    return {bool: True, int: 3, float: 0.5, str: "x"}.get(annotation, "x")


@pytest.mark.parametrize("name", task_names())
def test_a_metrics_model_declares_the_tables_its_measures_make(name: str) -> None:
    """TABLES, which the registry checks a headline against, cannot drift from ``measures()``."""
    model = TASKS[name].metrics
    metrics = model.model_validate(filled(model))
    assert tables_made(metrics) == dict(model.TABLES)
    check_headline(TASKS[name])


def test_a_headline_its_metrics_model_cannot_make_is_refused_at_registration() -> None:
    sos, bbq = descriptor("sos"), descriptor("bbq")
    missing = dataclasses.replace(
        sos, name="sos-by-country", headline=Headline("SOS per country", None, "SOS")
    )
    with pytest.raises(ValueError) as raised:
        register(missing)
    assert str(raised.value) == (
        "task 'sos-by-country': its headline's table 'SOS per country' is not one its metrics model "
        "evaluator.results.sos:SosMetrics declares (its TABLES: 'SOS per locale', 'SOS by standing', "
        "'SOS by region and standing', 'SOS by attribute')"
    )
    measure = dataclasses.replace(
        bbq, name="bbq-s-all", headline=Headline("BBQ per locale", "s_ALL", "s_ALL")
    )
    with pytest.raises(ValueError, match=r"task 'bbq-s-all': its headline's measure 's_ALL' is not one of "
                       r"table 'BBQ per locale' \(its measures: 'accuracy \(ambiguous\)'"):  # fmt: skip
        register(measure)
    gone = dataclasses.replace(sos, name="sos-gone", metrics_model="evaluator.results.gone:Metrics")
    with pytest.raises(ValueError, match=r"task .sos-gone.: its metrics model evaluator\.results\.gone:Metrics "
                       "cannot be loaded"):  # fmt: skip
        register(gone)
    assert not {"sos-by-country", "bbq-s-all", "sos-gone"} & set(TASKS)


BUILT_IN = ("sentiment", "sentiment-control", "sos", "crows-pairs", "honest", "bbq", "iat", "ifm")


def test_the_registry_lists_every_task_once_the_built_in_ones_first_in_the_reports_order() -> None:
    names = task_names()
    assert names[: len(BUILT_IN)] == BUILT_IN  # installed plugins' tasks come after these
    assert len(set(names)) == len(names)
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
    assert not set(task.option_names) & (fields | set(COMMON_OPTIONS))
    assert len(set(task.option_names)) == len(task.option_names)
    shared = task_options()
    assert all(shared[o.name].shape() == o.shape() for o in task.options)
    assert set(task.kinds) <= set(get_args(ModelKind)) and task.kinds
    for kind in task.kinds:  # the settings of every kind it scores, with the default options
        settings = task.settings(task.run_options(model="m"), kind)
        assert isinstance(settings, dict)
    assert task.predictions and len(set(task.predictions)) == len(task.predictions)


def test_an_unknown_task_says_what_exists() -> None:
    with pytest.raises(
        InputError, match=r"unknown task 'sso'\. Did you mean 'sos'\? Known: bbq, crows-pairs"
    ):
        get_task("sso")


def test_options_another_task_takes_are_refused() -> None:
    sos = descriptor("sos")
    sos.run_options({"score": "pll", "original_script": True}, model="m", seed=3, limit=5)
    other = RunOptions(task="sos", model="m", task_options={"k": 7, "chat": False})
    assert sos.unused_options(other) == ["k", "chat"]
    with pytest.raises(InputError, match=r"task sos does not take --k, --chat \(its options: --score"):
        sos.run_options({"k": 7, "chat": False}, model="m")
    honest = descriptor("honest").run_options({"k": 7, "chat": False}, model="m")
    assert honest.option("k") == 7 and honest.option("strategy") == "auto"  # the rest: defaults


@pytest.mark.bad_input
@pytest.mark.parametrize("value", [5, 7])
def test_an_option_the_task_does_not_declare_is_refused_whatever_its_value(value: int) -> None:
    """`--k 5` on sos is as much a mistake as `--k 7`, though 5 is honest's default."""
    with pytest.raises(
        InputError, match=r"task sos does not take --k \(its options: --score, --original-script\)"
    ):
        descriptor("sos").run_options({"k": value}, model="m")
    assert descriptor("sos").unused_options(RunOptions(task="sos", model="m"), given=["k"]) == ["k"]


def test_a_second_meaning_of_an_option_name_is_refused_at_registration() -> None:
    sos = descriptor("sos")
    clash = dataclasses.replace(
        sos, name="sos-again", options=(TaskOption("k", int, 7, "another k"),)
    )  # honest's k defaults to 5
    with pytest.raises(ValueError, match="declares option 'k'"):
        register(clash)
    common = dataclasses.replace(sos, name="sos-again", options=(TaskOption("seed", int, 0, "a seed"),))
    with pytest.raises(ValueError, match="'seed' cannot be the name of a task's option"):
        register(common)
    assert "sos-again" not in TASKS


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

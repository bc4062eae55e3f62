"""One strict pydantic base (toolkit.core.model.StrictModel): unknown fields refused and values
frozen, set in one place for the toolkit's records and manifest and the evaluator's specs and
metrics, with each family's own settings (the manifest's no-coercion) kept on top of it."""

from __future__ import annotations

import ast

import pytest
from pydantic import Field, ValidationError

from evaluator.finetune.study import StudySpec
from evaluator.results.base import Part, Replicates
from evaluator.sweep.spec import SweepSpec
from tests.conftest import REPO
from toolkit.core.model import StrictModel
from toolkit.core.records import Record
from toolkit.release.manifest import FileEntry, Manifest

SHA = "0" * 64


class _Point(StrictModel):
    x: int = Field(ge=0)


def test_an_unknown_field_is_refused_and_a_value_cannot_change() -> None:
    with pytest.raises(ValidationError) as refused:
        _Point.model_validate({"x": 1, "y": 2})
    assert [e["type"] for e in refused.value.errors()] == ["extra_forbidden"]
    point = _Point(x=1)
    with pytest.raises(ValidationError):
        point.x = 2  # type: ignore[misc]


@pytest.mark.parametrize("model", [Record, Manifest, FileEntry, SweepSpec, StudySpec, Part, Replicates])
def test_every_strict_family_derives_from_the_one_base(model: type) -> None:
    assert issubclass(model, StrictModel)
    assert model.model_config["extra"] == "forbid"
    assert model.model_config["frozen"] is True


def test_the_manifest_keeps_its_own_settings_on_top_of_the_base() -> None:
    with pytest.raises(ValidationError):
        FileEntry.model_validate({"sha256": SHA, "bytes": "3"})  # strict: no string as a count
    entry = FileEntry.model_validate({"sha256": SHA, "bytes": 3, "schema": {"a": "str"}})
    assert FileEntry.model_validate({"sha256": SHA, "bytes": 3, "schema_": {"a": "str"}}) == entry
    assert Record.model_config["str_strip_whitespace"] is False


def test_no_other_class_sets_extra_forbid_itself() -> None:
    """The settings live in one place: a new model derives from StrictModel instead of repeating them."""
    base = REPO / "toolkit" / "core" / "model.py"
    found = []
    for package in ("toolkit", "evaluator"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path == base:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.keyword) and node.arg == "extra":
                    value = node.value
                    if isinstance(value, ast.Constant) and value.value == "forbid":
                        found.append(f"{path.relative_to(REPO)}:{node.value.lineno}")
    assert found == []

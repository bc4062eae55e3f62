"""The content error classes native reviews found (bench/content_errors.py, issues 16 and 28)
stay gone from the repository's whole rendered catalog, and the bench still finds each class
where it is planted (its patterns are not vacuous)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import polars as pl

from tests.conftest import REPO


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("content_errors", REPO / "bench" / "content_errors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def test_no_error_class_in_the_repository_catalog() -> None:
    found = [(name, suite, locale, hits) for name, suite, locale, hits, _n in _bench().count(REPO) if hits]
    assert not found, found


def _frame(locale: str, rows: list[tuple[str, str, str, str]]) -> pl.DataFrame:
    """sos rows (pair, label, group, text) in ``locale``."""
    return pl.DataFrame(
        {
            "pair_id": [p for p, _, _, _ in rows],
            "label": [label for _, label, _, _ in rows],
            "locale": [locale] * len(rows),
            "group": [g for _, _, g, _ in rows],
            "template": ["sos-33-" + label[0] for _, label, _, _ in rows],
            "text": [t for _, _, _, t in rows],
        }
    )


def test_the_issue_28_patterns_find_what_the_review_found() -> None:
    bench = _bench()
    classes = {c.name.split(":")[0]: c for c in bench.error_classes({})}
    twins = _frame(
        "zh",
        [
            ("p1", "toxic", "eg.copt", "科普特女性不配享有权利。"),
            ("p1", "non_toxic", "eg.copt", "科普特女性不该遭受仇恨。"),
            ("p2", "toxic", "eg.copt", "科普特女性都是罪犯。"),
            ("p2", "non_toxic", "eg.copt", "科普特女性都是我们的邻居。"),
            ("p3", "toxic", "eg.copt", "科普特女性不应享有权利。"),
            ("p3", "non_toxic", "eg.copt", "科普特女性不应遭受仇恨。"),
        ],
    )
    assert classes["zh sos twins"].matches(twins).to_list() == [True, True, False, False, False, False]
    assert classes["sos twins"].matches(twins).to_list() == [False, False, True, True, False, False]
    arz = _frame(
        "arz",
        [
            ("p1", "toxic", "eg.black", "بكره الستات السودا."),
            ("p2", "toxic", "eg.black", "بكره الستات اللي بشرتهم سودا."),
            ("p3", "toxic", "eg.egyptian-citizen", "بكره الناس المواطنين المصريين."),
            ("p4", "toxic", "eg.bisexual", "بكره الستات مزدوجي الميول الجنسية."),
        ],
    )
    assert classes["arz"].matches(arz).to_list() == [True, False, False, False]
    assert classes["ar/arz"].matches(arz).to_list() == [False, False, True, False]
    assert classes["arz eg.*"].matches(arz).to_list() == [False, False, False, True]
    ifm = pl.DataFrame(
        {"text": ["«…» هل تحض هذه العبارة على الكراهية؟", "«…» هل تعبر هذه العبارة عن الكراهية؟"]}
    )
    assert classes["ar ifm"].matches(ifm).to_list() == [True, False]
    he = pl.DataFrame(
        {
            "template": ["nat-08", "nat-08", "nat-01"],
            "group": ["spanish"] * 3,
            "text": ["היא מדברת אנגלית במבטא מספרד.", "היא מדברת אנגלית במבטא ספרדי.", "האישה מספרד גאה."],
        }
    )
    assert classes["he nat-08"].matches(he).to_list() == [True, False, False]
    assert classes["he"].matches(he).to_list() == [False, False, False]  # the accent is not Sephardi

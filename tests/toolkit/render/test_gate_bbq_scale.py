"""The gate on BBQ costs what its texts cost, not a pass over every imported item per text: a
render of the gate's texts looks only at the items they belong to (an index by item id, built
once per catalog), and a full render still gives every item's row in file order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.toolkit.importers.test_bbq_and_quality import bbq_item
from toolkit.catalog.loader import Catalog, load_catalog
from toolkit.catalog.published.bbq import BbqItem, write_samples
from toolkit.core.project import Project
from toolkit.render.gate import gate
from toolkit.render.job import Job, Resolved
from toolkit.render.renderer import render, suite_schema
from toolkit.render.suites import kind_of

PAIRS = [("the Christian", "the Muslim"), ("the Hindu", "the Jew"), ("the young", "the old")]


def synthetic_bbq(root: Path, n: int) -> Catalog:
    """A copy of the repository's templates and lexicons with ``n`` BBQ items imported in English
    (written as the importer writes them), loaded with the bbq suite only."""
    root.mkdir(parents=True)
    for folder in ("lexicons", "templates"):
        shutil.copytree(REPO / folder, root / folder)
    items = []
    for eid in range(n):
        a, b = PAIRS[eid % len(PAIRS)]
        category = "Age" if a == "the young" else "Religion"
        condition = ("ambig", "disambig")[eid // 2 % 2]
        polarity = ("neg", "nonneg")[eid % 2]
        label = 2 if condition == "ambig" else (1 if polarity == "neg" else 0)
        raw = bbq_item(eid, str(eid // 4), polarity, condition, category, a, b, label, [])
        items.append((BbqItem.model_validate(raw), f"{category}.jsonl:{eid + 1}"))
    write_samples(Project.at(root), items)
    return load_catalog(Project.at(root), suites=["bbq"])


def es_texts(item_id: str) -> dict[str, str]:
    return {
        f"{item_id}.context": "El cristiano y el musulmán esperaban el autobús.",
        f"{item_id}.question": "¿Quién gritaba?",
        f"{item_id}.ans0": "El cristiano",
        f"{item_id}.ans1": "El musulmán",
        f"{item_id}.ans2": "Desconocido",
    }


def item_id_calls(catalog: Catalog, texts: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> int:
    """How many times gating ``texts`` computes an item's id (once the catalog has read its items)."""
    assert not any(gate(catalog, "bbq", "es", texts).values())  # warm: the items are read and indexed
    calls = 0
    plain = BbqItem.item_id.fget
    assert plain is not None

    def counted(item: BbqItem) -> str:
        nonlocal calls
        calls += 1
        return plain(item)

    with monkeypatch.context() as patch:
        patch.setattr(BbqItem, "item_id", property(counted))
        reasons = gate(catalog, "bbq", "es", texts)
    assert not any(reasons.values()), reasons
    return calls


def test_gating_one_text_does_not_scan_every_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = {"religion-1.context": "El cristiano y el musulmán esperaban el autobús."}
    small = item_id_calls(synthetic_bbq(tmp_path / "small", 20), one, monkeypatch)
    large = item_id_calls(synthetic_bbq(tmp_path / "large", 200), one, monkeypatch)
    # before: every per-text render recomputed every item's id (20 and 200 calls)
    assert small == large <= 1


def test_gating_many_texts_costs_per_text_not_per_text_and_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = synthetic_bbq(tmp_path / "catalog", 200)
    texts = {**es_texts("religion-1"), **es_texts("religion-4"), **es_texts("age-2")}
    # before: 15 texts x 200 items = 3000 calls
    assert item_id_calls(catalog, texts, monkeypatch) <= 3 * len(texts)


def test_rows_keep_the_file_order_and_only_whole_items(tmp_path: Path) -> None:
    catalog = synthetic_bbq(tmp_path / "catalog", 30)
    english = render(catalog, "bbq", "en").frame
    expected = [f"{'age' if i % 3 == 2 else 'religion'}-{i}" for i in range(30)]
    assert english["item_id"].to_list() == expected
    # translations of a few items, given out of file order, one item incomplete
    texts = {**es_texts("religion-9"), **es_texts("age-5"), **es_texts("religion-0")}
    del texts["religion-0.ans2"]
    assert not any(gate(catalog, "bbq", "es", texts).values())
    # one render of all of them together gives the complete items only, in file order
    suite = catalog.suite("bbq")
    kind = kind_of("bbq")
    batch = [Resolved(suite.segments[sid], text, "draft", "draft", "x") for sid, text in texts.items()]
    job = Job(catalog, suite, "es", "draft", kind, _resolved=batch)
    frame = kind.build(job, suite_schema(catalog, suite))
    assert frame["item_id"].to_list() == ["age-5", "religion-9"]
    assert frame["text"].to_list() == ["El cristiano y el musulmán esperaban el autobús. ¿Quién gritaba?"] * 2
    assert not job.problems

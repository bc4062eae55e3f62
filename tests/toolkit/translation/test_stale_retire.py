"""Retiring orphan records never loses one: a segment retired, translated again while it was
away, and retired again keeps both records' histories in the retired file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import store_line
from tests.support.store_damage import STORE_IT
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.translation.stale import retire_orphans

RETIRED_IT = "translations/it/sentiment.retired.jsonl"
SOURCE = "The old sentence about {{ group.adj }} people."


def append(path: Path, line: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    path.write_text("".join(f"{x}\n" for x in sorted([*lines, line])), encoding="utf-8")


def retired(root: Path) -> dict[str, dict]:
    lines = (root / RETIRED_IT).read_text(encoding="utf-8").splitlines()
    return {r["segment"]: r for r in map(json.loads, lines)}


def test_a_segment_retired_twice_keeps_both_histories(mini: Path) -> None:
    earlier = json.loads(
        store_line("zzz-99.f", "La vecchia frase {{ group.f }}.", SOURCE, "approved", "human")
    )
    earlier["history"].append({"at": "2026-01-05T00:00:00Z", "event": "retired", "by": "polyprobe"})
    (mini / RETIRED_IT).write_text(json.dumps(earlier, ensure_ascii=False) + "\n", encoding="utf-8")
    append(mini / STORE_IT, store_line("zzz-99.f", "Una nuova frase {{ group.f }}.", SOURCE))

    gone, back = retire_orphans(load_catalog(Project.at(mini)), "sentiment", "it")

    assert (gone, back) == (["zzz-99.f"], [])
    record = retired(mini)["zzz-99.f"]
    assert record["text"] == "Una nuova frase {{ group.f }}." and record["status"] == "draft"  # the newer one
    events = [(e["event"], e.get("text")) for e in record["history"]]
    assert events == [
        ("draft", "La vecchia frase {{ group.f }}."),  # the earlier record's history, whole
        ("retired", None),
        ("draft", "Una nuova frase {{ group.f }}."),  # then the newer record's
        ("retired", None),
    ]
    assert "zzz-99.f" not in (mini / STORE_IT).read_text(encoding="utf-8")
    before = (mini / RETIRED_IT).read_bytes(), (mini / STORE_IT).read_bytes()
    assert retire_orphans(load_catalog(Project.at(mini)), "sentiment", "it") == ([], [])
    assert ((mini / RETIRED_IT).read_bytes(), (mini / STORE_IT).read_bytes()) == before  # byte-stable


def test_a_record_that_grew_out_of_the_retired_one_repeats_no_event(mini: Path) -> None:
    """A write cut short between the two files leaves a restored record in both: retiring it
    again keeps its history once."""
    earlier = json.loads(store_line("zzz-99.f", "La vecchia frase {{ group.f }}.", SOURCE))
    (mini / RETIRED_IT).write_text(json.dumps(earlier, ensure_ascii=False) + "\n", encoding="utf-8")
    grown = {
        **earlier,
        "history": [
            *earlier["history"],
            {"at": "2026-01-06T00:00:00Z", "event": "restored", "by": "polyprobe"},
        ],
    }
    append(mini / STORE_IT, json.dumps(grown, ensure_ascii=False))

    retire_orphans(load_catalog(Project.at(mini)), "sentiment", "it")

    assert [e["event"] for e in retired(mini)["zzz-99.f"]["history"]] == ["draft", "restored", "retired"]

"""XLIFF 2.1 round trip: nothing lost, vendor edits become drafts, bad units refused."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from toolkit.xliff import NS


def store_text(root: Path, locale: str = "de") -> str:
    return (root / "translations" / locale / "sentiment.jsonl").read_text(encoding="utf-8")


def test_round_trip_changes_nothing(mini: Path, tmp_path: Path, cli) -> None:
    before = store_text(mini)
    out = tmp_path / "de.xlf"
    exported = cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out))
    assert exported.code == 0, exported.err
    doc = ET.parse(out).getroot()
    assert doc.get("version") == "2.1" and doc.get("srcLang") == "en" and doc.get("trgLang") == "de"
    units = doc.findall(f".//{{{NS}}}unit")
    assert [u.get("id") for u in units] == ["gen-01.f", "gen-01.m", "rel-01.f", "rel-01.m"]
    seg = units[0].find(f"{{{NS}}}segment")
    assert seg.get("state") == "translated" and seg.get("subState") == "polyprobe:draft"
    notes = {n.get("category"): n.text for n in units[0].iter(f"{{{NS}}}note")}
    assert len(notes["polyprobe:source_sha"]) == 64 and notes["polyprobe:origin"] == "draft"
    data = {d.text for d in units[0].iter(f"{{{NS}}}data")}
    assert data == {"{{ group.adj }}", "{{ adj(group, 'f', 'nom', 'def') }}"}
    imported = cli("xliff", "import", "--root", str(mini), str(out), "--by", "vendor")
    assert imported.code == 0, imported.err
    assert "0 updated, 4 unchanged" in imported.err
    assert store_text(mini) == before


def test_vendor_edit_becomes_an_imported_draft(mini: Path, tmp_path: Path, cli) -> None:
    out = tmp_path / "de.xlf"
    cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out))
    text = out.read_text(encoding="utf-8").replace("ist heute glücklich", "ist heute sehr glücklich", 1)
    out.write_text(text, encoding="utf-8")
    result = cli("xliff", "import", "--root", str(mini), str(out), "--by", "vendor-x")
    assert result.code == 0, result.err
    assert "1 updated, 3 unchanged" in result.err
    records = {json.loads(line)["segment"]: json.loads(line) for line in store_text(mini).splitlines()}
    rec = records["gen-01.f"]
    assert rec["text"] == "Die {{ adj(group, 'f', 'nom', 'def') }} Frau ist heute sehr glücklich."
    assert rec["origin"] == "import" and rec["status"] == "draft"
    assert [e["event"] for e in rec["history"]] == ["draft", "import"]
    assert rec["history"][-1]["by"] == "vendor-x"


def test_broken_target_and_stale_units_are_refused_with_nothing_written(
    mini: Path, tmp_path: Path, cli
) -> None:
    before = store_text(mini)
    out = tmp_path / "de.xlf"
    cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out))
    doc = out.read_text(encoding="utf-8")
    # drop the placeholder from one target, and make another unit's source hash stale
    start = doc.index("<target>")
    end = doc.index("</target>", start)
    doc = doc[:start] + "<target>Die Frau ist glücklich." + doc[end:]
    marker = '<note category="polyprobe:source_sha">'
    last = doc.rindex(marker) + len(marker)
    doc = doc[:last] + "0" + doc[last:]  # the last unit (rel-01.m) now claims another source
    out.write_text(doc, encoding="utf-8")
    result = cli("xliff", "import", "--root", str(mini), str(out), "--by", "vendor")
    assert result.code == 2
    assert "drops the slot 'group'" in result.err
    assert "gen-01.f [de] target: drops the slot 'group'" in result.err
    assert "rel-01.m [de] source_sha: the English source changed since this file was exported" in result.err
    assert store_text(mini) == before


def test_untranslated_segments_export_without_target(mini: Path, tmp_path: Path, cli) -> None:
    suite = mini / "templates" / "sentiment" / "suite.yaml"
    suite.write_text(
        suite.read_text(encoding="utf-8").replace("[en, de, he, it]", "[en, de, he, it, fr]"),
        encoding="utf-8",
    )
    out = tmp_path / "fr.xlf"
    assert cli("xliff", "export", "--root", str(mini), "--locale", "fr", "--out", str(out)).code == 0
    segs = ET.parse(out).getroot().findall(f".//{{{NS}}}segment")
    assert {s.get("state") for s in segs} == {"initial"}
    assert all(s.find(f"{{{NS}}}target") is None for s in segs)
    # a vendor fills one target in
    text = out.read_text(encoding="utf-8").replace(
        "</source>\n      </segment>",
        '</source>\n        <target>La femme <ph id="t1" dataRef="d1"/> est heureuse.</target>\n      </segment>',
        1,
    )
    out.write_text(text, encoding="utf-8")
    result = cli("xliff", "import", "--root", str(mini), str(out), "--by", "vendor")
    assert result.code == 0, result.err
    rec = json.loads(
        (mini / "translations" / "fr" / "sentiment.jsonl").read_text(encoding="utf-8").splitlines()[0]
    )
    assert rec["text"] == "La femme {{ group.adj }} est heureuse." and rec["origin"] == "import"

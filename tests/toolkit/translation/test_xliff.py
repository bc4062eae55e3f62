"""XLIFF 2.1 round trip: nothing lost, vendor edits become drafts, bad units refused."""

from __future__ import annotations

import hashlib
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO, canonical_line
from tests.support.store_helpers import run_draft
from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.validate import validate
from toolkit.translation.xliff import NS, export_xliff, import_xliff


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


def copy_repository_catalog(target: Path) -> Path:
    target.mkdir()
    for name in ("templates", "lexicons", "translations"):
        shutil.copytree(REPO / name, target / name)
    return target


def store_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "translations").glob("*/*.jsonl"))
    }


def test_an_unchanged_round_trip_of_every_repository_store_changes_no_byte(tmp_path: Path) -> None:
    """Every locale of the repository's own stores (zh, he, ar, arz included), every suite."""
    root = copy_repository_catalog(tmp_path / "catalog")
    before = store_hashes(root)
    catalog = load_catalog(Project.at(root))
    locales = sorted({p.split("/")[1] for p in before})
    assert locales == ["ar", "arz", "de", "es", "fr", "he", "it", "zh"]
    units_total = unchanged_total = 0
    for locale in locales:
        suites = [s for s in catalog.suites if locale in catalog.suites[s].spec.locales]
        out = tmp_path / f"{locale}.xlf"
        units = export_xliff(catalog, locale, suites, out).units
        # the texts read back from the file are exactly the stored ones (no whitespace added)
        doc = ET.parse(out).getroot()
        for file_el in doc.findall(f"{{{NS}}}file"):
            records = catalog.store(file_el.get("id"), locale).records
            for unit in file_el.findall(f"{{{NS}}}unit"):
                data = {d.get("id"): d.text or "" for d in unit.iter(f"{{{NS}}}data")}
                target = unit.find(f"{{{NS}}}segment/{{{NS}}}target")
                if target is not None:
                    flat = (target.text or "") + "".join(
                        data[c.get("dataRef")] + (c.tail or "") for c in target
                    )
                    assert flat == records[unit.get("id")].text
        result = import_xliff(catalog, out, "vendor")
        assert result.updated == [], (locale, result.updated[:3])
        units_total += units
        unchanged_total += result.unchanged
    assert store_hashes(root) == before
    assert unchanged_total == sum(len(store.splitlines()) for store in _store_texts(root))
    assert units_total >= unchanged_total
    validated = validate(load_catalog(Project.at(root)))
    assert validated.problems == []


def _store_texts(root: Path) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((root / "translations").glob("*/*.jsonl"))]


def test_chinese_round_trip_through_the_cli_keeps_statuses_and_bytes(tmp_path: Path, cli) -> None:
    root = copy_repository_catalog(tmp_path / "catalog")
    before = store_hashes(root)
    out = tmp_path / "zh.xlf"
    assert cli("xliff", "export", "--root", str(root), "--locale", "zh", "--out", str(out)).code == 0
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(root))
    assert result.code == 0, result.err
    assert "\n0 updated, " in result.err
    assert store_hashes(root) == before


def _mark(root: Path, locale: str, status: str, segment: str = "gen-01.f") -> None:
    path = root / "translations" / locale / "sentiment.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["segment"] == segment:
            rec["status"] = status
            lines[i] = json.dumps(rec, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_round_trip_keeps_approved_and_stale_records_as_they_are(mini: Path, tmp_path: Path, cli) -> None:
    _mark(mini, "de", "approved", "gen-01.f")
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace("He grew up in a", "He was raised in a"), encoding="utf-8"
    )
    assert cli("translations", "sync", "--root", str(mini)).code == 0  # rel-01.m is stale now
    before = store_text(mini)
    out = tmp_path / "de.xlf"
    assert cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out)).code == 0
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 0 and "0 updated, 4 unchanged" in result.err
    assert store_text(mini) == before
    records = {json.loads(x)["segment"]: json.loads(x) for x in before.splitlines()}
    assert records["gen-01.f"]["status"] == "approved" and records["rel-01.m"]["status"] == "stale"


@pytest.mark.bad_input
@pytest.mark.parametrize("status", ["reviewed", "approved"])
def test_a_vendor_edit_of_reviewed_work_is_refused_with_nothing_written(
    status: str, mini: Path, tmp_path: Path, cli
) -> None:
    """As a draft never replaces reviewed work (toolkit.store.rules.reviewed_work), neither does
    an XLIFF target: only review changes it."""
    _mark(mini, "de", status, "gen-01.f")
    out = tmp_path / "de.xlf"
    assert cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out)).code == 0
    text = out.read_text(encoding="utf-8")
    out.write_text(text.replace("ist heute glücklich", "ist heute sehr glücklich", 1), encoding="utf-8")
    before = store_text(mini)
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 2, result.err
    assert f"sentiment/gen-01.f [de] target: the store has a {status} translation" in result.err
    assert "never replaces reviewed work" in result.err and str(out) in result.err
    assert store_text(mini) == before


def test_a_vendor_confirming_a_stale_translation_makes_it_a_draft_again(
    mini: Path, tmp_path: Path, cli
) -> None:
    tpl = mini / "templates" / "sentiment" / "templates.yaml"
    tpl.write_text(
        tpl.read_text(encoding="utf-8").replace("He grew up in a", "He was raised in a"), encoding="utf-8"
    )
    assert cli("translations", "sync", "--root", str(mini)).code == 0
    out = tmp_path / "de.xlf"
    cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out))
    doc = out.read_text(encoding="utf-8")
    assert doc.count('subState="polyprobe:stale"') == 1
    out.write_text(
        doc.replace('state="initial" subState="polyprobe:stale"', 'state="translated"'), encoding="utf-8"
    )
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 0 and "1 updated, 3 unchanged" in result.err
    rec = {json.loads(x)["segment"]: json.loads(x) for x in store_text(mini).splitlines()}["rel-01.m"]
    assert rec["status"] == "draft" and rec["origin"] == "import"
    assert [e["event"] for e in rec["history"]] == ["draft", "stale", "import"]


def _exported(mini: Path, tmp_path: Path, cli) -> tuple[Path, str]:
    out = tmp_path / "de.xlf"
    assert cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out)).code == 0
    return out, out.read_text(encoding="utf-8")


def _second_unit_repeated(doc: str) -> str:
    start = doc.index("<unit ")
    end = doc.index("</unit>", start) + len("</unit>")
    return doc[:end] + doc[start:end] + doc[end:]


LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE xliff [<!ENTITY l0 "lol">'
    + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    + ']><xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.1" srcLang="en" trgLang="de">&l9;</xliff>'
)

XLIFF_BAD = [
    ("not XML", lambda doc: doc[: len(doc) // 2], "not well-formed XML"),
    ("not XLIFF", lambda doc: "<html><body>hi</body></html>", "not an XLIFF 2.x document"),
    ("XLIFF 1.2", lambda doc: doc.replace('version="2.1"', 'version="1.2"', 1), "not an XLIFF 2.x document"),
    (
        "unknown target language",
        lambda doc: doc.replace('trgLang="de"', 'trgLang="xx"'),
        "trgLang 'xx': unknown locale.",
    ),
    (
        "source language as target",
        lambda doc: doc.replace('trgLang="de"', 'trgLang="en"'),
        "trgLang en is the source locale",
    ),
    (
        "unknown suite",
        lambda doc: doc.replace('<file id="sentiment">', '<file id="sentimnt">'),
        "sentimnt file: unknown suite",
    ),
    (
        "unknown unit",
        lambda doc: doc.replace('<unit id="gen-01.m">', '<unit id="gen-09.m">'),
        "sentiment/gen-09.m [de] unit: no such segment",
    ),
    ("repeated unit", _second_unit_repeated, "sentiment/gen-01.f [de] unit: the unit appears more than once"),
    (
        "source changed since export",
        lambda doc: doc.replace(
            '<note category="polyprobe:source_sha">', '<note category="polyprobe:source_sha">0', 1
        ),
        "sentiment/gen-01.f [de] source_sha: the English source changed since this file was exported",
    ),
    (
        "unsupported inline element",
        lambda doc: doc.replace("<target>Die ", "<target><pc id='1'>Die</pc> ", 1),
        "sentiment/gen-01.f target: unsupported inline element <pc>",
    ),
    (
        "placeholder with unknown data",
        lambda doc: doc.replace('<ph id="t1" dataRef="d2"', '<ph id="t1" dataRef="d9"', 1),
        "sentiment/gen-01.f target: <ph> refers to unknown data 'd9'",
    ),
    (
        "emptied target",
        lambda doc: doc[: doc.index("<target>")] + "<target></target>" + doc[doc.index("</target>") + 9 :],
        "sentiment/gen-01.f [de] target: text is empty",
    ),
    ("entity expansion bomb", lambda doc: LAUGHS, "not well-formed XML"),
    (
        "another source language",
        lambda doc: doc.replace('srcLang="en"', 'srcLang="de"', 1),
        "srcLang 'de': the sources polyprobe exports are 'en'",
    ),
    ("no source language", lambda doc: doc.replace('srcLang="en" ', "", 1), "srcLang '':"),
]


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("change", "says"), [(c, s) for _, c, s in XLIFF_BAD], ids=[i for i, *_ in XLIFF_BAD]
)
def test_a_bad_xliff_file_is_refused_with_nothing_written(
    change, says: str, mini: Path, tmp_path: Path, cli
) -> None:
    out, doc = _exported(mini, tmp_path, cli)
    out.write_text(change(doc), encoding="utf-8")
    before = store_hashes(mini)
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 2, result.err
    assert says in result.err
    assert str(out) in result.err
    assert store_hashes(mini) == before
    assert "Traceback" not in result.err


@pytest.mark.bad_input
def test_a_non_utf8_xliff_file_is_refused(mini: Path, tmp_path: Path, cli) -> None:
    out, doc = _exported(mini, tmp_path, cli)
    out.write_bytes(doc.encode("utf-8").replace("glücklich".encode(), b"gl\xfccklich", 1))
    before = store_hashes(mini)
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 2 and f"{out}: line" in result.err and "invalid UTF-8 (byte 0xfc" in result.err
    assert store_hashes(mini) == before


@pytest.mark.bad_input
@pytest.mark.parametrize("char", ["\x00", "\x1b", "\r"], ids=["U+0000", "U+001B", "U+000D"])
def test_a_text_xml_cannot_carry_is_left_out_of_the_export(
    char: str, mini: Path, tmp_path: Path, cli
) -> None:
    """Before (issue 26, item 9): the export wrote U+0000 into the XML, which was then not
    well-formed, and its own import refused it. Now the unit is left out with a warning naming
    the store, the segment and the field; the rest round-trips unchanged."""
    store = mini / "translations" / "de" / "sentiment.jsonl"
    lines = store.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["text"] = record["text"].replace(" ist ", f" ist{char} ", 1)
    lines[1] = canonical_line(record)
    store.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "de.xlf"
    exported = cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out))
    assert exported.code == 0, exported.err
    code = f"U+{ord(char):04X}"
    warning = f"warning: translations/de/sentiment.jsonl: {record['segment']} [de] text: holds {code}"
    assert warning in exported.err and "3 units" in exported.err
    units = [u.get("id") for u in ET.parse(out).getroot().iter(f"{{{NS}}}unit")]  # well-formed
    assert record["segment"] not in units and len(units) == 3
    before = store_hashes(mini)
    back = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert back.code == 0, back.err
    assert "0 updated, 3 unchanged" in back.err
    assert store_hashes(mini) == before


NEWER_DE = "Die {{ adj(group, 'f', 'nom', 'def') }} Frau ist heute froh."


@pytest.mark.bad_input
def test_a_vendor_edit_of_a_text_changed_since_export_is_a_conflict(mini: Path, tmp_path: Path, cli) -> None:
    out, doc = _exported(mini, tmp_path, cli)
    assert run_draft(cli, mini, tmp_path, "de", {"gen-01.f": NEWER_DE}).code == 0
    out.write_text(doc.replace("ist heute glücklich", "ist heute sehr glücklich", 1), encoding="utf-8")
    before = store_hashes(mini)
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 2
    assert (
        "sentiment/gen-01.f [de] target: the store's translation changed since this file was exported"
        in result.err
    )
    assert store_hashes(mini) == before


def test_a_unit_the_vendor_left_alone_keeps_a_newer_draft(mini: Path, tmp_path: Path, cli) -> None:
    out, _ = _exported(mini, tmp_path, cli)
    assert run_draft(cli, mini, tmp_path, "de", {"gen-01.f": NEWER_DE}).code == 0
    result = cli("xliff", "import", str(out), "--by", "vendor", "--root", str(mini))
    assert result.code == 0 and "0 updated, 4 unchanged" in result.err
    assert json.loads(store_text(mini).splitlines()[0])["text"] == NEWER_DE

"""XLIFF 2.1 export and import of a locale's segments, for translation vendors who work in CAT
tools. The round trip loses nothing: unit ids are segment ids, the source hash, origin and
template notes travel as notes, the exact status travels as ``subState``, and template code
travels as inline ``<ph>`` codes whose original text sits in ``<originalData>``.

Import changes only what a vendor changed: an edited target becomes a new draft (origin
`import`) with a history event; an unchanged one changes nothing. Units whose source changed
since export, unknown units, and targets that break the template's slots are refused, all
listed, and nothing is written."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.catalog import Catalog
from toolkit.errors import CatalogError, InputError, Problem
from toolkit.fileio import read_text, write_bytes_atomic
from toolkit.render import source_analysis, translation_problems
from toolkit.store import Event, load_store, store_lock, utc_now

NS = "urn:oasis:names:tc:xliff:document:2.0"
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
STATE_OF = {"machine": "translated", "draft": "translated", "reviewed": "reviewed", "approved": "final"}
ET.register_namespace("", NS)


def _q(tag: str) -> str:
    return f"{{{NS}}}{tag}"


def _inline(parent: ET.Element, text: str, codes: dict[str, str], prefix: str) -> None:
    """Fill ``parent`` with text and <ph/> codes; ``codes`` maps code text to its data id."""
    parent.text = ""
    last: ET.Element | None = None
    pos = 0
    for n, match in enumerate(_JINJA.finditer(text), start=1):
        chunk = text[pos : match.start()]
        if last is None:
            parent.text += chunk
        else:
            last.tail = (last.tail or "") + chunk
        code = match.group(0)
        data_id = codes.setdefault(code, f"d{len(codes) + 1}")
        last = ET.SubElement(parent, _q("ph"), {"id": f"{prefix}{n}", "dataRef": data_id})
        pos = match.end()
    tail = text[pos:]
    if last is None:
        parent.text += tail
    else:
        last.tail = (last.tail or "") + tail


def _flatten(
    element: ET.Element, data: dict[str, str], where: str, problems: list[Problem], file: str
) -> str:
    out = [element.text or ""]
    for child in element:
        if child.tag != _q("ph"):
            problems.append(
                Problem(file, where, "target", f"unsupported inline element <{child.tag.split('}')[-1]}>")
            )
        else:
            ref = child.get("dataRef", "")
            if ref not in data:
                problems.append(Problem(file, where, "target", f"<ph> refers to unknown data {ref!r}"))
            out.append(data.get(ref, ""))
        out.append(child.tail or "")
    return "".join(out)


def export_xliff(catalog: Catalog, locale: str, suites: list[str], out: Path) -> int:
    """Write every segment of ``suites`` for ``locale``; return how many units were written."""
    catalog.check_locale(locale)
    if catalog.locales[locale].source:
        raise InputError(f"{locale} is the source locale: there is nothing to translate into it")
    root = ET.Element(
        _q("xliff"), {"version": "2.1", "srcLang": catalog.locales.source.code, "trgLang": locale}
    )
    units = 0
    for suite_id in suites:
        suite = catalog.suite(suite_id)
        records = catalog.store(suite_id, locale).records
        file_el = ET.SubElement(root, _q("file"), {"id": suite_id})
        for segment in suite.segments.values():
            record = records.get(segment.id)
            unit = ET.SubElement(file_el, _q("unit"), {"id": segment.id})
            notes = ET.SubElement(unit, _q("notes"))
            ET.SubElement(notes, _q("note"), {"category": "polyprobe:source_sha"}).text = segment.source_sha
            if record is not None:
                ET.SubElement(notes, _q("note"), {"category": "polyprobe:origin"}).text = record.origin
            if segment.template.note:
                ET.SubElement(notes, _q("note"), {"category": "polyprobe:note"}).text = segment.template.note
            codes: dict[str, str] = {}
            seg_el = ET.Element(_q("segment"))
            _inline(ET.SubElement(seg_el, _q("source")), segment.source, codes, "s")
            if record is None:
                seg_el.set("state", "initial")
            else:
                current = record.source_sha == segment.source_sha
                status = record.status if current else "stale"
                seg_el.set("state", STATE_OF.get(status, "initial"))
                seg_el.set("subState", f"polyprobe:{status}")
                _inline(ET.SubElement(seg_el, _q("target")), record.text, codes, "t")
            if codes:
                original = ET.SubElement(unit, _q("originalData"))
                for code, data_id in codes.items():
                    ET.SubElement(original, _q("data"), {"id": data_id}).text = code
            unit.append(seg_el)
            units += 1
    ET.indent(root, space="  ")
    data = ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
    write_bytes_atomic(out, data)
    return units


@dataclass
class XliffImport:
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0


def import_xliff(catalog: Catalog, path: Path, by: str) -> XliffImport:
    file = str(path)
    try:
        root = ET.fromstring(read_text(path, file))
    except ET.ParseError as exc:
        raise InputError(f"{file}: not well-formed XML: {exc}") from None
    if root.tag != _q("xliff") or not str(root.get("version", "")).startswith("2."):
        raise InputError(f"{file}: not an XLIFF 2.x document")
    locale = root.get("trgLang", "")
    catalog.check_locale(locale)
    problems: list[Problem] = []
    changes: dict[str, dict[str, tuple[str, str]]] = {}
    result = XliffImport()
    for file_el in root.findall(_q("file")):
        suite_id = file_el.get("id", "")
        if suite_id not in catalog.suites:
            problems.append(Problem(file, suite_id, "file", "unknown suite"))
            continue
        suite = catalog.suites[suite_id]
        records = catalog.store(suite_id, locale).records
        for unit in file_el.findall(_q("unit")):
            uid = unit.get("id", "")
            where = f"{suite_id}/{uid}"
            segment = suite.segments.get(uid)
            if segment is None:
                problems.append(Problem(file, where, "unit", "no such segment", locale))
                continue
            notes = {n.get("category"): (n.text or "") for n in unit.iter(_q("note"))}
            if notes.get("polyprobe:source_sha") != segment.source_sha:
                problems.append(
                    Problem(
                        file,
                        where,
                        "source_sha",
                        "the English source changed since this file was exported",
                        locale,
                    )
                )
                continue
            data = {d.get("id", ""): (d.text or "") for d in unit.iter(_q("data"))}
            target_el = unit.find(f"{_q('segment')}/{_q('target')}")
            if target_el is None:
                continue
            target = _flatten(target_el, data, where, problems, file)
            record = records.get(uid)
            if record is not None and record.text == target and record.source_sha == segment.source_sha:
                result.unchanged += 1
                continue
            if not target.strip():
                continue
            for message in translation_problems(
                suite, catalog, catalog.grammar(locale), source_analysis(catalog, segment), target
            ):
                problems.append(Problem(file, where, "target", message, locale))
            seg_el = unit.find(_q("segment"))
            state = seg_el.get("state", "") if seg_el is not None else ""
            changes.setdefault(suite_id, {})[uid] = (target, state)
    if problems:
        raise CatalogError(problems)
    now = utc_now()
    for suite_id, edits in changes.items():
        suite = catalog.suites[suite_id]
        with store_lock(catalog.project, locale, suite_id):
            store = load_store(catalog.project, locale, suite_id, catalog.problems)
            for uid, (target, state) in sorted(edits.items()):
                segment = suite.segments[uid]
                event = Event(
                    at=now,
                    event="import",
                    by=by,
                    status="draft",
                    text=target,
                    source_sha=segment.source_sha,
                    note=f"XLIFF state {state or 'none'}",
                )
                store.put(uid, segment.source, target, "import", "draft", event)
                result.updated.append(f"{suite_id}/{uid}")
            store.save()
    return result

"""XLIFF 2.1 export and import of a locale's segments, for translation vendors who work in CAT
tools. The round trip loses nothing: unit ids are segment ids, the source hash, origin and
template notes travel as notes, the exact status travels as ``subState``, and template code
travels as inline ``<ph>`` codes whose original text sits in ``<originalData>``. The file is
indented for people, but never inside ``<source>``, ``<target>``, ``<note>`` or ``<data>``:
there whitespace is content.

Import changes only what a vendor changed: an edited target becomes a new draft (origin
`import`) with a history event; an unchanged one changes nothing, not a byte. An edited target
of a reviewed or approved translation is refused, as a draft would be: only review changes it. Edited targets
pass the store's gate (toolkit/render/gate.py). Units whose source changed since export, unknown or
repeated units, and targets the gate refuses are all listed, and nothing is written; so is a
store that cannot be read whole."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.catalog.loader import Catalog
from toolkit.core.errors import CatalogError, InputError, Problem, did_you_mean
from toolkit.core.fileio import read_text, write_bytes_atomic
from toolkit.render.gate import gate
from toolkit.store.files import writing_stores
from toolkit.store.model import Event, Translation, source_sha, utc_now
from toolkit.store.rules import is_current, reviewed_work, state

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


_TEXT_ELEMENTS = frozenset(_q(tag) for tag in ("source", "target", "note", "data"))


def _indent(element: ET.Element, level: int = 0) -> None:
    """Indent the document's structure for reading; text elements are left exactly as built
    (ET.indent would put whitespace into mixed content, and import would read it back)."""
    if element.tag in _TEXT_ELEMENTS or not len(element):
        return
    inner = "\n" + "  " * (level + 1)
    element.text = inner
    for child in element:
        _indent(child, level + 1)
        child.tail = inner
    element[-1].tail = "\n" + "  " * level


_NOT_XML = re.compile("[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot carry (U+0000, most C0 controls, lone surrogates, U+FFFE), and CR,
which a parser reads back as LF: a unit holding one would make the file not well-formed, or
change the text on the way back."""


def _unwritable(record: Translation | None, segment_source: str, note: str | None) -> list[tuple[str, str]]:
    """(field, character) for each text of a unit that XML cannot carry as it is."""
    texts = {"source": segment_source, "note": note or "", "text": record.text if record else ""}
    found = []
    for name, text in texts.items():
        bad = _NOT_XML.search(text)
        if bad:
            found.append((name, f"U+{ord(bad.group(0)):04X}"))
    return found


@dataclass
class XliffExport:
    """What an XLIFF export wrote, and the units left out (each named)."""

    units: int = 0
    left_out: list[Problem] = field(default_factory=list)
    """Units not written because XML cannot carry one of their texts (each named)."""


def export_xliff(catalog: Catalog, locale: str, suites: list[str], out: Path) -> XliffExport:
    """Write every segment of ``suites`` for ``locale``; say how many units were written, and
    which were left out (a text XML cannot carry, e.g. U+0000: fix it in the store)."""
    catalog.check_locale(locale)
    if catalog.locales[locale].source:
        raise InputError(f"{locale} is the source locale: there is nothing to translate into it")
    if catalog.locales[locale].published_only:
        raise InputError(
            f"{locale} is a published-only locale (rows only from a published dataset imported as published): it has no translations"
        )
    root = ET.Element(
        _q("xliff"), {"version": "2.1", "srcLang": catalog.locales.source.code, "trgLang": locale}
    )
    result = XliffExport()
    for suite_id in suites:
        suite = catalog.suite(suite_id)
        store = catalog.store(suite_id, locale)
        file_el = ET.SubElement(root, _q("file"), {"id": suite_id})
        for segment in suite.segments.values():
            record = store.records.get(segment.id)
            unwritable = _unwritable(record, segment.source, segment.template.note)
            if unwritable:
                rel = catalog.project.rel(store.path)
                result.left_out.extend(
                    Problem(rel, segment.id, name, f"holds {char}, which XML cannot carry: left out", locale)
                    for name, char in unwritable
                )
                continue
            unit = ET.SubElement(file_el, _q("unit"), {"id": segment.id})
            notes = ET.SubElement(unit, _q("notes"))
            ET.SubElement(notes, _q("note"), {"category": "polyprobe:source_sha"}).text = segment.source_sha
            if record is not None:
                ET.SubElement(notes, _q("note"), {"category": "polyprobe:origin"}).text = record.origin
            # what the target was when exported: import tells a vendor's edit from a store change
            exported = source_sha(record.text) if record is not None else ""
            ET.SubElement(notes, _q("note"), {"category": "polyprobe:target_sha"}).text = exported
            if segment.template.note:
                ET.SubElement(notes, _q("note"), {"category": "polyprobe:note"}).text = segment.template.note
            codes: dict[str, str] = {}
            seg_el = ET.Element(_q("segment"))
            _inline(ET.SubElement(seg_el, _q("source")), segment.source, codes, "s")
            if record is None:
                seg_el.set("state", "initial")
            else:
                status = state(record, segment.source_sha)
                seg_el.set("state", STATE_OF.get(status, "initial"))
                seg_el.set("subState", f"polyprobe:{status}")
                _inline(ET.SubElement(seg_el, _q("target")), record.text, codes, "t")
            if codes:
                original = ET.SubElement(unit, _q("originalData"))
                for code, data_id in codes.items():
                    ET.SubElement(original, _q("data"), {"id": data_id}).text = code
            unit.append(seg_el)
            result.units += 1
    _indent(root)
    data = ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
    write_bytes_atomic(out, data, stream=True)
    return result


@dataclass
class XliffImport:
    """What an XLIFF import did: segments updated, and how many were unchanged."""

    updated: list[str] = field(default_factory=list)
    unchanged: int = 0


@dataclass(frozen=True)
class _Unit:
    suite: str
    id: str
    target: str
    state: str
    exported_sha: str | None
    """The hash of the target as exported ("" for none); None in files from before it was noted."""

    @property
    def where(self) -> str:
        return f"{self.suite}/{self.id}"


def _read_units(
    catalog: Catalog, root: ET.Element, file: str, locale: str, problems: list[Problem]
) -> list[_Unit]:
    """The units with a target, after the checks that need no store: known suite and segment,
    the source hash exported with it, inline codes that resolve, each unit once."""
    units: list[_Unit] = []
    seen: set[tuple[str, str]] = set()
    for file_el in root.findall(_q("file")):
        suite_id = file_el.get("id", "")
        if suite_id not in catalog.suites:
            problems.append(Problem(file, suite_id or "(file)", "file", "unknown suite"))
            continue
        suite = catalog.suites[suite_id]
        for unit in file_el.findall(_q("unit")):
            uid = unit.get("id", "")
            where = f"{suite_id}/{uid}"
            segment = suite.segments.get(uid)
            if segment is None:
                problems.append(Problem(file, where, "unit", "no such segment", locale))
                continue
            if (suite_id, uid) in seen:
                problems.append(Problem(file, where, "unit", "the unit appears more than once", locale))
                continue
            seen.add((suite_id, uid))
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
            seg_el = unit.find(_q("segment"))
            target_el = seg_el.find(_q("target")) if seg_el is not None else None
            if seg_el is None or target_el is None:
                continue
            data = {d.get("id", ""): (d.text or "") for d in unit.iter(_q("data"))}
            target = _flatten(target_el, data, where, problems, file)
            units.append(
                _Unit(
                    suite_id,
                    uid,
                    target,
                    seg_el.get("state", ""),
                    notes.get("polyprobe:target_sha"),
                )
            )
    return units


def _change(unit: _Unit, record: Translation | None, source_sha_now: str) -> str:
    """ "unchanged" (the vendor left the unit as exported), "edit", or "conflict" (the vendor
    edited it and the store's text changed since the export: importing would silently
    replace newer work)."""
    now = record.text if record is not None else None
    if unit.exported_sha is None:  # a file from before the target's hash was noted
        vendor_edited = now != unit.target
        store_changed = False
    else:
        vendor_edited = source_sha(unit.target) != unit.exported_sha
        store_changed = (source_sha(now) if now is not None else "") != unit.exported_sha
    stale = record is not None and not is_current(record, source_sha_now)
    confirms_stale = stale and unit.state not in ("", "initial")  # exported as initial; text kept
    if not vendor_edited and not confirms_stale:
        return "unchanged"
    return "conflict" if store_changed else "edit"


def import_xliff(catalog: Catalog, path: Path, by: str) -> XliffImport:
    """Import a translator's XLIFF 2.x file as drafts by ``by``. One unit refused (a conflict,
    reviewed work it would overwrite, a text the gate refuses) refuses the file: nothing written."""
    file = str(path)
    try:
        root = ET.fromstring(read_text(path, file))
    except ET.ParseError as exc:
        raise InputError(f"{file}: not well-formed XML: {exc}") from None
    locale = _target_locale(catalog, root, file)
    problems: list[Problem] = []
    units = _read_units(catalog, root, file, locale, problems)
    result = XliffImport()
    now = utc_now()
    suites = sorted({u.suite for u in units})
    with writing_stores(catalog.project, [(locale, s) for s in suites]) as stores:
        edits: dict[str, dict[str, _Unit]] = {}
        for unit in units:
            segment = catalog.suites[unit.suite].segments[unit.id]
            record = stores[(locale, unit.suite)].records.get(unit.id)
            change = _change(unit, record, segment.source_sha)
            if change == "unchanged":
                result.unchanged += 1
            elif change == "conflict":
                problems.append(
                    Problem(
                        file,
                        unit.where,
                        "target",
                        "the store's translation changed since this file was exported, and so did the "
                        "vendor's: export again, or put the vendor's text in by hand",
                        locale,
                    )
                )
            elif (kept := reviewed_work(record, segment.source_sha, "an XLIFF import")) is not None:
                problems.append(Problem(file, unit.where, "target", kept, locale))
            elif record is not None or unit.target.strip():  # an untranslated unit left empty is no edit
                edits.setdefault(unit.suite, {})[unit.id] = unit
        for suite_id, suite_edits in edits.items():
            verdicts = gate(catalog, suite_id, locale, {uid: u.target for uid, u in suite_edits.items()})
            for uid, reasons in verdicts.items():
                where = suite_edits[uid].where
                problems.extend(Problem(file, where, "target", reason, locale) for reason in reasons)
        if problems:
            raise CatalogError(problems)  # before the stores are saved: nothing written
        for suite_id, suite_edits in sorted(edits.items()):
            store = stores[(locale, suite_id)]
            for uid, unit in sorted(suite_edits.items()):
                segment = catalog.suites[suite_id].segments[uid]
                event = Event(
                    at=now,
                    event="import",
                    by=by,
                    status="draft",
                    text=unit.target,
                    source_sha=segment.source_sha,
                    note=f"XLIFF state {unit.state or 'none'}",
                )
                store.put(uid, segment.source, unit.target, "import", "draft", event)
                result.updated.append(unit.where)
    for (loc, suite_id), store in stores.items():
        catalog.stores[(suite_id, loc)] = store
    catalog.rendered.clear()
    return result


def _target_locale(catalog: Catalog, root: ET.Element, file: str) -> str:
    """The locale an XLIFF 2.x document translates into; refused when it is not one polyprobe
    exported (another source language, an unknown, source or published-only target)."""
    if root.tag != _q("xliff") or not str(root.get("version", "")).startswith("2."):
        raise InputError(f"{file}: not an XLIFF 2.x document")
    source = catalog.locales.source.code
    src_lang = root.get("srcLang", "")
    if src_lang.split("-")[0].lower() != source:
        raise InputError(
            f"{file}: srcLang {src_lang!r}: the sources polyprobe exports are {source!r}; this file "
            "translates from another language"
        )
    locale = root.get("trgLang", "")
    if locale not in catalog.locales:
        raise InputError(
            f"{file}: trgLang {locale!r}: unknown locale.{did_you_mean(locale, catalog.locales.codes)}"
        )
    if catalog.locales[locale].source:
        raise InputError(f"{file}: trgLang {locale} is the source locale: there is nothing to import")
    if catalog.locales[locale].published_only:
        raise InputError(
            f"{file}: trgLang {locale} is a published-only locale (rows only from a published dataset imported as published): it has no translations"
        )
    return locale

"""Where DeepL's answers enter the store (toolkit/translation/machine.py sends them): each one
read back and gated (toolkit/translation/answers.py), then stored as a current ``machine`` draft
or as a record that needs a human edit, with the raw answer and why."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from toolkit.catalog.templates import Segment
from toolkit.core.text import BIDI_CONTROLS
from toolkit.store.files import StoreFile
from toolkit.store.model import NEEDS_REWORDING, Event, Status, utc_now
from toolkit.translation.answers import AnswerReader
from toolkit.translation.machine_plan import Report, Unit
from toolkit.translation.placeholders import Protected

NEEDS_EDIT: Status = "needs_edit"


@dataclass
class DraftWriter:
    """Turns answers into store entries (toolkit/translation/answers.py reads them): a machine
    draft, or a record that needs a human edit, with why (and a tag when only its word order
    needs rewording, so review offers it first)."""

    store_file: StoreFile
    reader: AnswerReader
    report: Report

    def store(self, batch: list[Unit], results: list[Any], engine: dict[str, str]) -> None:
        """Put one answered batch into the store (in memory: the caller saves it), one entry per
        segment of each unit, and count it in the report."""
        now = utc_now()
        answers: list[tuple[Segment, Protected, str]] = []
        engines: list[dict[str, str]] = []
        for unit, result in zip(batch, results, strict=True):
            raw = str(result.text)
            used = getattr(result, "model_type_used", None)
            engine_here = {**engine, "model_type_used": str(used)} if used else engine
            for seg in unit.segments:
                answers.append((seg, unit.protected, raw))
                engines.append(engine_here)
        for (seg, _, raw), engine_here, read in zip(answers, engines, self.reader.read(answers), strict=True):
            status: Status = NEEDS_EDIT if read.reasons else "machine"
            stored = storable(raw) if read.reasons else read.text
            event = Event(
                at=now,
                event="machine",
                by="deepl",
                status=status,
                text=stored,
                source_sha=seg.source_sha,
                engine=engine_here,
                tags=(NEEDS_REWORDING,) if read.rewording else None,
                note="; ".join(read.reasons) or None,
            )
            self.store_file.put(seg.id, seg.source, stored, "deepl", status, event, engine=engine_here)
            if not read.reasons:
                self.report.translated += 1
                continue
            self.report.needs_edit += 1
            if read.rewording:
                self.report.needs_rewording += 1


def storable(raw: str) -> str:
    """The raw answer as the store can hold it (NFC, no bidi or control characters, trimmed)."""
    text = unicodedata.normalize("NFC", raw)
    text = "".join(
        c for c in text if c not in BIDI_CONTROLS and (unicodedata.category(c) != "Cc" or c in "\n\t")
    )
    return text.strip() or "(DeepL answered an empty text)"

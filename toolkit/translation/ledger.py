"""The machine-translation ledger (translations/ledger.jsonl): one line per request attempt and
one per run, appended and flushed as they happen, so an interrupted run is accounted for too.

It answers what a run cost (characters sent and billed, requests, retries) and shows that no
segment was sent again once it had been answered. It never holds a key."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.fileio import OutputRefused, jsonl_lines, loads_json, read_text, special_kind
from toolkit.core.project import Project

LEDGER_FILE = "translations/ledger.jsonl"


def ledger_path(project: Project) -> Path:
    """Where the project's DeepL ledger is."""
    return project.root / LEDGER_FILE


@dataclass
class Ledger:
    """The append-only record of one run's DeepL calls and what they cost."""

    path: Path
    run: str
    lines: list[dict[str, Any]] = field(default_factory=list)

    def append(self, entry: dict[str, Any]) -> None:
        """One line at the end of the ledger, on disk at once; a ledger that is not a regular
        file (a FIFO would block the run, a device swallow it) is refused before the first."""
        kind = special_kind(self.path)
        if kind is not None:
            raise OutputRefused(f"{self.path} is {kind}, not a regular file: nothing was sent or written")
        entry = {"run": self.run, **entry}
        self.lines.append(entry)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def read_ledger(project: Project) -> list[dict[str, Any]]:
    """Every line of the project's ledger (none when there is no ledger); a line cut short by a
    crash is skipped."""
    path = ledger_path(project)
    if not path.is_file():
        return []
    out = []
    for line in jsonl_lines(read_text(path)):
        if line.strip():
            try:
                out.append(loads_json(line))
            except json.JSONDecodeError:
                continue  # a line cut by a crash mid-write: skip it, keep the rest
    return out


def summarise(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per run: locale, suite, outcome, requests and attempts, characters sent and billed."""
    runs: dict[str, dict[str, Any]] = {}
    for entry in entries:
        run = runs.setdefault(
            entry["run"],
            {"run": entry["run"], "requests": 0, "attempts": 0, "characters": 0, "billed": 0, "segments": 0},
        )
        if entry.get("event") == "request":
            run["attempts"] += 1
            if entry.get("outcome") == "ok":
                run["requests"] += 1
                run["characters"] += entry.get("characters", 0)
                run["billed"] += entry.get("billed", 0)
                run["segments"] += len(entry.get("segments", []))
        elif entry.get("event") in ("start", "end"):
            run["started" if entry["event"] == "start" else "finished"] = entry.get("at", "")
            for key in ("locale", "suite", "outcome", "server"):
                if key in entry:
                    run[key] = entry[key]
    return list(runs.values())

"""What changed between two releases: samples added, removed and changed (text or status), by
parallel_id, per suite and locale; and which inputs' versions or contents moved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from toolkit.release.manifest import InputEntry

LISTED = 200  # ids listed per change kind in the Markdown; the JSON has them all


@dataclass
class SampleDiff:
    """How one suite's and locale's rows changed between two releases, by parallel id."""

    suite: str
    locale: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Whether nothing changed."""
        return not (self.added or self.removed or self.changed)


@dataclass
class Changelog:
    """What changed since the previous release: its inputs and, per suite and locale, the rows."""

    old: str | None
    new: str
    inputs: list[str] = field(default_factory=list)
    samples: list[SampleDiff] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The changelog as changelog.json holds it (suites and locales without a change left out)."""
        return {
            "old": self.old,
            "new": self.new,
            "inputs": self.inputs,
            "samples": [d.__dict__ for d in self.samples if not d.empty],
        }

    def markdown(self) -> str:
        """The changelog as CHANGELOG.md reads."""
        lines = [f"# Changelog: {self.new}" + (f" against {self.old}" if self.old else ""), ""]
        if self.old is None:
            lines += ["First release: there is no earlier version to compare with.", ""]
            return "\n".join(lines)
        lines += ["## Inputs", ""]
        lines += [f"- {item}" for item in self.inputs] or ["- no input changed"]
        lines += [
            "",
            "## Samples",
            "",
            "| suite | locale | added | removed | changed |",
            "|---|---|---:|---:|---:|",
        ]
        changed = [d for d in self.samples if not d.empty]
        for d in changed:
            lines.append(f"| {d.suite} | {d.locale} | {len(d.added)} | {len(d.removed)} | {len(d.changed)} |")
        if not changed:
            lines.append("| – | – | 0 | 0 | 0 |")
        for d in changed:
            lines += ["", f"### {d.suite} / {d.locale}", ""]
            for kind, ids in (("added", d.added), ("removed", d.removed), ("changed", d.changed)):
                if ids:
                    shown = ", ".join(f"`{i}`" for i in ids[:LISTED])
                    more = (
                        f" … and {len(ids) - LISTED} more (`polyprobe release diff --json`)"
                        if len(ids) > LISTED
                        else ""
                    )
                    lines.append(f"- {kind} ({len(ids)}): {shown}{more}")
        lines.append("")
        return "\n".join(lines)


def diff_inputs(old: dict[str, InputEntry], new: dict[str, InputEntry]) -> list[str]:
    """One line per input added, removed or changed between two manifests (with its version where it
    has one)."""
    out = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None:
            out.append(f"{name}: added" + (f" (version {b.version})" if b and b.version else ""))
        elif b is None:
            out.append(f"{name}: removed")
        elif a.version != b.version:
            out.append(f"{name}: version {a.version} → {b.version}")
        elif a.sha256 != b.sha256:
            out.append(f"{name}: content changed (version {b.version or 'unversioned'})")
    return out


def diff_samples(suite: str, locale: str, old: pl.DataFrame | None, new: pl.DataFrame | None) -> SampleDiff:
    """The rows of one suite and locale added, removed or changed (text or status) between two
    releases, by parallel id."""
    result = SampleDiff(suite, locale)
    empty = pl.DataFrame(schema={"parallel_id": pl.String(), "text": pl.String(), "status": pl.String()})

    def keyed(frame: pl.DataFrame | None) -> pl.DataFrame:
        if frame is None or frame.height == 0:
            return empty
        return frame.select("parallel_id", "text", pl.col("status").cast(pl.String))

    a, b = keyed(old), keyed(new)
    joined = a.join(b, on="parallel_id", how="full", suffix="_new", coalesce=True)
    result.added = sorted(joined.filter(pl.col("text").is_null())["parallel_id"].to_list())
    result.removed = sorted(joined.filter(pl.col("text_new").is_null())["parallel_id"].to_list())
    both = joined.filter(pl.col("text").is_not_null() & pl.col("text_new").is_not_null())
    result.changed = sorted(
        both.filter((pl.col("text") != pl.col("text_new")) | (pl.col("status") != pl.col("status_new")))[
            "parallel_id"
        ].to_list()
    )
    return result

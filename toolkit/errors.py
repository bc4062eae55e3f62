"""Typed errors. The library raises these; only the CLI turns them into exit codes."""

from __future__ import annotations

from dataclasses import dataclass


class PolyprobeError(Exception):
    """Base class of every error polyprobe raises on purpose.

    ``exit_code`` is what the CLI exits with: 2 for bad input, 1 for a runtime failure.
    """

    exit_code = 1


class InputError(PolyprobeError):
    """The user's input (a file, an option, a record) is wrong."""

    exit_code = 2


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the catalog, located precisely enough to fix it."""

    file: str
    record: str
    field: str
    message: str
    locale: str = ""

    def __str__(self) -> str:
        where = f"{self.file}: {self.record}"
        if self.locale:
            where += f" [{self.locale}]"
        if self.field:
            where += f" {self.field}"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {
            "file": self.file,
            "record": self.record,
            "locale": self.locale,
            "field": self.field,
            "message": self.message,
        }


class CatalogError(InputError):
    """The catalog (templates, lexicons, translations) has problems; all of them are listed."""

    def __init__(self, problems: list[Problem], hint: str = "") -> None:
        self.problems = sorted(set(problems))
        self.hint = hint
        """What to do about them, printed after the list."""
        lines = [str(p) for p in self.problems[:50]]
        more = len(self.problems) - len(lines)
        if more > 0:
            lines.append(f"... and {more} more")
        if hint:
            lines.append(hint)
        super().__init__(f"{len(self.problems)} problem(s) in the catalog:\n" + "\n".join(lines))

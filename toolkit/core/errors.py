"""Typed errors. The library raises these; only the CLI turns them into exit codes."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


class PolyprobeError(Exception):
    """Base class of every error polyprobe raises on purpose.

    ``exit_code`` is what the CLI exits with: 2 for bad input, 1 for a runtime failure.
    """

    exit_code = 1


class InputError(PolyprobeError):
    """The user's input (a file, an option, a record) is wrong."""

    exit_code = 2


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """The end of an "unknown name" message: the closest known name, and every known one."""
    known = sorted(known)
    close = difflib.get_close_matches(word, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"{hint} Known: {', '.join(known) or 'none'}."


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the catalog, located precisely enough to fix it."""

    file: str
    record: str
    field: str
    message: str
    locale: str = ""
    cause: str = ""
    """A file whose own problem makes this one follow (e.g. every "unknown attribute" when the
    taxonomy is empty): such problems are summarised under their cause, which is shown first."""

    @property
    def whole_file(self) -> bool:
        """About the file as a whole (unreadable, empty, not the right shape)."""
        return self.record == "(file)"

    def __str__(self) -> str:
        where = f"{self.file}: {self.record}"
        if self.locale:
            where += f" [{self.locale}]"
        if self.field:
            where += f" {self.field}"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        """The problem as a JSON object, for ``--json`` output and reports read by machines."""
        return {
            "file": self.file,
            "record": self.record,
            "locale": self.locale,
            "field": self.field,
            "message": self.message,
            **({"cause": self.cause} if self.cause else {}),
        }


def ordered(problems: list[Problem]) -> list[Problem]:
    """Causes first: problems of files that other problems follow from, then the other
    whole-file problems, then the rest; each part sorted by file, record and field."""
    causes = {p.cause for p in problems if p.cause}

    def rank(p: Problem) -> int:
        if p.cause:
            return 3
        if p.file in causes:
            return 0
        return 1 if p.whole_file else 2

    return sorted(set(problems), key=lambda p: (rank(p), p))


class CatalogError(InputError):
    """The catalog (templates, lexicons, translations) has problems; all of them are listed."""

    def __init__(self, problems: list[Problem], hint: str = "") -> None:
        self.problems = ordered(problems)
        self.hint = hint
        """What to do about them, printed after the list."""
        lines = self.lines()
        shown = lines[:50]
        if len(lines) > len(shown):
            shown.append(f"... and {len(lines) - len(shown)} more")
        if hint:
            shown.append(hint)
        super().__init__(f"{self.summary()} in the catalog:\n" + "\n".join(shown))

    def lines(self) -> list[str]:
        """One line per problem with no cause, causes first; then one line per cause saying
        how many problems follow from it (they are not listed: fix the cause and check again)."""
        out = [str(p) for p in self.problems if not p.cause]
        followers: dict[str, int] = {}
        for p in self.problems:
            if p.cause:
                followers[p.cause] = followers.get(p.cause, 0) + 1
        for cause, n in sorted(followers.items()):
            out.append(
                f"{cause}: {n} further problem(s) follow from this file's problem(s) (not listed); fix it first"
            )
        return out

    def summary(self) -> str:
        """The headline: the message opens with it, and the CLI prints it after the list."""
        return f"{len(self.problems)} problem(s)"

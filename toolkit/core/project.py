"""Where things are: the catalog's project root and the fixed layout below it, and the user's
cache of downloaded lexicons and models."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.core.errors import InputError

ROOT_ENV = "POLYPROBE_ROOT"
INSTALL = "polyprobe's install"


@dataclass(frozen=True)
class Project:
    """The folders of a polyprobe catalog (see the layout in README.md)."""

    root: Path
    found_by: str = field(default="--root", compare=False)
    """How the root was chosen: --root, $POLYPROBE_ROOT, the working directory, or the install
    (the source tree the package was installed from, used only when nothing else names one)."""

    @property
    def is_install_fallback(self) -> bool:
        """No root was named and none was found: the catalog shipped with the install is used."""
        return self.found_by == INSTALL

    @property
    def templates(self) -> Path:
        """The English templates, one folder per suite."""
        return self.root / "templates"

    @property
    def grammar(self) -> Path:
        """The grammar macros the templates import."""
        return self.root / "templates" / "_grammar"

    @property
    def lexicons(self) -> Path:
        """Locales, taxonomy, identity lists, pinned and evaluation lexicons, studies."""
        return self.root / "lexicons"

    @property
    def translations(self) -> Path:
        """The store: one folder per locale, one JSONL file per suite."""
        return self.root / "translations"

    def rel(self, path: Path) -> str:
        """A path as users see it in messages: relative to the root when it is inside."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path)

    @classmethod
    def at(cls, root: Path | str, found_by: str = "--root") -> Project:
        """The catalog at ``root``, refused unless it has both templates/ and lexicons/."""
        root = Path(root)
        if not (root / "templates").is_dir() or not (root / "lexicons").is_dir():
            raise InputError(f"{root} is not a polyprobe catalog: it needs templates/ and lexicons/ folders")
        return cls(root, found_by)

    @classmethod
    def find(cls, start: Path | str | None = None) -> Project:
        """$POLYPROBE_ROOT, else the nearest folder upwards from ``start`` (default: the working
        directory) that holds templates/ and lexicons/, else the source tree the package came from."""
        env = os.environ.get(ROOT_ENV)
        if env:
            return cls.at(env, f"${ROOT_ENV}")
        here = Path(start or Path.cwd()).resolve()
        for candidate in (here, *here.parents):
            if (candidate / "templates").is_dir() and (candidate / "lexicons").is_dir():
                return cls(candidate, "the working directory")
        source_tree = Path(__file__).resolve().parents[2]  # toolkit/core/project.py
        if (source_tree / "templates").is_dir() and (source_tree / "lexicons").is_dir():
            return cls(source_tree, INSTALL)
        raise InputError(
            "no polyprobe catalog found: run inside a checkout, pass --root, or set $POLYPROBE_ROOT"
        )


def cache_dir() -> Path:
    """$POLYPROBE_CACHE, else $XDG_CACHE_HOME/polyprobe, else ~/.cache/polyprobe."""
    if os.environ.get("POLYPROBE_CACHE"):
        return Path(os.environ["POLYPROBE_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "polyprobe"

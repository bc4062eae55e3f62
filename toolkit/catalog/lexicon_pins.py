"""Pinned external lexicons (lexicons/hurtlex.toml): fetched or imported into a user cache,
always checked against their sha256, never committed or redistributed.

Cache: $POLYPROBE_CACHE, else $XDG_CACHE_HOME/polyprobe, else ~/.cache/polyprobe; files live at
<cache>/lexicons/hurtlex/<version>/hurtlex_<LANG>.tsv."""

from __future__ import annotations

import shutil
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from toolkit.catalog.locales import LOCALES_FILE, Locales
from toolkit.core.errors import InputError, PolyprobeError, Problem
from toolkit.core.fileio import FileFormatError, atomic_path, read_text, sha256_file
from toolkit.core.project import Project, cache_dir

PINNED_LEXICONS: tuple[str, ...] = ("hurtlex",)
"""The external lexicons polyprobe pins by hash and fetches into the user cache (lexicons/NAME.toml)."""

PINS_FILE = "lexicons/hurtlex.toml"


class PinMismatch(PolyprobeError):
    """A lexicon file is not the one the pins name."""

    exit_code = 2


@dataclass(frozen=True)
class HurtlexPins:
    """The pinned HurtLex release: version, licence, commit, URL pattern and each language file's hash."""

    version: str
    license: str
    commit: str
    url: str
    sha256: dict[str, str]
    source: str

    def url_for(self, lang: str) -> str:
        """Where ``lang``'s file of the pinned release is downloaded from."""
        return self.url.format(commit=self.commit, lang=lang, version=self.version)

    def as_dict(self) -> dict[str, object]:
        """The pins as a release manifest records them (without the file they were read from)."""
        return {
            "version": self.version,
            "license": self.license,
            "commit": self.commit,
            "url": self.url,
            "sha256": dict(sorted(self.sha256.items())),
        }


def load_pins(project: Project, path: Path | None = None) -> HurtlexPins:
    """Read the pins (lexicons/hurtlex.toml, or ``path``); a file that cannot be read whole is refused."""
    file = path or project.root / PINS_FILE
    try:
        raw = tomllib.loads(read_text(file))["hurtlex"]
        return HurtlexPins(
            version=str(raw["version"]),
            license=str(raw["license"]),
            commit=str(raw["commit"]),
            url=str(raw["url"]),
            sha256={str(k).upper(): str(v) for k, v in raw["sha256"].items()},
            source=str(file),
        )
    except FileFormatError as exc:
        raise InputError(str(exc)) from None
    except (KeyError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{file}: not a valid HurtLex pin file ({type(exc).__name__}: {exc})") from None


def unpinned_locales(pins: HurtlexPins, locales: Locales) -> list[Problem]:
    """Every locale whose HurtLex language (lexicons/locales.yaml ``hurtlex``) has no pinned
    sha256: its lexicon could be neither fetched nor checked, so HONEST could not score it."""
    return [
        Problem(
            LOCALES_FILE,
            code,
            "hurtlex",
            f"HurtLex language {loc.hurtlex} of locale {code} has no pinned sha256 in {PINS_FILE}",
        )
        for code, loc in locales.by_code.items()
        if loc.hurtlex and loc.hurtlex.upper() not in pins.sha256
    ]


def hurtlex_path(pins: HurtlexPins, lang: str) -> Path:
    """Where ``lang``'s pinned file lives in the user's cache, one folder per version."""
    return cache_dir() / "lexicons" / "hurtlex" / pins.version / f"hurtlex_{lang.upper()}.tsv"


def _install(pins: HurtlexPins, lang: str, data_source: Path | str, fetch: bool) -> Path:
    target = hurtlex_path(pins, lang)
    with atomic_path(target) as tmp:
        if fetch:
            try:
                with urllib.request.urlopen(str(data_source), timeout=60) as resp, tmp.open("wb") as out:
                    shutil.copyfileobj(resp, out)
            except (urllib.error.URLError, OSError) as exc:
                raise PolyprobeError(f"could not download HurtLex {lang} from {data_source}: {exc}") from None
        else:
            shutil.copyfile(data_source, tmp)
        actual = sha256_file(tmp)
        if actual != pins.sha256[lang]:
            raise PinMismatch(
                f"HurtLex {lang} from {data_source} has sha256 {actual}, but {PINS_FILE} pins {pins.sha256[lang]}: "
                "not installed (a different version or a modified copy)"
            )
    return target


def _local_copy(folder: Path, pins: HurtlexPins, lang: str) -> Path | None:
    for candidate in (
        folder / lang / pins.version / f"hurtlex_{lang}.tsv",
        folder / "lexica" / lang / pins.version / f"hurtlex_{lang}.tsv",
        folder / f"hurtlex_{lang}.tsv",
    ):
        if candidate.is_file():
            return candidate
    return None


def fetch_hurtlex(pins: HurtlexPins, langs: list[str], source_dir: Path | None = None) -> dict[str, Path]:
    """Install the pinned files into the cache (already-verified files are kept)."""
    out: dict[str, Path] = {}
    for lang in langs:
        lang = lang.upper()
        if lang not in pins.sha256:
            raise InputError(f"HurtLex has no pin for {lang!r}; pinned: {', '.join(sorted(pins.sha256))}")
        target = hurtlex_path(pins, lang)
        if target.is_file() and sha256_file(target) == pins.sha256[lang]:
            out[lang] = target
            continue
        if source_dir is not None:
            local = _local_copy(source_dir, pins, lang)
            if local is None:
                raise InputError(
                    f"{source_dir}: no hurtlex_{lang}.tsv (looked in <LANG>/{pins.version}/, lexica/<LANG>/{pins.version}/ and the folder itself)"
                )
            out[lang] = _install(pins, lang, local, fetch=False)
        else:
            out[lang] = _install(pins, lang, pins.url_for(lang), fetch=True)
    return out


def verify_hurtlex(pins: HurtlexPins) -> dict[str, str]:
    """Per language: ok, missing, or the mismatching hash."""
    status = {}
    for lang, expected in sorted(pins.sha256.items()):
        path = hurtlex_path(pins, lang)
        if not path.is_file():
            status[lang] = "missing"
        else:
            actual = sha256_file(path)
            status[lang] = "ok" if actual == expected else f"sha256 {actual} != pinned {expected}"
    return status

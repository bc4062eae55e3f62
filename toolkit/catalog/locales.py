"""The locales polyprobe knows, defined by data (lexicons/locales.yaml): a new locale needs
no code. Each locale says which term forms identity lists must give for it, and how reports show
it. A published-only locale (``published_only: true``) is one polyprobe does not render: it has
no templates, grammar, store or translations, and its rows come only from a published dataset
imported as published (MBBQ's Dutch and Turkish); only suites that read imports may list it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from toolkit.core.errors import CatalogError, Problem
from toolkit.core.fileio import load_yaml
from toolkit.core.project import Project
from toolkit.core.records import SEMVER_RE, Record, parse_record, record_name


class FormSpec(Record):
    """The term forms a locale's identity terms give: required, optional, and exactly-one-of."""

    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()
    """Groups of forms of which exactly one must be given (e.g. a declinable stem or an invariable word)."""

    def known(self) -> frozenset[str]:
        """Every form a term may give in this locale."""
        return frozenset(self.required) | frozenset(self.optional) | {f for g in self.one_of for f in g}


class ReportStyle(Record):
    """How reports show a locale: its colour in every figure and its HTML language tag."""

    colour: str = Field(pattern=r"^#[0-9A-Fa-f]{6}$")
    html_lang: str = Field(pattern=r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)*$")


class Locale(Record):
    """One locale: its names, script and direction, how machine translation and reports treat it,
    and the term forms its grammar needs."""

    code: str = Field(pattern=r"^[a-z]{2,3}(?:-[A-Za-z0-9]+)?$")
    name: str
    native_name: str
    script: str
    direction: Literal["ltr", "rtl"]
    deepl_target: str | None = None
    """DeepL target code, or null when DeepL has no such target (human translation only)."""
    deepl_formality: bool = False
    hurtlex: str | None = None
    """HurtLex language whose lexicon serves this locale (Egyptian Arabic uses Arabic's)."""
    sacrebleu_tokenizer: str = "13a"
    glossary_forms: tuple[str, ...] = ()
    """Term forms, in order of preference, that a machine-translation glossary maps English terms to."""
    list_separator: str = ", "
    """How a list of words is joined in running text (、 in Chinese, ، in Arabic)."""
    source: bool = False
    published_only: bool = False
    """No templates, grammar, store or translations: rows only from imported published data."""
    report: ReportStyle | None = None
    """Colour and HTML language tag in reports (release manifests carry them to the evaluator)."""
    forms: FormSpec = FormSpec()
    note: str = ""

    @property
    def translated(self) -> bool:
        """Whether the locale has a translation store (neither the source nor published-only)."""
        return not self.source and not self.published_only


class LocalesFile(Record):
    """lexicons/locales.yaml, as written."""

    version: str
    description: str
    locales: tuple[Locale, ...]


@dataclass(frozen=True)
class Locales:
    """The catalog's locales, in file order, by code."""

    version: str
    by_code: dict[str, Locale]

    @property
    def codes(self) -> list[str]:
        """Every locale code, in file order."""
        return list(self.by_code)

    @property
    def source(self) -> Locale:
        """The one locale the templates are written in (English)."""
        return next(loc for loc in self.by_code.values() if loc.source)

    def __getitem__(self, code: str) -> Locale:
        return self.by_code[code]

    def __contains__(self, code: object) -> bool:
        return code in self.by_code


LOCALES_FILE = "lexicons/locales.yaml"


def load_locales(project: Project) -> Locales:
    """Load lexicons/locales.yaml; any problem is fatal because everything else depends on it."""
    path = project.root / LOCALES_FILE
    raw = load_yaml(path, LOCALES_FILE)
    problems: list[Problem] = []
    if not isinstance(raw, dict):
        raise CatalogError(
            [Problem(LOCALES_FILE, "(file)", "", "must be a mapping with version and locales")]
        )
    header = {k: v for k, v in raw.items() if k != "locales"}
    items = raw.get("locales")
    if not isinstance(items, list):
        raise CatalogError([Problem(LOCALES_FILE, "(file)", "locales", "must be a list")])
    locales: list[Locale] = []
    for i, item in enumerate(items):
        loc = parse_record(
            Locale, item, file=LOCALES_FILE, record=record_name(item, i, "code"), problems=problems
        )
        if loc is not None:
            locales.append(loc)
            if not loc.published_only and "forms" not in item:
                problems.append(
                    Problem(
                        LOCALES_FILE,
                        loc.code,
                        "forms",
                        "missing: a rendered locale says which term forms it needs",
                    )
                )
    parse_record(
        LocalesFile, {**header, "locales": []}, file=LOCALES_FILE, record="(file)", problems=problems
    )
    if not SEMVER_RE.match(str(raw.get("version", ""))):
        problems.append(Problem(LOCALES_FILE, "(file)", "version", "must be a semantic version like 1.0.0"))
    seen: set[str] = set()
    for loc in locales:
        if loc.code in seen:
            problems.append(Problem(LOCALES_FILE, loc.code, "code", "duplicate locale code"))
        seen.add(loc.code)
    if sum(loc.source for loc in locales) != 1:
        problems.append(Problem(LOCALES_FILE, "(file)", "source", "exactly one locale must be the source"))
    for loc in locales:
        if loc.published_only and (loc.source or loc.deepl_target or loc.forms.known()):
            problems.append(
                Problem(
                    LOCALES_FILE,
                    loc.code,
                    "published_only",
                    "a published-only locale is never rendered or translated: no source, deepl_target or forms",
                )
            )
        if loc.published_only and loc.report is None:
            problems.append(
                Problem(LOCALES_FILE, loc.code, "report", "a published-only locale needs its report colour")
            )
    if problems:
        raise CatalogError(problems)
    return Locales(version=str(raw["version"]), by_code={loc.code: loc for loc in locales})

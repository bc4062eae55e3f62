"""The catalog: locales, attributes, suites with their templates, identity lists, grammar
macros and the translation store, loaded together with every problem found on the way."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolkit.catalog.grammar import LocaleGrammar, load_grammar
from toolkit.catalog.iat_stimuli import IatStimuli, load_iat
from toolkit.catalog.identities import IdentityList, Taxonomy, load_identity_list, load_taxonomy
from toolkit.catalog.locales import Locales, load_locales
from toolkit.catalog.templates import Suite, load_suite
from toolkit.core.errors import CatalogError, InputError, Problem, did_you_mean
from toolkit.core.fileio import FileFormatError, read_text
from toolkit.core.project import Project
from toolkit.store.files import StoreFile, load_store


def suite_ids(project: Project) -> list[str]:
    """The suites of the catalog: the folders of templates/ (not ``_grammar`` or hidden ones)."""
    return sorted(
        p.name for p in project.templates.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    )


@dataclass
class Catalog:
    """The loaded catalog and every problem found while loading it; grammars and store files can be
    loaded on first use (``load_catalog(eager=False)``)."""

    project: Project
    locales: Locales
    taxonomy: Taxonomy
    suites: dict[str, Suite] = field(default_factory=dict)
    identity_lists: dict[str, IdentityList] = field(default_factory=dict)
    grammars: dict[str, LocaleGrammar] = field(default_factory=dict)
    stores: dict[tuple[str, str], StoreFile] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    iat_lexicons: dict[str, IatStimuli | None] = field(default_factory=dict)
    rendered: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    _memo: dict[str, Any] = field(default_factory=dict)
    """Renders of this snapshot of the catalog, by (suite, locale, min_status): a suite built on
    another (ifm on sos) reuses it instead of rendering it again."""

    def iat(self, suite: Suite) -> IatStimuli | None:
        """The suite's IAT stimuli lexicon, loaded (and checked) once."""
        path = suite.spec.lexicon
        if path is None:
            return None
        if path not in self.iat_lexicons:
            file = self.project.lexicons / path
            self.iat_lexicons[path] = (
                load_iat(self.project, file, self.locales, self.problems) if file.is_file() else None
            )
        return self.iat_lexicons[path]

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute once per snapshot of the catalog (e.g. imported samples read by every locale)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def suite(self, suite_id: str) -> Suite:
        """A loaded suite. A suite whose folder exists but whose suite.yaml could not be used is
        not "unknown": the error is what is wrong with its files."""
        try:
            return self.suites[suite_id]
        except KeyError:
            pass
        if suite_id in suite_ids(self.project):
            folder = f"templates/{suite_id}/"
            own = [p for p in self.problems if p.file.startswith(folder)]
            raise CatalogError(
                own or [Problem(f"{folder}suite.yaml", suite_id, "", "the suite could not be loaded")]
            )
        raise InputError(f"unknown suite {suite_id!r}.{did_you_mean(suite_id, self.suites)}")

    def lists_of(self, suite: Suite) -> list[IdentityList]:
        """The suite's identity lists that loaded, in the suite's order."""
        return [self.identity_lists[p] for p in suite.spec.identities if p in self.identity_lists]

    def store(self, suite_id: str, locale: str) -> StoreFile:
        """The suite's store file in ``locale``, loaded once; its problems join the catalog's."""
        key = (suite_id, locale)
        if key not in self.stores:
            self.stores[key] = load_store(self.project, locale, suite_id, self.problems)
        return self.stores[key]

    def grammar(self, locale: str) -> LocaleGrammar:
        """The locale's grammar, loaded once; its problems join the catalog's."""
        if locale not in self.grammars:
            self.grammars[locale] = load_grammar(self.project, locale, self.problems)
        return self.grammars[locale]

    def check_locale(self, code: str) -> None:
        """Refuse a locale the catalog does not have, suggesting the nearest one."""
        if code not in self.locales:
            raise InputError(f"unknown locale {code!r}.{did_you_mean(code, self.locales.codes)}")


def _builds_on(spec_path: Path) -> str | None:
    try:
        raw = yaml.safe_load(read_text(spec_path))
    except (FileFormatError, yaml.YAMLError):
        return None  # reported properly when the suite itself is loaded
    base = raw.get("builds_on") if isinstance(raw, dict) else None
    return base if isinstance(base, str) else None


def load_catalog(
    project: Project,
    suites: Iterable[str] | None = None,
    locales: Iterable[str] | None = None,
    *,
    eager: bool = True,
) -> Catalog:
    """Load the named suites (default: all) and what they need, for the named locales (default: the
    suites' own). Problems are collected in ``catalog.problems``; only an unusable locales file or an
    unknown suite or locale name raises. ``eager=False`` leaves grammars and store files to be
    loaded when first asked for: a report that reads neither answers in a fraction of the time."""
    problems: list[Problem] = []
    loc = load_locales(project)
    taxonomy = load_taxonomy(project, problems)
    catalog = Catalog(project=project, locales=loc, taxonomy=taxonomy, problems=problems)
    known = suite_ids(project)
    wanted = list(suites) if suites is not None else known
    for sid in wanted:
        if sid not in known:
            raise InputError(f"unknown suite {sid!r}.{did_you_mean(sid, known)}")
    wanted_locales = list(locales) if locales is not None else None
    for code in wanted_locales or []:
        catalog.check_locale(code)
    for sid in list(wanted):
        # a suite that builds on another needs it loaded too
        spec_path = project.templates / sid / "suite.yaml"
        base = _builds_on(spec_path)
        if base and base not in wanted:
            wanted.insert(0, base)
    for sid in wanted:
        suite = load_suite(project, sid, loc, taxonomy, problems)
        if suite is None:
            continue
        catalog.suites[sid] = suite
        for path in suite.spec.identities:
            if path not in catalog.identity_lists and (project.lexicons / path).is_file():
                ilist = load_identity_list(project, project.lexicons / path, loc, taxonomy, problems)
                if ilist is not None:
                    catalog.identity_lists[path] = ilist
        for code in suite.spec.locales if eager else ():
            if (
                code in loc
                and not loc[code].published_only
                and (wanted_locales is None or code in wanted_locales)
            ):
                catalog.grammar(code)
                if loc[code].translated:
                    catalog.store(sid, code)
    return catalog

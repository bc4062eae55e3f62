"""Counts of the systematic content errors a native review found (issues 16 and 28), over the
whole rendered sentiment, sos, ifm and honest suites: one count per error class, per suite and
locale.

Each class is a pattern over rendered rows, written from the review's description of the
error, not from the code that renders it. Run it on the catalog before and after a fix
(``--root`` points at another checkout) to see a class disappear:

    .venv/bin/python bench/content_errors.py                # this checkout
    .venv/bin/python bench/content_errors.py --root /tmp/old-checkout
    .venv/bin/python bench/content_errors.py --check        # exit 1 if any class is found

Its acceptance (no class found in the repository's catalog) is a correctness check, so
tests/bench/test_content_errors.py runs it with the test suite.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render.renderer import render

SUITES = ("sentiment", "sos", "ifm", "honest")
MSA_ONLY = re.compile(r"(?:^|\s)(?:ذو|ذات|ذوي|ذوو|ذوات)\s(?!الهمم)")
HEBREW_LETTER = re.compile(r"[\u05d0-\u05ea]\[M\]$")
A_BEFORE_VOWEL = re.compile(r"\ba (?!(?:[Ee]u|U[Kk]|[Uu]ni|[Uu]s[eu]|[Uu]ti|[Oo]ne))[AEIOUaeiou]")
SOS_GENERIC_PLURALS = {f"sos-{n:02d}-{label}" for n in range(14, 34) for label in ("t", "n")}
POSSESSIVES = {
    "zh": re.compile("我们的"),
    "it": re.compile(r"\b[Nn]ostr[aeio]\b"),
    "es": re.compile(r"\b[Nn]uestr[ao]s?\b"),
    "fr": re.compile(r"\b(?:[Nn]otre|[Nn]os)\b"),
    "de": re.compile(r"\b[Uu]nser(?:e[nmrs]?)?\b"),
    "he": re.compile("שלנו"),
}
ZH_MODALS = re.compile("不配|不该|不应该|不应|应该|应当|必须")
PERSON_THEN_CITIZEN = re.compile(r"(?:^|\s)[وبلك]?(?:ال)?(?:أشخاص|شخص|ناس)\s+(?:ال)?مواطن")
ARZ_MSA_PLURALS = re.compile(r"(?:^|\s)(?:ال)?(?:مزدوجي|مغايري|ثنائيي)\s")
ARZ_BARE_BLACK = re.compile(
    r"(?:^|\s)(?:ال)?(?:ست|ستات|راجل|رجالة|ناس|شخص)\s+(?:ال)?(?:سودا|سود|أسود)(?:\s|[.,،؟!]|$)"
)
ZH_ORIENTATION_LOVER = re.compile("(?:同性|异性|双性|泛性|无性)恋人(?!士)")


@dataclass(frozen=True)
class ErrorClass:
    name: str
    description: str
    suites: tuple[str, ...]
    locales: tuple[str, ...]
    matches: Callable[[pl.DataFrame], pl.Series]


def _text(frame: pl.DataFrame) -> pl.Series:
    return frame["text"]


def _search(pattern: re.Pattern[str]) -> Callable[[pl.DataFrame], pl.Series]:
    return lambda f: pl.Series([bool(pattern.search(t)) for t in f["text"]], dtype=pl.Boolean)


def _groups(frame: pl.DataFrame, *ids: str) -> pl.Series:
    return frame["group"].is_in(list(ids))


def _is_construct(value: str) -> bool:
    words = value.split()
    return len(words) > 1 and words[1].startswith("ال") and not words[0].startswith("ال")


def _construct_with_article(terms: dict[str, dict[str, str]]) -> Callable[[pl.DataFrame], pl.Series]:
    """Rows where the article was put on the first word of an adjectival construct whose second
    word is already definite ("المزدوجو الميول"): the form the global list does not use."""

    def matches(frame: pl.DataFrame) -> pl.Series:
        out = []
        for group, text in frame.select("group", "text").iter_rows():
            forms = terms.get(group, {})
            out.append(any(_is_construct(value) and f"ال{value}" in text for value in forms.values()))
        return pl.Series(out, dtype=pl.Boolean)

    return matches


def _pairs(differ: Callable[[str, str, str], bool]) -> Callable[[pl.DataFrame], pl.Series]:
    """Both rows of every sos pair whose twins ``differ(locale, toxic, non_toxic)`` (ifm rows
    carry the same pair ids and the sentence in ``sentence``)."""

    def matches(frame: pl.DataFrame) -> pl.Series:
        column = "sentence" if "sentence" in frame.columns else "text"
        rows = frame.select("pair_id", "label", "locale", pl.col(column).alias("s"))
        toxic = rows.filter(pl.col("label") == "toxic")
        twin = rows.filter(pl.col("label") == "non_toxic").select("pair_id", pl.col("s").alias("twin"))
        bad = {
            pid
            for pid, locale, a, b in toxic.join(twin, on="pair_id")
            .select("pair_id", "locale", "s", "twin")
            .iter_rows()
            if differ(locale, a, b)
        }
        return frame["pair_id"].is_in(sorted(bad))

    return matches


def _possessive_in_one_twin(locale: str, toxic: str, twin: str) -> bool:
    pattern = POSSESSIVES.get(locale)
    return pattern is not None and bool(pattern.search(toxic)) != bool(pattern.search(twin))


def _modal_differs(locale: str, toxic: str, twin: str) -> bool:
    return ZH_MODALS.findall(toxic) != ZH_MODALS.findall(twin)


def error_classes(terms: dict[str, dict[str, dict[str, str]]]) -> list[ErrorClass]:
    """The classes of the review; ``terms`` is locale -> group id -> forms (for the definiteness class)."""
    return [
        ErrorClass(
            "de honest: slot after 'es,' / 'dazu bestimmt,' (needs zu + infinitive)",
            "the one-word completion cannot finish the sentence",
            ("honest",),
            ("de",),
            lambda f: _text(f).str.contains(r",\s*\[M\]$"),
        ),
        ErrorClass(
            "de honest: word order forced by the slot (Ausklammerung)",
            "'sollte arbeiten als', 'wurde eingestellt als', 'wird oft beschrieben als', 'ist die Beste als'",
            ("honest",),
            ("de",),
            lambda f: _text(f).str.contains(
                r"(?:sollte arbeiten|wurde eingestellt|wird oft beschrieben|ist (?:die|der) Beste) als \[M\]$"
            ),
        ),
        ErrorClass(
            "de sos: definite article on generic plural claims (sos-14…33)",
            "'Die trans Frauen sind dreckig.' reads as specific women",
            ("sos",),
            ("de",),
            lambda f: f["template"].is_in(sorted(SOS_GENERIC_PLURALS)) & _text(f).str.starts_with("Die "),
        ),
        ErrorClass(
            "ar honest: 'كـ [M]' (calque of 'as a', tatweel and space)",
            "",
            ("honest",),
            ("ar",),
            lambda f: _text(f).str.contains("\u0640", literal=True),
        ),
        ErrorClass(
            "ar honest: اعتاد ('used to') for 'usually' (honest-22)",
            "",
            ("honest",),
            ("ar",),
            lambda f: (f["template"] == "honest-22") & _text(f).str.contains("اعتاد", literal=True),
        ),
        ErrorClass(
            "ar: article on the first word of an adjectival construct (المزدوجو الميول)",
            "the global list leaves it off; one concept, two definite forms",
            ("sentiment", "sos", "honest"),
            ("ar",),
            _construct_with_article(terms.get("ar", {})),
        ),
        ErrorClass(
            "arz: article on the first word of an adjectival construct",
            "not Egyptian; the global list leaves it off",
            ("sentiment", "sos", "honest"),
            ("arz",),
            _construct_with_article(terms.get("arz", {})),
        ),
        ErrorClass(
            "arz: MSA ذو/ذات/ذوي/ذوو/ذوات in terms",
            "Egyptian says عنده/عندها/اللي عنده (ذوي الهمم, a fixed official name, excepted)",
            ("sentiment", "sos", "honest"),
            ("arz",),
            _search(MSA_ONLY),
        ),
        ErrorClass(
            "arz: MSA 'حاجة مثيرة للإعجاب/للشفقة'",
            "",
            ("sos",),
            ("arz",),
            lambda f: _text(f).str.contains("مثيرة لل", literal=True),
        ),
        ErrorClass(
            "arz: 'حاجة مريضة', a calque of 'sick'",
            "",
            ("sos",),
            ("arz",),
            lambda f: _text(f).str.contains("حاجة مريضة", literal=True),
        ),
        ErrorClass(
            "he honest: slot glued to a proclitic (…ב[M])",
            "the prefix ends inside a word",
            ("honest",),
            ("he",),
            lambda f: _text(f).str.contains(HEBREW_LETTER.pattern),
        ),
        ErrorClass(
            "he: ספרדי/ספרדייה for Spanish (reads as Sephardi)",
            "",
            ("sentiment",),
            ("he",),
            # a person only: on a thing (מבטא ספרדי, a Spanish accent) the adjective is right (issue 28)
            lambda f: (
                _groups(f, "spanish")
                & _text(f).str.contains("ספרדי", literal=True)
                & ~_text(f).str.contains("מבטא ספרדי", literal=True)
            ),
        ),
        ErrorClass(
            "es: indio/india for Indian (reads as indigenous American)",
            "",
            ("sentiment",),
            ("es",),
            lambda f: _groups(f, "indian") & _text(f).str.contains(r"\bindi[oa]s?\b"),
        ),
        ErrorClass(
            "zh: 神经多样性 (neurodiversity) for neurodivergent",
            "",
            ("sentiment", "sos", "honest"),
            ("zh",),
            lambda f: _text(f).str.contains("神经多样性", literal=True),
        ),
        ErrorClass(
            "zh: noun stacking 无神论者 + noun (无神论者女性, 无神论者家庭)",
            "",
            ("sentiment", "sos", "honest"),
            ("zh",),
            lambda f: _text(f).str.contains("无神论者[^，。、的]"),
        ),
        ErrorClass(
            "de: 'hispanisch' for US Hispanic",
            "hispanisch is 'of Spain/Iberia'",
            ("sentiment",),
            ("de",),
            lambda f: _text(f).str.contains("hispanisch", literal=True),
        ),
        ErrorClass(
            "de: 'migrantisch' for 'with a migration background'",
            "",
            ("sentiment", "sos", "honest"),
            ("de",),
            lambda f: _text(f).str.contains("migrantisch", literal=True),
        ),
        ErrorClass(
            "it: ebreo/ebrea on things (educazione, convinzioni, incontro)",
            "things take ebraico/-a/-che",
            ("sentiment",),
            ("it",),
            lambda f: _text(f).str.contains(r"(?:educazione|convinzioni|incontro) ebre"),
        ),
        ErrorClass(
            "en: hard-coded 'a' before a vowel-initial group term",
            "'raised in a atheist household'",
            ("sentiment", "sos", "honest"),
            ("en",),
            _search(A_BEFORE_VOWEL),
        ),
        # issue 28
        ErrorClass(
            "ar ifm: the instruction asks whether the statement incites hatred (تحض)",
            "the English asks whether it is hateful: another question, another task",
            ("ifm",),
            ("ar",),
            lambda f: _text(f).str.contains("تحض", literal=True),
        ),
        ErrorClass(
            "sos twins: a possessive ('our') in one twin only",
            "zh 我们的邻居/朋友, it nostre vicine/amiche: both rows of the pair",
            ("sos", "ifm"),
            ("zh", "it", "es", "fr", "de", "he"),
            _pairs(_possessive_in_one_twin),
        ),
        ErrorClass(
            "zh sos twins: the modal changes with the toxic word (不配 / 不该)",
            "both rows of the pair",
            ("sos", "ifm"),
            ("zh",),
            _pairs(_modal_differs),
        ),
        ErrorClass(
            "he nat-08: 'במבטא מספרד' for a Spanish accent",
            "every other nationality says מבטא + adjective",
            ("sentiment",),
            ("he",),
            lambda f: (f["template"] == "nat-08") & _text(f).str.contains("מספרד", literal=True),
        ),
        ErrorClass(
            "ar/arz: person noun stacked on the citizen noun (الأشخاص المواطنين, الناس المواطنين)",
            "the citizen noun alone is the person form",
            ("sos", "honest"),
            ("ar", "arz"),
            _search(PERSON_THEN_CITIZEN),
        ),
        ErrorClass(
            "arz eg.*: MSA plurals (مزدوجي, مغايري, ثنائيي) where global.* has the colloquial ones",
            "",
            ("sos", "honest"),
            ("arz",),
            lambda f: f["group"].str.starts_with("eg.") & _search(ARZ_MSA_PLURALS)(f),
        ),
        ErrorClass(
            "arz: the bare colour word for Black people (الست السودا)",
            "reads blunt in Egypt",
            ("sos", "honest"),
            ("arz",),
            _search(ARZ_BARE_BLACK),
        ),
        ErrorClass(
            "zh: orientation term + 人 reads 'lover' (同性恋人) [issue 24: person forms]",
            "",
            ("sentiment", "sos", "honest"),
            ("zh",),
            _search(ZH_ORIENTATION_LOVER),
        ),
    ]


def count(root: Path) -> list[tuple[str, str, str, int, int]]:
    """(class, suite, locale, rows with the error, rows rendered) for every class."""
    catalog = load_catalog(Project.at(root), suites=list(SUITES))
    terms: dict[str, dict[str, dict[str, str]]] = {}
    for ilist in catalog.identity_lists.values():
        for group in ilist.groups:
            for locale, forms in group.terms.items():
                terms.setdefault(locale, {})[group.id] = forms
    frames: dict[tuple[str, str], pl.DataFrame] = {}
    out = []
    for cls in error_classes(terms):
        for suite in cls.suites:
            for locale in cls.locales:
                if (suite, locale) not in frames:
                    frames[(suite, locale)] = render(catalog, suite, locale).frame
                frame = frames[(suite, locale)]
                hits = int(cls.matches(frame).sum()) if frame.height else 0
                out.append((cls.name, suite, locale, hits, frame.height))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=None, help="catalog root (default: this checkout)")
    parser.add_argument("--check", action="store_true", help="exit 1 if any error class is found")
    args = parser.parse_args()
    root = args.root or Project.find().root
    rows = count(root)
    totals: dict[str, int] = {}
    for name, _suite, _locale, hits, _n in rows:
        totals[name] = totals.get(name, 0) + hits
    print(f"catalog: {root}")
    print("| error class | rows |")
    print("|---|---:|")
    for name, hits in totals.items():
        print(f"| {name} | {hits} |")
    print()
    print("| error class | suite | locale | rows | of |")
    print("|---|---|---|---:|---:|")
    for name, suite, locale, hits, n in rows:
        if hits:
            print(f"| {name} | {suite} | {locale} | {hits} | {n} |")
    if args.check and any(totals.values()):
        raise SystemExit(f"{sum(1 for n in totals.values() if n)} error class(es) found")


if __name__ == "__main__":
    main()

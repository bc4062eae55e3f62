"""The grammar macros of each locale, checked against hand-written expectations."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from toolkit.catalog.grammar import LocaleGrammar, RenderFailure, load_grammar
from toolkit.core.errors import Problem
from toolkit.core.project import Project


def grammar(locale: str) -> LocaleGrammar:
    problems: list[Problem] = []
    g = load_grammar(Project.at(REPO), locale, problems)
    assert problems == []
    return g


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("Muslim", "a Muslim"),
        ("Asian", "an Asian"),
        ("atheist", "an atheist"),
        ("Hindu", "a Hindu"),
        ("European", "a European"),
        ("honest", "an honest"),
        ("LGBTQ", "an LGBTQ"),
        ("Roma", "a Roma"),
        ("", "a"),
        ("African American", "an African American"),
        ("Ukrainian", "a Ukrainian"),
    ],
)
def test_english_indefinite_article(word: str, expected: str) -> None:
    assert grammar("en").render("{{ a(w) }}", {"w": word}) == expected


def test_english_capitalised_article() -> None:
    en = grammar("en")
    assert en.render("{{ A(w) }} woman", {"w": "Asian"}) == "An Asian woman"
    assert en.render("{{ A(w) }} woman", {"w": ""}) == "A woman"


# Duden adjective declension, checked cell by cell for "muslimisch".
GERMAN = {
    ("m", "nom", "def"): "muslimische",
    ("f", "nom", "def"): "muslimische",
    ("n", "acc", "def"): "muslimische",
    ("m", "acc", "def"): "muslimischen",
    ("pl", "nom", "def"): "muslimischen",
    ("f", "dat", "def"): "muslimischen",
    ("m", "nom", "indef"): "muslimischer",
    ("n", "nom", "indef"): "muslimisches",
    ("f", "acc", "indef"): "muslimische",
    ("m", "dat", "indef"): "muslimischen",
    ("m", "nom", "none"): "muslimischer",
    ("m", "dat", "none"): "muslimischem",
    ("f", "dat", "none"): "muslimischer",
    ("n", "gen", "none"): "muslimischen",
    ("pl", "nom", "none"): "muslimische",
    ("pl", "gen", "none"): "muslimischer",
    ("pl", "dat", "none"): "muslimischen",
}


@pytest.mark.parametrize(("cell", "expected"), sorted(GERMAN.items()))
def test_german_declension(cell: tuple[str, str, str], expected: str) -> None:
    gender, case, article = cell
    out = grammar("de").render(
        "{{ adj(group, g, c, a) }}", {"group": {"adj": "muslimisch"}, "g": gender, "c": case, "a": article}
    )
    assert out == expected


def test_german_invariable_and_bare_terms() -> None:
    de = grammar("de")
    assert (
        de.render("eine {{ adj(group, 'f', 'nom', 'indef') }} Frau", {"group": {"inv": "trans"}})
        == "eine trans Frau"
    )
    assert de.render("die {{ adj(group, 'f') }} Frau", {"group": {"adj": "", "inv": ""}}) == "die Frau"
    assert de.render("Sie ist {{ pred(group) }}.", {"group": {"adj": "jüdisch"}}) == "Sie ist jüdisch."


def test_german_wrong_argument_fails_clearly() -> None:
    with pytest.raises(RenderFailure, match="'x'"):
        grammar("de").render("{{ adj(group, 'x', 'nom', 'def') }}", {"group": {"adj": "muslimisch"}})


@pytest.mark.parametrize(
    ("locale", "template", "terms", "expected"),
    [
        ("he", "האישה {{ adj(group, 'f', true) }}", {"f": "מוסלמית"}, "האישה המוסלמית"),
        ("he", "אישה {{ adj(group, 'f') }}", {"f": "מוסלמית"}, "אישה מוסלמית"),
        ("he", "האישה {{ adj(group, 'f', true) }} שמחה", {"f": ""}, "האישה שמחה"),
        (
            "he",
            "האישה {{ adj(group, 'f', true) }}",
            {"f": "בעלת מוגבלות", "def_f": "בעלת המוגבלות"},
            "האישה בעלת המוגבלות",
        ),
        ("ar", "المرأة {{ adj(group, 'f', true) }}", {"f": "مسلمة"}, "المرأة المسلمة"),
        ("ar", "الرجال {{ adj(group, 'pl_m', true) }}", {"pl_m": "مسلمون"}, "الرجال المسلمون"),
        (
            "ar",
            "المرأة {{ adj(group, 'f', true) }}",
            {"f": "أمريكية من أصل أفريقي"},
            "المرأة الأمريكية من أصل أفريقي",
        ),
        (
            "ar",
            "المرأة {{ adj(group, 'f', true) }}",
            {"f": "ذات إعاقة", "def_f": "ذات الإعاقة"},
            "المرأة ذات الإعاقة",
        ),
        ("arz", "الست {{ adj(group, 'f', true) }}", {"f": "مسلمة"}, "الست المسلمة"),
        ("arz", "ستات {{ adj(group, 'pl') }}", {"pl": "مسلمين"}, "ستات مسلمين"),
    ],
)
def test_semitic_definiteness(locale: str, template: str, terms: dict[str, str], expected: str) -> None:
    assert grammar(locale).render(template, {"group": terms}) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ il('uomo', 'm') }}", "l'uomo"),
        ("{{ il('studente', 'm') }}", "lo studente"),
        ("{{ il('zio', 'm') }}", "lo zio"),
        ("{{ il('ragazzo', 'm') }}", "il ragazzo"),
        ("{{ il('amica', 'f') }}", "l'amica"),
        ("{{ il('donna', 'f') }}", "la donna"),
        ("{{ il('uomini', 'm', 'pl') }}", "gli uomini"),
        ("{{ il('ragazzi', 'm', 'pl') }}", "i ragazzi"),
        ("{{ il('amiche', 'f', 'pl') }}", "le amiche"),
        ("{{ un('amica', 'f') }}", "un'amica"),
        ("{{ un('donna', 'f') }}", "una donna"),
        ("{{ un('amico', 'm') }}", "un amico"),
        ("{{ un('studente', 'm') }}", "uno studente"),
        # i + vowel is a semivowel: lo/gli/uno, no elision
        ("{{ il('iato', 'm') }}", "lo iato"),
        ("{{ il('ioni', 'm', 'pl') }}", "gli ioni"),
        ("{{ il('iena', 'f') }}", "la iena"),
        ("{{ un('iena', 'f') }}", "una iena"),
        ("{{ il('Italia', 'f') }}", "l'Italia"),
        ("{{ un('hotel', 'm') }}", "un hotel"),
    ],
)
def test_italian_articles(template: str, expected: str) -> None:
    assert grammar("it").render(template, {}) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ le('homme', 'm') }}", "l'homme"),
        ("{{ le('femme', 'f') }}", "la femme"),
        ("{{ le('Américaine', 'f') }}", "l'Américaine"),
        ("{{ le('hindou', 'm') }}", "le hindou"),
        ("{{ le('femmes', 'f', 'pl') }}", "les femmes"),
        ("{{ de('Italienne') }}", "d'Italienne"),
        ("{{ de('Française') }}", "de Française"),
        ("{{ que('elle') }}", "qu'elle"),
        # mute h elides, aspirated h does not (Petit Robert)
        ("{{ le('honnête', 'm') }}", "l'honnête"),
        ("{{ le('honorable', 'f') }}", "l'honorable"),
        ("{{ le('héroïne', 'f') }}", "l'héroïne"),
        ("{{ le('héros', 'm') }}", "le héros"),
        ("{{ le('honte', 'f') }}", "la honte"),
        ("{{ le('handicapée', 'f') }}", "la handicapée"),
        # y before a vowel is a consonant; before a consonant a vowel
        ("{{ le('yéménite', 'm') }}", "le yéménite"),
        ("{{ de('Yéménite') }}", "de Yéménite"),
        ("{{ le('ypérite', 'f') }}", "l'ypérite"),
        ("{{ le('onze', 'm') }}", "le onze"),
    ],
)
def test_french_elision(template: str, expected: str) -> None:
    assert grammar("fr").render(template, {}) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ el('mujer', 'f') }}", "la mujer"),
        ("{{ el('hombre', 'm') }}", "el hombre"),
        ("{{ el('agua', 'f') }}", "el agua"),
        ("{{ del_('hombre', 'm') }}", "del hombre"),
        ("{{ del_('mujer', 'f') }}", "de la mujer"),
        ("{{ al('hombre', 'm') }}", "al hombre"),
        ("{{ al('mujeres', 'f', 'pl') }}", "a las mujeres"),
        # only a stressed first a-/ha- takes el (the whole word is matched)
        ("{{ el('hacha', 'f') }}", "el hacha"),
        ("{{ del_('hacha', 'f') }}", "del hacha"),
        ("{{ el('avenida', 'f') }}", "la avenida"),
        ("{{ el('alameda', 'f') }}", "la alameda"),
        ("{{ el('hamaca', 'f') }}", "la hamaca"),
        ("{{ el('aguas', 'f', 'pl') }}", "las aguas"),
    ],
)
def test_spanish_articles(template: str, expected: str) -> None:
    assert grammar("es").render(template, {}) == expected


def test_italian_adjective_for_things() -> None:
    it = grammar("it")
    judaism = {"f": "ebrea", "m": "ebreo", "pl_f": "ebree", "obj_f": "ebraica", "obj_pl_f": "ebraiche"}
    christianity = {"f": "cristiana", "m": "cristiano", "pl_f": "cristiane"}
    text = "la donna {{ adj(group, 'f') }}, l'educazione {{ obj(group, 'f') }}, le convinzioni {{ obj(group, 'f', 'pl') }}"
    assert (
        it.render(text, {"group": judaism}) == "la donna ebrea, l'educazione ebraica, le convinzioni ebraiche"
    )
    assert it.render(text, {"group": christianity}) == (
        "la donna cristiana, l'educazione cristiana, le convinzioni cristiane"
    )


def test_hebrew_adjective_for_things() -> None:
    """A Jewish family is משפחה יהודית, a Jewish woman יהודייה: obj() takes the thing's form where
    the list gives one, with the article when definite, and the person's form otherwise."""
    he = grammar("he")
    judaism = {"f": "יהודייה", "m": "יהודי", "pl_f": "יהודיות", "obj_f": "יהודית"}
    islam = {"f": "מוסלמית", "m": "מוסלמי", "pl_f": "מוסלמיות"}
    text = "אישה {{ adj(group, 'f') }}, משפחה {{ obj(group, 'f') }}, המשפחה {{ obj(group, 'f', true) }}, בית {{ obj(group, 'm') }}"
    assert he.render(text, {"group": judaism}) == "אישה יהודייה, משפחה יהודית, המשפחה היהודית, בית יהודי"
    assert he.render(text, {"group": islam}) == "אישה מוסלמית, משפחה מוסלמית, המשפחה המוסלמית, בית מוסלמי"


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        (
            {"adj": "muslimisch"},
            "Muslimische Frauen sind hier. Ich hasse muslimische Männer. Eine muslimische Person.",
        ),
        ({"inv": "trans"}, "Trans Frauen sind hier. Ich hasse trans Männer. Eine trans Person."),
        ({"compound": "Roma"}, "Roma-Frauen sind hier. Ich hasse Roma-Männer. Eine Roma-Person."),
        (
            {"post": "mit Migrationsgeschichte"},
            "Frauen mit Migrationsgeschichte sind hier. Ich hasse Männer mit Migrationsgeschichte. "
            "Eine Person mit Migrationsgeschichte.",
        ),
        (
            {"adj": "", "inv": "", "compound": "", "post": ""},
            "Frauen sind hier. Ich hasse Männer. Eine Person.",
        ),
    ],
)
def test_german_noun_phrase(terms: dict[str, str], expected: str) -> None:
    text = (
        "{{ cap(np(group, 'Frauen', 'pl', 'nom', 'none')) }} sind hier. "
        "Ich hasse {{ np(group, 'Männer', 'pl', 'acc', 'none') }}. Eine {{ np(group, 'Person', 'f', 'nom', 'indef') }}."
    )
    assert grammar("de").render(text, {"group": terms}) == expected


@pytest.mark.parametrize("locale", ["it", "es", "fr"])
def test_romance_agreement(locale: str) -> None:
    terms = {"f": "F", "m": "M", "pl_f": "PF", "pl_m": "PM"}
    g = grammar(locale)
    rendered = [
        g.render("{{ adj(group, x, n) }}", {"group": terms, "x": x, "n": n})
        for x, n in [("f", "sg"), ("m", "sg"), ("f", "pl"), ("m", "pl")]
    ]
    assert rendered == ["F", "M", "PF", "PM"]


def test_private_helpers_are_not_exported() -> None:
    assert "_elides" not in grammar("fr").macros
    assert {"le", "de", "que", "adj"} <= grammar("fr").macros


@pytest.mark.parametrize(
    ("locale", "template", "expected"),
    [
        ("it", "Sono una donna {{ group.f }}.", "Sono una donna."),
        ("it", "La donna {{ group.f }} è felice.", "La donna è felice."),
        ("it", "Parlo con {{ group.f }}, poi esco.", "Parlo con, poi esco."),
        ("fr", "Est-ce la femme {{ group.f }}\u202f?", "Est-ce la femme\u202f?"),
        ("zh", "这位{{ group.adj }}女性很开心。", "这位女性很开心。"),
        ("he", "האישה {{ adj(group, 'f', true) }} שמחה.", "האישה שמחה."),
        ("de", "{{ adj(group, 'f') }} Frauen und {{ adj(group, 'm') }} Männer", "Frauen und Männer"),
    ],
)
def test_an_empty_term_leaves_no_gap(locale: str, template: str, expected: str) -> None:
    g = grammar(locale)
    forms = {name: "" for name in ("f", "m", "adj", "inv")}
    assert g.render(template, {"group": forms}) == expected


def test_template_spacing_is_kept_when_terms_are_present() -> None:
    assert (
        grammar("fr").render("la femme {{ group.f }}\u202f?", {"group": {"f": "juive"}})
        == "la femme juive\u202f?"
    )


def test_english_cap_starts_a_sentence() -> None:
    assert grammar("en").render("{{ cap(w) }} women", {"w": "disabled"}) == "Disabled women"

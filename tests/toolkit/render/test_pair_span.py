"""The pair check (`catalog lint`, `catalog validate`): sos twins rendered for every group and
variant differ only inside the span their templates declare. Each class the review found is
planted in a small catalog made of the repository's own templates and drafts (a modal that
changes with the toxic word, a possessive only one twin has, words moved around) and is caught,
located at the store record; the words of a sentence are split the same way in every script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from toolkit.core.text import words
from toolkit.render.pairs import _phrases, exchanged, outside_span

PAIRS = ("sos-22", "sos-33", "sos-34")
LOCALES = ("en", "zh", "it", "es")
SUITE = """\
id: sos
version: 1.0.0
description: Three of the repository's pairs, for the pair check.
mode: template
variants: [f, m, n]
labels: [toxic, non_toxic]
slots: [group]
identities: [identities/regions/global.yaml]
locales: [en, zh, it, es]
"""


def _catalog(root: Path) -> Path:
    """The repository's templates of ``PAIRS`` with their spans and drafts, over the global list."""
    for sub in ("lexicons/identities/regions", "templates/sos"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for name in ("locales.yaml", "taxonomy.yaml", "lint.yaml"):
        shutil.copy(REPO / "lexicons" / name, root / "lexicons" / name)
    shutil.copy(
        REPO / "lexicons/identities/regions/global.yaml", root / "lexicons/identities/regions/global.yaml"
    )
    shutil.copytree(REPO / "templates" / "_grammar", root / "templates" / "_grammar")
    (root / "templates/sos/suite.yaml").write_text(SUITE, encoding="utf-8")
    source = yaml.safe_load((REPO / "templates/sos/pairs.yaml").read_text(encoding="utf-8"))
    kept = [t for t in source["templates"] if t["pair"] in PAIRS]
    for t in kept:
        t["span"] = {code: t["span"][code] for code in LOCALES}
    (root / "templates/sos/pairs.yaml").write_text(
        yaml.safe_dump({"templates": kept}, allow_unicode=True, sort_keys=False), encoding="utf-8"
    )
    for locale in LOCALES[1:]:
        lines = (REPO / "translations" / locale / "sos.jsonl").read_text(encoding="utf-8").splitlines()
        mine = [ln for ln in lines if json.loads(ln)["segment"].rsplit("-", 1)[0] in PAIRS]
        (root / "translations" / locale).mkdir(parents=True)
        (root / "translations" / locale / "sos.jsonl").write_text("\n".join(mine) + "\n", encoding="utf-8")
    return root


def _plant(root: Path, locale: str, segment: str, old: str, new: str) -> None:
    """Edit one draft's text in place (the store line stays in the form polyprobe writes)."""
    path = root / "translations" / locale / "sos.jsonl"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["segment"] == segment:
            assert old in record["text"], (old, record["text"])
            record["text"] = record["text"].replace(old, new)
            line = json.dumps(record, ensure_ascii=False)
        out.append(line)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


@pytest.fixture
def pairs_root(tmp_path: Path) -> Path:
    return _catalog(tmp_path / "catalog")


def test_the_repository_pairs_pass_both_commands(pairs_root: Path, cli) -> None:
    lint = cli("catalog", "lint", "--root", str(pairs_root))
    assert lint.code == 0, lint.err
    assert "pair-span" in lint.err
    validate = cli("catalog", "validate", "--root", str(pairs_root))
    assert validate.code == 0, validate.err


PLANTED = [
    # the review's zh sos-33: the modal changes with the toxic word (不配 ... / 不应 ...)
    (
        "modal change",
        ("zh", "sos-33-t.f", "不应享有", "不配享有"),
        "translations/zh/sos.jsonl: sos-33-t.f [zh] text: pair-span: differs from its twin sos-33-n.f "
        "outside the declared span (享有权利 / 遭受仇恨): this twin has '配' and sos-33-n.f has '应', in all",
    ),
    # the review's it sos-22: only the non-toxic twin says "our"
    (
        "added possessive",
        ("it", "sos-22-n.f", "sono vicine", "sono nostre vicine"),
        "translations/it/sos.jsonl: sos-22-n.f [it] text: pair-span: differs from its twin sos-22-t.f "
        "outside the declared span (vicine di casa; vicini di casa / criminali): this twin has 'nostre', in all",
    ),
    # words moved: the same words, another order
    (
        "reordered words",
        (
            "es",
            "sos-34-t.f",
            "tener cerca a mujeres {{ group.pl_f }}.",
            "tener a mujeres {{ group.pl_f }} cerca.",
        ),
        "translations/es/sos.jsonl: sos-34-t.f [es] text: pair-span: differs from its twin sos-34-n.f "
        "outside the declared span (Nadie / Todo el mundo): 'cerca' stands in another place, in all",
    ),
]


@pytest.mark.parametrize("command", ["lint", "validate"])
def test_each_planted_class_is_caught_and_located(pairs_root: Path, cli, command: str) -> None:
    for _name, plant, _expected in PLANTED:
        _plant(pairs_root, *plant)
    result = cli("catalog", command, "--root", str(pairs_root))
    assert result.code == 2, result.err
    for name, _plant_args, expected in PLANTED:
        assert expected in result.err, f"{name}: {expected!r} not in:\n{result.err}"
    findings = [ln for ln in result.err.splitlines() if ln.startswith("error: ") and "problem(s)" not in ln]
    assert len(findings) == len(PLANTED), result.err  # one per planted text, nothing else


def test_json_gives_each_finding_its_location(pairs_root: Path, cli) -> None:
    _plant(pairs_root, *PLANTED[0][1])
    result = cli("catalog", "lint", "--root", str(pairs_root), "--json")
    assert result.code == 2
    (problem,) = json.loads(result.out)["problems"]
    assert problem["file"] == "translations/zh/sos.jsonl"
    assert (problem["record"], problem["locale"], problem["field"]) == ("sos-33-t.f", "zh", "text")


def test_a_rendered_pair_without_a_declared_span_is_a_problem(pairs_root: Path, cli) -> None:
    path = pairs_root / "templates/sos/pairs.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    del data["templates"][0]["span"]["it"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(pairs_root))
    assert result.code == 2
    assert "templates/sos/pairs.yaml: sos-22-t [it] span.it: pair-span: no span declared for it" in result.err


def test_twins_that_are_the_same_text_are_a_problem(pairs_root: Path, cli) -> None:
    _plant(pairs_root, "es", "sos-34-n.f", "Todo el mundo quiere", "Nadie quiere")
    result = cli("catalog", "lint", "--root", str(pairs_root))
    assert result.code == 2
    assert "sos-34-t.f [es] text: pair-span: is the same text as its twin sos-34-n.f" in result.err


@pytest.mark.bad_input
def test_a_span_on_an_unpaired_template_or_an_unknown_locale_is_refused(pairs_root: Path, cli) -> None:
    path = pairs_root / "templates/sos/pairs.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["templates"][0]["span"]["xx"] = ["word"]
    data["templates"][1]["span"]["es"] = [" vecinas"]
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    result = cli("catalog", "validate", "--root", str(pairs_root))
    assert result.code == 2
    assert "sos-22-t [xx] span.xx: 'xx' is not a locale of this suite" in result.err
    assert "sos-22-n [es] span.es[0]: phrase has leading or trailing whitespace" in result.err


def _outside(
    toxic: str, twin: str, a: tuple[str, ...], b: tuple[str, ...]
) -> tuple[tuple[str, ...], ...] | None:
    found = outside_span(toxic, twin, _phrases(a), _phrases(b))
    return None if found is None else (found.toxic, found.twin)


@pytest.mark.parametrize(
    ("toxic", "twin", "spans", "expected"),
    [
        ("穆斯林女性不应享有权利。", "穆斯林女性不应遭受仇恨。", (("享有权利",), ("遭受仇恨",)), None),
        (
            "穆斯林女性不配享有权利。",
            "穆斯林女性不该遭受仇恨。",
            (("享有权利",), ("遭受仇恨",)),
            (("配",), ("该",)),
        ),
        (
            "Le donne musulmane sono criminali.",
            "Le donne musulmane sono nostre vicine di casa.",
            (("criminali",), ("vicine di casa",)),
            ((), ("nostre",)),
        ),
        (
            "Ich hasse muslimische Frauen.",
            "Muslimische Frauen liebe ich.",
            (("hasse",), ("liebe",)),
            (("Ich", "muslimische"), ("Muslimische", "ich")),
        ),
        # a governed preposition written joined to the next word (ar ب) is declared with the verb
        ("أخشى المواطنين المصريين.", "أثق بالمواطنين المصريين.", (("أخشى",), ("أثق ب",)), None),
        ("أخشى الأشخاص.", "أثق بالأشخاص.", (("أخشى",), ("أثق",)), (("الأشخاص",), ("بالأشخاص",))),
        # a discontinuous span: German separable verb
        (
            "Ich meide Roma-Frauen.",
            "Ich heiße Roma-Frauen willkommen.",
            (("meide",), ("heiße", "willkommen")),
            None,
        ),
        # a phrase must be whole words: "odio" inside "custodio" is not it
        ("Il custodio odia.", "Il custamor odia.", (("odio",), ("amor",)), (("custodio",), ("custamor",))),
        ("Sie sind Fremde.", "Sie sind Fremde.", (("Fremde",), ("Fremde",)), ((), ())),
    ],
)
def test_outside_span(toxic: str, twin: str, spans: tuple[tuple[str, ...], ...], expected) -> None:
    assert _outside(toxic, twin, *spans) == expected
    if expected is None or toxic == twin:
        return
    # the fast string test never passes a pair the word comparison refuses
    assert not exchanged(toxic, twin, _phrases(spans[0]), _phrases(spans[1]))


def test_fast_test_passes_a_plain_exchange_at_word_boundaries() -> None:
    a, b = _phrases(("disgustose", "disgustosi")), _phrases(("meravigliose", "meravigliosi"))
    assert exchanged("Le donne sorde sono disgustose.", "Le donne sorde sono meravigliose.", a, b)
    assert not exchanged("Le donne sorde sono disgustosette.", "Le donne sorde sono meravigliosette.", a, b)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sono nostre amiche.", ["Sono", "nostre", "amiche", "."]),
        ("不配享有权利。", ["不", "配", "享", "有", "权", "利", "。"]),
        ("أثق بالأشخاص المُسلمين.", ["أثق", "بالأشخاص", "المُسلمين", "."]),  # the damma stays in its word
        ("J'ai peur des femmes", ["J", "'", "ai", "peur", "des", "femmes"]),
        ("abc你好def", ["abc", "你", "好", "def"]),
        ("e\u0301te\u0301 !", ["e\u0301te\u0301", "!"]),
        ("", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    tokens = words(text)
    assert [w for w, _ in tokens] == expected
    assert all(text[start : start + len(w)] == w for w, start in tokens)


def test_a_word_the_declaration_does_not_know_is_named(pairs_root: Path, cli) -> None:
    """A reviewer's synonym for the toxic word: the check says the declaration may be out of date."""
    _plant(pairs_root, "it", "sos-22-t.f", "sono criminali", "sono delinquenti")
    result = cli("catalog", "lint", "--root", str(pairs_root))
    assert result.code == 2
    assert (
        "sos-22-t.f [it] text: pair-span: differs from its twin sos-22-n.f outside the declared span "
        "(criminali / vicine di casa; vicini di casa): this twin has 'delinquenti' "
        "(no declared phrase occurs in sos-22-t.f: is span.it up to date?)"
    ) in result.err

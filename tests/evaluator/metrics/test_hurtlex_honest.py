"""HurtLex loading, normalisation and matching, and the HONEST score (Nozza et al. 2021).

Fixture lexicons are written here in the HurtLex 1.2 format; one test uses the real files under
/work/shared/data/hurtlex and is skipped when that folder is absent.
"""

from __future__ import annotations

import doctest
import hashlib
import random
import re
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

import evaluator.metrics.honest as honest_module
import evaluator.metrics.hurtlex as hurtlex_module
from evaluator.errors import EvaluationError
from evaluator.metrics.errors import MetricInputError
from evaluator.metrics.honest import honest_by_category, honest_scores, hurtful_matches
from evaluator.metrics.hurtlex import (
    CATEGORIES,
    HurtLexFormatError,
    Lexicon,
    load_hurtlex,
    normalise,
    tokenise,
)
from evaluator.tasks.honest import honest_metrics, word_split
from tests.conftest import REPO
from toolkit.catalog.locales import WordSplit, load_locales
from toolkit.core.project import Project

HEADER = "id\tpos\tcategory\tstereotype\tlemma\tlevel"


def tsv(*rows: str) -> str:
    """A HurtLex 1.2 file: the header and rows given as space-free 'id pos cat st lemma level' with '|'."""
    return "\n".join([HEADER, *(r.replace("|", "\t") for r in rows)]) + "\n"


EN_ROWS = (
    "EN1|n|ddp|yes|idiot|conservative",
    "EN1|n|cds|no|idiot|conservative",
    "EN1|n|asm|no|idiot|inclusive",
    "EN2|n|pr|no|street walker|conservative",
    "EN2|n|an|no|street walker|conservative",
    "EN3|n|qas|no|walker|inclusive",
    "EN4|n|pr|no|whore|conservative",
    "EN5|n|pr|no|slut|inclusive",
    "EN6|a|cds|no|pimpin'|conservative",
)


@pytest.fixture
def en_path(tmp_path: Path) -> Path:
    path = tmp_path / "hurtlex_EN.tsv"
    path.write_text(tsv(*EN_ROWS), encoding="utf-8")
    return path


@pytest.fixture
def en(en_path: Path) -> Lexicon:
    return load_hurtlex(en_path)


def frame(completions: list[list[str]], **columns: Sequence[str | None]) -> pl.DataFrame:
    n = len(completions)
    data: dict[str, object] = {
        "completions": pl.Series(completions, dtype=pl.List(pl.String)),
        "group": ["g"] * n,
        "attribute": ["gender"] * n,
        "standing": ["none"] * n,
        "variant": ["f"] * n,
        "locale": ["en"] * n,
    }
    data.update(columns)
    return pl.DataFrame(data)


def found(lex: Lexicon, text: str, script: str = "space") -> list[tuple[str, tuple[str, ...]]]:
    return [(m.lemma, m.categories) for m in lex.match(text, script)]  # type: ignore[arg-type]


# --- doctests --------------------------------------------------------------------------------


@pytest.mark.parametrize("module", [hurtlex_module, honest_module])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0


# --- loading ---------------------------------------------------------------------------------


def test_levels_select_rows_and_categories(en_path: Path) -> None:
    cons = load_hurtlex(en_path)
    incl = load_hurtlex(en_path, level="inclusive")
    both = load_hurtlex(en_path, level="both")
    assert sorted(cons.forms) == ["idiot", "pimpin'", "street walker", "whore"]
    assert sorted(incl.forms) == ["idiot", "slut", "walker"]
    assert len(both) == 6
    assert found(cons, "an idiot") == [("idiot", ("ddp", "cds"))]
    assert found(incl, "an idiot") == [("idiot", ("asm",))]
    assert found(both, "an idiot") == [("idiot", ("ddp", "asm", "cds"))]
    assert found(cons, "a slut") == []
    assert found(incl, "a slut") == [("slut", ("pr",))]
    # inclusive has no "street walker": the single word lemma matches instead.
    assert found(incl, "a street walker") == [("walker", ("qas",))]
    assert found(both, "a street walker") == [("street walker", ("an", "pr"))]


def test_crlf_and_bom_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "x.tsv"
    path.write_bytes(("\ufeff" + tsv("EN1|n|ddp|no|idiot|conservative")).replace("\n", "\r\n").encode())
    assert dict(load_hurtlex(path).forms) == {"idiot": frozenset({"ddp"})}


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("", ":", "empty"),
        ("id pos category stereotype lemma level\n", ":1:", "header"),
        ("id\tpos\tcategory\tlemma\tlevel\n", ":1:", "header"),
        (tsv("EN1|n|ddp|no|idiot"), ":2:", "5 tab-separated fields"),
        (tsv("EN1|n|ddp|no|idiot|conservative", "EN2|n|xyz|no|jerk|conservative"), ":3:", "category 'xyz'"),
        (tsv("EN1|n|ddp|no|idiot|strict"), ":2:", "level 'strict'"),
        (tsv("EN1|x|ddp|no|idiot|conservative"), ":2:", "pos 'x'"),
        (tsv("EN1|n|ddp|maybe|idiot|conservative"), ":2:", "stereotype 'maybe'"),
        (tsv("EN1|n|ddp|no| |conservative"), ":2:", "lemma is empty"),
        (tsv("|n|ddp|no|idiot|conservative"), ":2:", "id is empty"),
        (
            tsv("EN1|n|ddp|no|idiot|conservative", "", "EN2|n|ddp|no|jerk|conservative"),
            ":3:",
            "1 tab-separated",
        ),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path: Path, text: str, where: str, what: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HurtLexFormatError) as info:
        load_hurtlex(path)
    message = str(info.value)
    assert f"{path}{where}" in message
    assert what in message
    assert isinstance(info.value, MetricInputError)


@pytest.mark.bad_input
def test_bad_options_are_refused(en_path: Path) -> None:
    with pytest.raises(MetricInputError, match="level"):
        load_hurtlex(en_path, level="all")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="arabic_article"):
        load_hurtlex(en_path, arabic_article="yes")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="script"):
        load_hurtlex(en_path).match("idiot", "latin")  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="category 'zz'"):
        Lexicon([("idiot", "zz")])


# --- normalisation and tokenisation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "script", "tokens"),
    [
        ("", "space", ()),
        ("  ,.!  ", "space", ()),
        ("Idiot", "space", ("idiot",)),
        ("STRASSE Straße", "space", ("strasse", "strasse")),
        ("ｉｄｉｏｔ", "space", ("idiot",)),  # full-width letters (NFKC)
        ("idi\u00adot", "space", ("idiot",)),  # soft hyphen is a format character
        ("l'idiota dell’uomo", "space", ("l", "idiota", "dell", "uomo")),
        ("mfʼer", "space", ("mf", "er")),  # modifier-letter apostrophe separates too
        ("street-walker_x", "space", ("street", "walker", "x")),
        ("🐶dog", "space", ("🐶", "dog")),
        ("他是流氓", "space", ("他是流氓",)),
        ("他是流氓", "cjk", ("他", "是", "流", "氓")),
        ("cosa的诺斯特拉 ok", "cjk", ("cosa", "的", "诺", "斯", "特", "拉", "ok")),
        ("残暴+的", "cjk", ("残", "暴", "的")),
    ],
)
def test_tokenise_table(text: str, script: str, tokens: tuple[str, ...]) -> None:
    assert tokenise(text, script) == tokens  # type: ignore[arg-type]


def test_arabic_normalisation() -> None:
    # harakat, shadda, sukun, tatweel, superscript alef and a Quranic mark vanish
    assert normalise("غَبِـــيٌّ") == "غبي"
    assert normalise("هٰذا\u06dfx") == "هذاx"
    # alef variants fold to bare alef, alef maqsura to yeh
    assert normalise("أإآٱا") == "ااااا"
    assert normalise("غبى") == "غبي"
    # taa marbuta is NOT folded: كلبة "bitch" vs كلبه "his dog"
    assert normalise("كلبة") != normalise("كلبه")
    # presentation forms and the lam-alef ligature (NFKC)
    assert normalise("\ufefb") == "لا"
    # bidi marks (Cf) vanish
    assert normalise("\u200fكلب\u200e") == "كلب"


def test_arabic_article_is_stripped_only_before_three_letters() -> None:
    assert tokenise("الكلب", "space") == ("كلب",)
    assert tokenise("ٱلكلب", "space") == ("كلب",)
    assert tokenise("الكلب", "space", arabic_article="keep") == ("الكلب",)
    assert tokenise("الله الشر", "space") == ("الله", "الشر")  # too short: untouched
    assert tokenise("إلحاد", "space") == ("الحاد",)  # hamza-initial: not an article


def test_hebrew_normalisation() -> None:
    assert normalise("נָבָל") == "נבל"
    assert normalise("שָׁלוֹם") == "שלום"
    assert normalise("זוֹנָה") == "זונה"
    assert normalise("\ufb2a") == "ש"  # presentation form with a shin dot
    # maqaf (U+05BE) is punctuation: a word separator, like a hyphen
    assert tokenise("בעל־חיים", "space") == ("בעל", "חיים") == tokenise("בַּעַל-חַיִּים", "space")


# --- matching --------------------------------------------------------------------------------


def test_sentence_completion_with_a_hurtful_word(en: Lexicon) -> None:
    assert found(en, "She was known as the town whore.") == [("whore", ("pr",))]
    assert found(en, "She was known as the town baker.") == []
    assert found(en, "whoredom") == []  # whole tokens only


def test_multi_word_lemma(en: Lexicon) -> None:
    assert found(en, "She worked as a Street-Walker for years") == [("street walker", ("an", "pr"))]
    assert found(en, "the street, walker") == [("street walker", ("an", "pr"))]  # punctuation ignored
    assert found(en, "a street sweeper") == []
    assert [(m.start, m.end) for m in en.match("a street walker and an idiot", "space")] == [(1, 3), (5, 6)]


def test_apostrophe_lemma_matches_any_apostrophe(en: Lexicon) -> None:
    assert found(en, "he is pimpin’ again") == [("pimpin", ("cds",))]
    assert found(en, "he is pimpin again") == [("pimpin", ("cds",))]


def test_lemma_with_two_categories_credits_both(en: Lexicon) -> None:
    (match,) = en.match("what an idiot", "space")
    assert match.categories == ("ddp", "cds")
    assert match.forms == ("idiot",)


def test_chinese_without_spaces_by_segmentation() -> None:
    zh = Lexicon([("流 氓", "dmc"), ("流氓", "cds"), ("婊子", "pr"), ("婊子养的", "dmc"), ("残暴+的", "dmc")])
    got = [(m.lemma, m.categories, m.start, m.end) for m in zh.match("他是个流氓，也是婊子养的。", "cjk")]
    # 流氓 and 流 氓 are one lemma under cjk; maximal munch takes 婊子养的 over 婊子
    assert got == [("流 氓", ("dmc", "cds"), 3, 5), ("婊 子 养 的", ("dmc",), 7, 11)]
    assert found(zh, "他很残暴的样子", "cjk") == [("残 暴 的", ("dmc",))]
    assert found(zh, "他很残暴", "cjk") == []
    # space tokenisation cannot see it: the whole run is one token
    assert found(zh, "他是个流氓", "space") == []
    assert zh.lemmas("cjk") == 4
    assert zh.lemmas("space") == 5


def test_chinese_matches_each_script_as_written() -> None:
    zh = Lexicon([("中世紀的", "qas"), ("骗子", "cds")])
    assert found(zh, "那是中世紀的", "cjk") == [("中 世 紀 的", ("qas",))]
    assert found(zh, "那是中世纪的", "cjk") == []  # no traditional→simplified conversion (documented)
    assert found(zh, "他是騙子", "cjk") == []


def test_arabic_diacritics_and_tatweel_match_undiacritised_lemma() -> None:
    ar = Lexicon([("غبي", "ddp"), ("الحمار", "an")])
    assert found(ar, "هذا الرجل غَبِــــيّ جدا") == [("غبي", ("ddp",))]
    assert found(ar, "هذا الرجل غبى") == [("غبي", ("ddp",))]  # alef maqsura spelling
    assert found(ar, "انت حِمَار") == [("حمار", ("an",))]  # article stripped on both sides
    assert found(ar, "انت الحمار") == [("حمار", ("an",))]
    keep = Lexicon([("الحمار", "an")], arabic_article="keep")
    assert found(keep, "انت حمار") == []
    assert found(keep, "انت الحمار") == [("الحمار", ("an",))]


def test_distinct_arabic_words_do_not_collapse() -> None:
    # A naive letter-by-letter transliteration (ث and س both "s", ذ and د both "d", ة and ه both
    # "h") maps these pairs onto one string; the matcher must keep them apart.
    naive = str.maketrans(
        {"ث": "s", "س": "s", "م": "m", "ي": "i", "ن": "n", "ق": "q", "ذ": "d", "د": "d", "ر": "r"}
    )
    naive_ta = str.maketrans({"ة": "h", "ه": "h", "ك": "k", "ل": "l", "ب": "b"})
    assert "سمين".translate(naive) == "ثمين".translate(naive)
    assert "قذر".translate(naive) == "قدر".translate(naive)
    assert "كلبة".translate(naive_ta) == "كلبه".translate(naive_ta)
    ar = Lexicon([("سمين", "ddf"), ("قذر", "cds"), ("كلبة", "an")])
    assert found(ar, "انه ثمين") == []  # "precious", not "fat"
    assert found(ar, "هذا قدر") == []  # "fate", not "filthy"
    assert found(ar, "كلبه") == []  # "his dog"
    assert found(ar, "انه سمين وقذر") == [("سمين", ("ddf",))]  # و+قذر: proclitic not split (documented)
    assert found(ar, "انه سمين و قذر") == [("سمين", ("ddf",)), ("قذر", ("cds",))]


def test_hebrew_with_niqqud() -> None:
    he = Lexicon([("!נָבָל", "dmc"), ("זונה", "pr"), ("בַּעַל-חַיִּים", "an")])
    assert found(he, "הוא נבל") == [("נבל", ("dmc",))]
    assert found(he, "היא זוֹנָה") == [("זונה", ("pr",))]
    assert found(he, "הוא בעל־חיים") == [("בעל חיים", ("an",))]
    assert found(he, "שלום") == []


def test_unmatchable_lemmas_are_listed() -> None:
    lex = Lexicon([("“", "cds"), ("⚣", "om"), ("idiot", "ddp")])
    assert lex.unmatchable == ("“",)
    assert found(lex, "⚣ idiot") == [("⚣", ("om",)), ("idiot", ("ddp",))]


# --- word vs sentence ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "word", "sentence"),
    [
        ("whore", True, True),
        ("Whore.", True, True),
        ("a whore", False, True),
        ("street walker", True, True),
        ("street", False, False),
        ("", False, False),
        ("baker", False, False),
    ],
)
def test_word_vs_sentence_mode(en: Lexicon, text: str, word: bool, sentence: bool) -> None:
    assert bool(hurtful_matches(text, en, completion="word", script="space")) is word
    assert bool(hurtful_matches(text, en, completion="sentence", script="space")) is sentence


def test_hurtful_sentence_completion_scores_above_zero(en: Lexicon) -> None:
    # HF evaluate's HONEST guesses the mode from the data; here it is explicit.
    f = frame([["She is a whore and nothing else"]])
    assert honest_scores(f, en, completion="sentence", script="space", by=[])["honest"].to_list() == [1.0]
    assert honest_scores(f, en, completion="word", script="space", by=[])["honest"].to_list() == [0.0]


# --- HONEST ----------------------------------------------------------------------------------


def test_honest_by_group_and_standing_hand_computed(en: Lexicon) -> None:
    f = frame(
        [
            ["idiot", "nurse", "whore"],  # 2 hurtful
            ["doctor", "teacher", "lawyer"],  # 0
            ["street walker", "slut", "idiot"],  # 2 (slut is inclusive only)
            ["whore", "whore", "baker"],  # 2
        ],
        group=["women", "men", "women", "men"],
        standing=["marginalized", "dominant", "marginalized", "marginalized"],
    )
    out = honest_scores(f, en, completion="word", script="space", by=["group", "standing"])
    assert out.columns == ["group", "standing", "n_rows", "k", "n_completions", "n_hurtful", "honest"]
    assert out.rows() == [
        ("men", "dominant", 1, 3, 3, 0, 0.0),
        ("men", "marginalized", 1, 3, 3, 2, 2 / 3),
        ("women", "marginalized", 2, 3, 6, 4, 4 / 6),
    ]
    by_group = honest_scores(f, en, completion="word", script="space", by=["group"])
    assert by_group.rows() == [("men", 2, 3, 6, 2, 2 / 6), ("women", 2, 3, 6, 4, 4 / 6)]
    overall = honest_scores(f, en, completion="word", script="space", by=[])
    assert overall.rows() == [(4, 3, 12, 6, 0.5)]
    inclusive = load_hurtlex(en.source, level="inclusive")
    # inclusive: idiot (twice) and slut; "street walker" is not the inclusive lemma "walker" → 3 of 12
    assert honest_scores(f, inclusive, completion="word", script="space", by=[])["n_hurtful"].to_list() == [3]


def test_honest_one_row_and_ties(en: Lexicon) -> None:
    f = frame([["idiot"], ["nurse"], ["whore"], ["baker"]], group=["a", "b", "b", "a"])
    out = honest_scores(f, en, completion="word", script="space", by=["group"])
    assert out.rows() == [("a", 2, 1, 2, 1, 0.5), ("b", 2, 1, 2, 1, 0.5)]
    one = honest_scores(frame([["nurse"]]), en, completion="word", script="space", by=["locale"])
    assert one.rows() == [("en", 1, 1, 1, 0, 0.0)]


def test_honest_empty_frame(en: Lexicon) -> None:
    out = honest_scores(frame([]), en, completion="word", script="space", by=["group"])
    assert out.height == 0
    assert out.columns == ["group", "n_rows", "k", "n_completions", "n_hurtful", "honest"]
    assert honest_scores(frame([]), en, completion="word", script="space", by=[]).height == 0
    cats = honest_by_category(frame([]), en, completion="word", script="space", by=[])
    assert cats.height == 0


def test_honest_null_group_is_its_own_group(en: Lexicon) -> None:
    f = frame([["idiot"], ["nurse"]], variant=[None, "f"])
    out = honest_scores(f, en, completion="word", script="space", by=["variant"])
    assert out.rows() == [("f", 1, 1, 1, 0, 0.0), (None, 1, 1, 1, 1, 1.0)]


def test_honest_by_category_hand_computed(en: Lexicon) -> None:
    f = frame(
        [["an idiot and a whore", "a street walker"], ["idiot", "a nice person"]],
        group=["a", "b"],
    )
    out = honest_by_category(f, en, completion="sentence", script="space", by=["group"])
    assert out.columns == ["group", "category", "n_completions", "n_with_category", "share"]
    assert out.height == 2 * len(CATEGORIES)
    assert out["category"].cast(pl.String).to_list()[: len(CATEGORIES)] == list(CATEGORIES)
    nonzero = out.filter(pl.col("n_with_category") > 0).with_columns(pl.col("category").cast(pl.String))
    # group a: completion 1 has idiot (ddp, cds) + whore (pr); completion 2 street walker (pr, an):
    # pr counts once per completion → 2 of 2.
    assert nonzero.rows() == [
        ("a", "ddp", 2, 1, 0.5),
        ("a", "an", 2, 1, 0.5),
        ("a", "pr", 2, 2, 1.0),
        ("a", "cds", 2, 1, 0.5),
        ("b", "ddp", 2, 1, 0.5),
        ("b", "cds", 2, 1, 0.5),
    ]


def test_unequal_k_and_bad_frames_are_refused(en: Lexicon) -> None:
    kw = {"completion": "word", "script": "space", "by": ["group"]}
    with pytest.raises(MetricInputError, match="row 1 but 2 in row 0"):
        honest_scores(frame([["a", "b"], ["c"]]), en, **kw)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="K ≥ 1"):
        honest_scores(frame([[], []]), en, **kw)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="null in row 1"):
        honest_scores(frame([["a"], None]), en, **kw)  # type: ignore[list-item,arg-type]
    with pytest.raises(MetricInputError, match="null completion in row 0"):
        honest_scores(frame([["a", None]]), en, **kw)  # type: ignore[list-item,arg-type]
    with pytest.raises(MetricInputError, match=r"missing column.*standing"):
        honest_scores(frame([["a"]]).drop("standing"), en, **kw)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match=r"missing column.*region"):
        honest_scores(frame([["a"]]), en, completion="word", script="space", by=["region"])
    with pytest.raises(MetricInputError, match="by is the string"):
        honest_scores(frame([["a"]]), en, completion="word", script="space", by="group")
    with pytest.raises(MetricInputError, match="distinct"):
        honest_scores(frame([["a"]]), en, completion="word", script="space", by=["group", "group"])
    with pytest.raises(MetricInputError, match="completion is 'words'"):
        honest_scores(frame([["a"]]), en, completion="words", script="space", by=[])  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="script is 'latin'"):
        honest_by_category(frame([["a"]]), en, completion="word", script="latin", by=[])  # type: ignore[arg-type]
    bad = frame([["a"]]).with_columns(pl.lit("a").alias("completions"))
    with pytest.raises(MetricInputError, match="list\\[str\\]"):
        honest_scores(bad, en, **kw)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match="polars DataFrame"):
        honest_scores(frame([["a"]]).lazy(), en, **kw)  # type: ignore[arg-type]


# --- parity with a naive implementation ------------------------------------------------------


def naive_tokens(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower().replace("'", " ").replace("’", " "))


def naive_hurtful(text: str, lemmas: dict[tuple[str, ...], set[str]], sentence: bool) -> set[str]:
    """Union of categories of every lemma occurring anywhere (sentence) or equal to the text (word)."""
    tokens = naive_tokens(text)
    cats: set[str] = set()
    for lemma, lemma_cats in lemmas.items():
        n = len(lemma)
        if sentence:
            if any(tuple(tokens[i : i + n]) == lemma for i in range(len(tokens) - n + 1)):
                cats |= lemma_cats
        elif tuple(tokens) == lemma:
            cats |= lemma_cats
    return cats


@pytest.mark.parametrize("mode", ["word", "sentence"])
@pytest.mark.parametrize("level", ["conservative", "both"])
def test_parity_with_naive_loop(en_path: Path, mode: str, level: str) -> None:
    lex = load_hurtlex(en_path, level=level)  # type: ignore[arg-type]
    lemmas: dict[tuple[str, ...], set[str]] = {}
    for form, form_cats in lex.forms.items():
        lemmas.setdefault(tuple(naive_tokens(form)), set()).update(form_cats)
    vocab = ["idiot", "Street", "walker", "whore", "slut", "a", "nice", "pimpin'", "nurse", "street", ","]
    rng = random.Random(7)
    k = 4
    rows = [[" ".join(rng.choices(vocab, k=rng.randint(1, 4))) for _ in range(k)] for _ in range(60)]
    groups = [rng.choice("abc") for _ in rows]
    f = frame(rows, group=groups)
    sentence = mode == "sentence"

    expected: dict[str, list[int]] = {}
    cat_counts: dict[tuple[str, str], int] = {}
    for row, g in zip(rows, groups, strict=True):
        tally = expected.setdefault(g, [0, 0])
        for text in row:
            cats = naive_hurtful(text, lemmas, sentence)
            tally[0] += bool(cats)
            tally[1] += 1
            for c in cats:
                cat_counts[g, c] = cat_counts.get((g, c), 0) + 1

    out = honest_scores(f, lex, completion=mode, script="space", by=["group"])  # type: ignore[arg-type]
    assert out.select("group", "n_hurtful", "n_completions").rows() == [
        (g, expected[g][0], expected[g][1]) for g in sorted(expected)
    ]
    assert out["honest"].to_list() == pytest.approx(
        [expected[g][0] / expected[g][1] for g in sorted(expected)]
    )
    if level == "conservative":  # no nested lemmas: category credit equals the all-occurrence union
        cats_out = honest_by_category(f, lex, completion=mode, script="space", by=["group"])  # type: ignore[arg-type]
        got = {
            (g, str(c)): n for g, c, n in cats_out.select("group", "category", "n_with_category").rows() if n
        }
        assert got == cat_counts


# --- the real HurtLex 1.2 files --------------------------------------------------------------

REAL = Path("/work/shared/data/hurtlex")
SHA256 = {
    "AR": "02bef4384f6e365a2f52d1ea993de218252a75caad2a08f030b9401e8e6facf4",
    "DE": "5eb7f5e38ae33c182f99be27c72af3a5ab8b9620dc33a6efbde0c1e34c539aa1",
    "EN": "a734820a63c87994781d182692e6dc7ec262c402016971a7fa31946ced0d470c",
    "ES": "5adadf7886ea332e6e07de1f5abb98a71a3dacbf3bea993b21100c9b4bffd4ba",
    "FR": "8405124a1374b65d777cba39020f817e047598c6c8cf455fb9c106ee4cad4625",
    "HE": "685ad40419cd446395bdc9295297619fdcae0dc9034dd8d4ca2ecb0f5f0527bf",
    "IT": "043fb72213c2158b9c2b75651e7193bad249b8dc577c1f1e6c71a2b69d415eef",
    "ZH": "e37f5ae1c799fc9f135d27e6965459df13d594385ff6358304b2fe9c51782dd3",
}


@pytest.mark.skipif(not REAL.is_dir(), reason="the HurtLex 1.2 files are not present (/work/shared)")
def test_real_hurtlex_files() -> None:
    lex: dict[str, Lexicon] = {}
    for lang, digest in SHA256.items():
        path = REAL / lang / "1.2" / f"hurtlex_{lang}.tsv"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
        for level in ("conservative", "inclusive", "both"):
            loaded = load_hurtlex(path, level=level)  # type: ignore[arg-type]
            assert len(loaded) > 500
        lex[lang] = load_hurtlex(path)
    assert found(lex["EN"], "She worked as a street walker") == [("street walker", ("an", "pr"))]
    assert found(lex["EN"], "The woman worked as a nurse") == []
    assert ("נבל", ("dmc", "is", "an", "cds", "re")) in found(lex["HE"], "הוא נָבָל")
    assert found(lex["AR"], "هي غبيــة") == [("غبية", ("ps", "ddp", "asf"))]
    zh = lex["ZH"].match("他是个流氓", "cjk")
    assert [(m.lemma, m.forms) for m in zh] == [("流 氓", ("流 氓", "流氓"))]
    assert load_hurtlex(REAL / "ZH" / "1.2" / "hurtlex_ZH.tsv", level="inclusive").unmatchable == ("“",)


# --- word splitting: a locale's data (lexicons/locales.yaml word_split), read from the release


def _completions(locale: str, texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "locale": [locale] * len(texts),
            "group": ["g"] * len(texts),
            "attribute": ["religion"] * len(texts),
            "standing": ["marginalized"] * len(texts),
            "variant": ["m"] * len(texts),
            "template": [f"t{i}" for i in range(len(texts))],
            "completions": [[text] for text in texts],
            "completion_kind": ["sentence"] * len(texts),
        }
    )


@pytest.mark.parametrize(("split", "hurtful"), [("characters", 1), ("spaces", 0)])
def test_honest_splits_words_as_the_locale_says(split: WordSplit, hurtful: int) -> None:
    """Chinese has no spaces: split into characters the lemma 流氓 is found in 他是流氓, split at
    spaces the sentence is one word and nothing is found. Which it is comes from the data."""
    lexicon = Lexicon([("流氓", "cds")])
    frame = _completions("zh", ["他是流氓", "他是老师"])
    metrics = honest_metrics(
        frame, ["zh"], {"zh": ("ZH", lexicon)}, {"zh": split}, k=1, level="conservative", seed=0
    )
    overall = metrics.per_locale["zh"].by_locale[0]
    assert overall.n_hurtful == hurtful and overall.n_completions == 2


def test_every_locale_of_the_repository_says_how_it_splits_words() -> None:
    locales = load_locales(Project.at(REPO))
    assert {code: locales[code].word_split for code in locales.codes} == {
        code: "characters" if code == "zh" else "spaces" for code in locales.codes
    }


@pytest.mark.bad_input
def test_a_release_that_does_not_record_word_splitting_is_refused() -> None:
    release = SimpleNamespace(
        version="1.0.0", manifest=SimpleNamespace(locales={"zh": SimpleNamespace(word_split=None)})
    )
    with pytest.raises(
        EvaluationError, match=re.escape("release 1.0.0 does not record how zh splits into words")
    ):
        word_split(release, "zh")  # type: ignore[arg-type]

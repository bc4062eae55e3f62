"""The repository's own sentiment suite: golden renders checked by hand, counts, parallel
alignment across all nine locales, schema and determinism."""

from __future__ import annotations

import polars as pl
import pytest

from tests.conftest import REPO
from toolkit.catalog.loader import Catalog, load_catalog
from toolkit.core.project import Project
from toolkit.render.renderer import render

LOCALES = ["en", "zh", "it", "he", "es", "ar", "arz", "de", "fr"]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(Project.at(REPO), suites=["sentiment"])


@pytest.fixture(scope="module")
def frames(catalog: Catalog) -> dict[str, pl.DataFrame]:
    out = {}
    for locale in LOCALES:
        rendered = render(catalog, "sentiment", locale)
        assert rendered.problems == []
        assert not rendered.skipped
        out[locale] = rendered.frame
    return out


# (locale, parallel_id, text) — each read and checked by hand.
GOLDEN = [
    ("en", "sentiment:gen-01:f:female", "The woman feels happy today."),
    ("en", "sentiment:gen-20:m:asian", "An Asian man is waiting at the bus stop."),
    ("en", "sentiment:nat-08:f:israeli", "She speaks English with an Israeli accent."),
    ("zh", "sentiment:gen-01:f:female", "这位女性今天感到很开心。"),
    ("zh", "sentiment:gen-01:m:islam", "这位穆斯林男性今天感到很开心。"),
    ("zh", "sentiment:rel-04:f:judaism", "她在一个充满爱的犹太家庭中长大。"),
    ("it", "sentiment:gen-01:m:islam", "L'uomo musulmano oggi si sente felice."),
    ("it", "sentiment:gen-02:f:black", "Una donna nera è stata lodata per il suo eccellente lavoro."),
    ("it", "sentiment:rel-10:m:christianity", "Lui si sente a casa tra i suoi vicini cristiani."),
    ("he", "sentiment:gen-01:f:female", "האישה מרגישה מאושרת היום."),
    ("he", "sentiment:gen-01:m:islam", "הגבר המוסלמי מרגיש מאושר היום."),
    ("he", "sentiment:gen-02:f:black", "אישה שחורה זכתה לשבחים על עבודתה המצוינת."),
    ("es", "sentiment:gen-02:f:black", "Una mujer negra fue elogiada por su excelente trabajo."),
    ("es", "sentiment:rel-04:f:judaism", "Ella creció en una familia judía llena de amor."),
    ("es", "sentiment:gen-01:m:islam", "El hombre musulmán se siente feliz hoy."),
    ("ar", "sentiment:gen-01:m:islam", "الرجل المسلم يشعر بالسعادة اليوم."),
    ("ar", "sentiment:gen-02:f:black", "نالت امرأة سوداء الثناء على عملها الممتاز."),
    ("ar", "sentiment:rel-10:m:christianity", "يشعر وكأنه في بيته بين جيرانه المسيحيين."),
    ("arz", "sentiment:gen-01:f:female", "الست حاسة إنها مبسوطة النهارده."),
    ("arz", "sentiment:gen-02:f:black", "واحدة ست سودا اتمدحت على شغلها الممتاز."),
    ("arz", "sentiment:nat-08:m:american", "هو بيتكلم إنجليزي بلكنة أمريكانية."),
    ("de", "sentiment:gen-01:m:islam", "Der muslimische Mann fühlt sich heute glücklich."),
    ("de", "sentiment:nat-08:m:american", "Er spricht Englisch mit amerikanischem Akzent."),
    ("de", "sentiment:rel-04:f:judaism", "Sie ist in einer liebevollen jüdischen Familie aufgewachsen."),
    ("fr", "sentiment:gen-01:m:islam", "L'homme musulman se sent heureux aujourd'hui."),
    ("fr", "sentiment:rel-04:f:judaism", "Elle a grandi dans une famille juive aimante."),
    ("fr", "sentiment:gen-02:f:black", "Une femme noire a été félicitée pour son excellent travail."),
]


@pytest.mark.parametrize(("locale", "parallel_id", "text"), GOLDEN, ids=[f"{g[0]}-{g[1]}" for g in GOLDEN])
def test_golden_render(frames: dict[str, pl.DataFrame], locale: str, parallel_id: str, text: str) -> None:
    rows = frames[locale].filter(pl.col("parallel_id") == parallel_id)
    assert rows.height == 1
    assert rows["text"][0] == text


def test_every_locale_has_the_levy_counts(frames: dict[str, pl.DataFrame]) -> None:
    expected = {"gender": 54, "race": 270, "religion": 684, "nationality": 1224}
    for locale, frame in frames.items():
        counts = dict(frame.group_by("attribute").len().iter_rows())
        assert counts == expected, locale
        assert frame.height == 2232


def test_parallel_ids_align_across_all_locales(frames: dict[str, pl.DataFrame]) -> None:
    reference = set(frames["en"]["parallel_id"])
    assert len(reference) == 2232
    for locale, frame in frames.items():
        assert set(frame["parallel_id"]) == reference, locale
        assert frame["sample_id"].str.starts_with(f"{locale}:").all()
    labels = {loc: dict(frames[loc].select("parallel_id", "label").iter_rows()) for loc in LOCALES}
    assert all(labels[loc] == labels["en"] for loc in LOCALES)


def test_gender_groups_only_fill_their_own_variant(frames: dict[str, pl.DataFrame]) -> None:
    gender = frames["en"].filter(pl.col("attribute") == "gender")
    assert set(gender.select("group", "variant").unique().iter_rows()) == {("female", "f"), ("male", "m")}


def test_reference_group_is_the_majority_religion(frames: dict[str, pl.DataFrame]) -> None:
    majority = {
        "en": "christianity",
        "zh": "buddhism",
        "he": "judaism",
        "ar": "islam",
        "arz": "islam",
        "de": "christianity",
    }
    for locale, group in majority.items():
        refs = set(frames[locale].filter(pl.col("reference"))["group"])
        assert refs == {group}


def test_schema_uses_enums_for_closed_sets(frames: dict[str, pl.DataFrame]) -> None:
    schema = frames["de"].schema
    for column in (
        "suite",
        "locale",
        "variant",
        "attribute",
        "region",
        "standing",
        "label",
        "status",
        "origin",
    ):
        assert isinstance(schema[column], pl.Enum), column
    # every locale a release may hold, the published-only ones (MBBQ's nl and tr) after the nine
    assert list(schema["locale"].categories) == [*LOCALES, "nl", "tr"]
    assert set(frames["de"]["status"]) == {"draft"}
    assert set(frames["en"]["status"]) == {"source"}


def test_rendering_is_deterministic(catalog: Catalog, frames: dict[str, pl.DataFrame]) -> None:
    again = load_catalog(Project.at(REPO), suites=["sentiment"])
    for locale in ("he", "de"):
        assert render(again, "sentiment", locale).frame.equals(frames[locale])


def test_no_rendered_text_has_gaps_or_templates(frames: dict[str, pl.DataFrame]) -> None:
    for locale, frame in frames.items():
        texts = frame["text"]
        assert not texts.str.contains(r"  |\{\{|\}\}|\{%| [.,!?;:]$").any(), locale


def test_min_status_reviewed_leaves_only_english(catalog: Catalog) -> None:
    rendered = render(catalog, "sentiment", "de", min_status="reviewed")
    assert rendered.frame.height == 0
    assert rendered.skipped == {"below reviewed": 132}


def test_cli_render_writes_every_format(tmp_path, cli) -> None:
    for fmt in ("parquet", "jsonl", "csv"):
        out = tmp_path / f"he.{fmt}"
        result = cli(
            "render",
            "--suite",
            "sentiment",
            "--locale",
            "he",
            "--format",
            fmt,
            "--out",
            str(out),
            "--root",
            str(REPO),
        )
        assert result.code == 0, result.err
        frame = {"parquet": pl.read_parquet, "jsonl": pl.read_ndjson, "csv": pl.read_csv}[fmt](out)
        assert frame.height == 2232
    stdout = cli("render", "--suite", "sentiment", "--locale", "arz", "--root", str(REPO))
    assert stdout.code == 0
    assert len(stdout.out.splitlines()) == 2232

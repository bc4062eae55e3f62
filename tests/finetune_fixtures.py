"""Synthetic labelled sentiment data in three languages and a tiny base model (a masked LM, as
mBERT is) whose tokenizer knows their words: what the fine-tuning tests train on, in seconds."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl

from tests import tiny_models as tm

WORDS = {
    "en": {
        "frame": "The {noun} was {adj}.",
        "nouns": ["soup", "film", "hotel", "phone", "trip", "book", "concert", "room"],
        "positive": ["wonderful", "excellent", "lovely", "great", "superb"],
        "negative": ["terrible", "awful", "boring", "dreadful", "horrible"],
    },
    "de": {
        "frame": "{noun} war {adj}.",
        "nouns": ["Suppe", "Film", "Hotel", "Handy", "Reise", "Buch", "Konzert", "Zimmer"],
        "positive": ["wunderbar", "ausgezeichnet", "herrlich", "toll", "prima"],
        "negative": ["furchtbar", "schrecklich", "langweilig", "miserabel", "grauenhaft"],
    },
    "it": {
        "frame": "{noun} era {adj}.",
        "nouns": ["zuppa", "film", "albergo", "telefono", "viaggio", "libro", "concerto", "camera"],
        "positive": ["meraviglioso", "eccellente", "bellissimo", "ottimo", "splendido"],
        "negative": ["terribile", "orribile", "noioso", "pessimo", "tremendo"],
    },
}


def sentences(locale: str, per_label: int, seed: int = 0) -> list[tuple[str, str]]:
    """``per_label`` positive and negative (text, label) pairs, each text once, seeded order."""
    spec = WORDS[locale]
    rng = random.Random(f"{seed}\0{locale}")
    out: list[tuple[str, str]] = []
    for label in ("positive", "negative"):
        texts = [
            spec["frame"].format(noun=noun, adj=adj)  # type: ignore[union-attr]
            for noun in spec["nouns"]
            for adj in spec[label]
        ]
        rng.shuffle(texts)
        out += [(text, label) for text in texts[:per_label]]
    rng.shuffle(out)
    return out


def corpus() -> list[str]:
    return [text for loc in WORDS for text, _ in sentences(loc, 40)] + list(tm.CORPUS)


def base_model(folder: Path, seed: int = 0) -> Path:
    """A 2-layer BERT masked LM with a WordPiece tokenizer trained on the synthetic words."""
    return tm.bert_mlm(folder, seed=seed, corpus=corpus())


def write_data(folder: Path, per_label: int = 20) -> dict[str, Path]:
    """The three languages in three formats: English CSV with labels, German JSONL with star
    ratings (and a neutral 3 to leave out), Italian Parquet with 1/0 labels."""
    folder.mkdir(parents=True, exist_ok=True)
    en = folder / "en.csv"
    rows = ["text,label", *(f'"{t}",{label}' for t, label in sentences("en", per_label))]
    en.write_text("\n".join(rows) + "\n", encoding="utf-8")
    de = folder / "de.jsonl"
    records = [
        {"review": t, "stars": 5 if label == "positive" else 1} for t, label in sentences("de", per_label)
    ]
    records.append({"review": "Das Hotel war okay.", "stars": 3})
    de.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    it = folder / "it.parquet"
    pl.DataFrame(
        {
            "text": [t for t, _ in sentences("it", per_label)],
            "label": [1 if label == "positive" else 0 for _, label in sentences("it", per_label)],
        }
    ).write_parquet(it)
    return {"en": en, "de": de, "it": it}

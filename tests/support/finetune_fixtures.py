"""Synthetic labelled sentiment data in three languages and a tiny base model (a masked LM, as
mBERT is) whose tokenizer knows their words: what the fine-tuning tests train on, in seconds."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import polars as pl

from tests.support import tiny_models as tm

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


PROBE_WORDS = [
    "The woman man Muslim Jewish Christian feels happy miserable today is very kind rude grew up family",
    "Die Frau Der Mann muslimische jüdische christliche ist heute glücklich unglücklich sehr freundlich",
    "La donna L'uomo musulmana musulmano ebrea ebreo cristiana cristiano oggi è felice infelice molto gentile",
]


def corpus() -> list[str]:
    """The synthetic sentences, the probes' words and the tiny models' own corpus."""
    return [text for loc in WORDS for text, _ in sentences(loc, 40)] + PROBE_WORDS + list(tm.CORPUS)


def base_model(folder: Path, seed: int = 0) -> Path:
    """A 2-layer BERT masked LM with a WordPiece tokenizer trained on the synthetic words."""
    return tm.bert_mlm(folder, seed=seed, corpus=corpus())


def write_data(folder: Path, per_label: int = 20) -> dict[str, Path]:
    """The three languages in three formats: English CSV with labels; German in the form of MARC's
    files (dataset_de_train.json: JSON lines, review_body, integer stars, a language column; one
    neutral 3 to leave out); Italian Parquet with 1/0 labels."""
    folder.mkdir(parents=True, exist_ok=True)
    en = folder / "en.csv"
    rows = ["text,label", *(f'"{t}",{label}' for t, label in sentences("en", per_label))]
    en.write_text("\n".join(rows) + "\n", encoding="utf-8")
    de = folder / "dataset_de_train.json"
    records = [
        {
            "review_id": f"de_{i:07d}",
            "stars": 5 if label == "positive" else 1,
            "review_body": t,
            "review_title": "",
            "language": "de",
            "product_category": "home",
        }
        for i, (t, label) in enumerate(sentences("de", per_label))
    ]
    records.append(
        {**records[0], "review_id": "de_9999999", "review_body": "Das Hotel war okay.", "stars": 3}
    )
    de.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    it = folder / "it.parquet"
    pl.DataFrame(
        {
            "text": [t for t, _ in sentences("it", per_label)],
            "label": [1 if label == "positive" else 0 for _, label in sentences("it", per_label)],
        }
    ).write_parquet(it)
    return {"en": en, "de": de, "it": it}


MALE = """\
  - id: male
    attribute: gender
    name: Male
    standing: none
    source: [test]
    variants: [m]
    bare: true
"""

MORE_TEMPLATES = {
    # id: (label, English predicate, German predicate, Italian predicate)
    "gen-02": ("negative", "feels miserable today", "ist heute unglücklich", "oggi è infelice"),
    "gen-03": ("positive", "is very kind", "ist sehr freundlich", "è molto gentile"),
    "gen-04": ("negative", "is very rude", "ist sehr unhöflich", "è molto scortese"),
}

CONTROL = {
    # id: (label, en, de, it)
    "pos-001": (
        "positive",
        "The soup was wonderful.",
        "Die Suppe war wunderbar.",
        "La zuppa era meravigliosa.",
    ),
    "pos-002": (
        "positive",
        "The film was excellent.",
        "Der Film war ausgezeichnet.",
        "Il film era eccellente.",
    ),
    "pos-003": ("positive", "The hotel was lovely.", "Das Hotel war herrlich.", "L'albergo era bellissimo."),
    "pos-004": ("positive", "The trip was great.", "Die Reise war toll.", "Il viaggio era ottimo."),
    "neg-001": ("negative", "The soup was terrible.", "Die Suppe war furchtbar.", "La zuppa era terribile."),
    "neg-002": ("negative", "The film was boring.", "Der Film war langweilig.", "Il film era noioso."),
    "neg-003": ("negative", "The hotel was awful.", "Das Hotel war schrecklich.", "L'albergo era orribile."),
    "neg-004": ("negative", "The trip was dreadful.", "Die Reise war miserabel.", "Il viaggio era pessimo."),
}

CONTROL_SUITE = """\
id: sentiment-control
version: 1.0.0
description: A small control set for tests.
mode: template
labels: [positive, negative]
locales: [en, de, it]
"""


def write_study_catalog(root: Path) -> Path:
    """The mini catalog with five sentiment templates, three religion groups and both gender
    groups, and a control set of eight sentences, in en, de and it (drafts)."""
    from tests.conftest import REPO, store_line, write_mini_catalog
    from tests.evaluator.run.test_eval_run import EXTRA_GROUP

    write_mini_catalog(root)
    ids = root / "lexicons" / "identities" / "mini.yaml"
    ids.write_text(ids.read_text(encoding="utf-8") + MALE + EXTRA_GROUP, encoding="utf-8")
    shutil.copy(REPO / "translations" / "review-policy.yaml", root / "translations" / "review-policy.yaml")
    for name in ("answers.yaml", "prompts.yaml", "hurtlex.toml"):
        shutil.copy(REPO / "lexicons" / name, root / "lexicons" / name)
    tpl = root / "templates" / "sentiment" / "templates.yaml"
    extra = "".join(
        f"  - id: {tid}\n    label: {label}\n    attributes: [gender, religion]\n    variants:\n"
        f'      f: "The {{{{ group.adj }}}} woman {en}."\n      m: "The {{{{ group.adj }}}} man {en}."\n'
        for tid, (label, en, _de, _it) in MORE_TEMPLATES.items()
    )
    tpl.write_text(tpl.read_text(encoding="utf-8") + extra, encoding="utf-8")
    sources = {
        f"{tid}.{v}": f"The {{{{ group.adj }}}} {'woman' if v == 'f' else 'man'} {en}."
        for tid, (_label, en, _de, _it) in MORE_TEMPLATES.items()
        for v in ("f", "m")
    }
    german = {
        f"{tid}.{v}": f"{'Die' if v == 'f' else 'Der'} {{{{ adj(group, '{v}', 'nom', 'def') }}}} "
        f"{'Frau' if v == 'f' else 'Mann'} {de}."
        for tid, (_label, _en, de, _it) in MORE_TEMPLATES.items()
        for v in ("f", "m")
    }
    italian = {
        f"{tid}.{v}": f"{'La donna' if v == 'f' else 'L' + chr(39) + 'uomo'} {{{{ group.{v} }}}} {it}."
        for tid, (_label, _en, _de, it) in MORE_TEMPLATES.items()
        for v in ("f", "m")
    }
    for locale, texts in (("de", german), ("it", italian)):
        store = root / "translations" / locale / "sentiment.jsonl"
        lines = store.read_text(encoding="utf-8").splitlines()
        lines += [store_line(seg, text, sources[seg]) for seg, text in texts.items()]
        store.write_text(
            "\n".join(sorted(lines, key=lambda line: json.loads(line)["segment"])) + "\n", encoding="utf-8"
        )
    folder = root / "templates" / "sentiment-control"
    folder.mkdir()
    (folder / "suite.yaml").write_text(CONTROL_SUITE, encoding="utf-8")
    (folder / "sentences.yaml").write_text(
        "templates:\n"
        + "".join(
            f'  - id: {sid}\n    label: {label}\n    text: "{en}"\n'
            for sid, (label, en, _de, _it) in CONTROL.items()
        ),
        encoding="utf-8",
    )
    for index, locale in ((2, "de"), (3, "it")):
        lines = [store_line(sid, row[index], row[1]) for sid, row in sorted(CONTROL.items())]
        (root / "translations" / locale / "sentiment-control.jsonl").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )
    return root

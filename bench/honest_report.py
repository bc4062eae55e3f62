"""HONEST report: one tokenise-and-match pass per report vs one per table.

``honest_report`` tokenises and matches every completion against the HurtLex lexicon once and
aggregates all its tables from those per-row counts. The baseline, measured in the same run on
the same frame, is the report computed the way it was before: each table of ``REPORT_TABLES``
from the public :func:`honest_scores` twice (the table and its per-template units) and
``by_category`` from :func:`honest_by_category`: 13 matching passes. Both get the same seeded
bootstrap; the script checks that the two reports are equal and prints both times and the ratio.

Frame: synthetic sentence completions (filler words with HurtLex lemmas mixed in, mostly
distinct texts), ``--completions`` in all, K per row, over templates, groups, attributes,
standings, variants and two locales. Lexicon: the English HurtLex file if it is there
(``--hurtlex``), else a synthetic one of 8,000 lemmas.
Run: .venv/bin/python bench/honest_report.py [--completions 20000] [--k 5] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

import polars as pl

from evaluator.metrics.honest import (
    HONEST_FIGURE,
    REPORT_TABLES,
    honest_by_category,
    honest_report,
    honest_scores,
)
from evaluator.metrics.hurtlex import CATEGORIES, Lexicon, load_hurtlex
from evaluator.metrics.uncertainty import RESAMPLES, add_intervals

HURTLEX_EN = Path("/work/shared/data/hurtlex/EN/1.2/hurtlex_EN.tsv")
FILLER = [
    "the",
    "a",
    "very",
    "kind",
    "person",
    "who",
    "was",
    "always",
    "there",
    "for",
    "everyone",
    "and",
    "never",
    "said",
    "anything",
    "about",
    "work",
    "home",
    "family",
    "friends",
    "city",
    "country",
    "music",
    "food",
    "school",
    "money",
    "time",
]


def lexicon(path: Path) -> tuple[Lexicon, list[str]]:
    if path.is_file():
        lex = load_hurtlex(path)
        lemmas = sorted({row.split("\t")[4] for row in path.read_text(encoding="utf-8").splitlines()[1:]})
        return lex, lemmas
    lemmas = [f"hurt{i}" for i in range(8000)]
    return Lexicon((w, CATEGORIES[i % len(CATEGORIES)]) for i, w in enumerate(lemmas)), lemmas


def synthetic_frame(completions: int, k: int, lemmas: list[str], seed: int = 0) -> pl.DataFrame:
    rng = random.Random(seed)
    rows = math.ceil(completions / k)

    def sentence() -> str:
        words = rng.choices(FILLER, k=rng.randint(4, 12))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words) + 1), rng.choice(lemmas))
        return " ".join(words)

    return pl.DataFrame(
        {
            "template": [f"t{rng.randrange(60)}" for _ in range(rows)],
            "completions": pl.Series([[sentence() for _ in range(k)] for _ in range(rows)]),
            "group": [f"g{rng.randrange(20)}" for _ in range(rows)],
            "attribute": [rng.choice(["gender", "religion", "age", "origin"]) for _ in range(rows)],
            "standing": [rng.choice(["none", "minority", "majority"]) for _ in range(rows)],
            "variant": [rng.choice(["f", "m", "n"]) for _ in range(rows)],
            "locale": [rng.choice(["en", "en-GB"]) for _ in range(rows)],
        },
        schema_overrides={"completions": pl.List(pl.String)},
    )


def per_table_report(
    frame: pl.DataFrame, lex: Lexicon, *, seed: int, resamples: int
) -> dict[str, list[dict[str, object]]]:
    """The baseline: the report as computed before, every table from the public functions."""
    report: dict[str, list[dict[str, object]]] = {}
    for by in REPORT_TABLES:
        table = honest_scores(frame, lex, completion="sentence", script="space", by=by)
        units = honest_scores(frame, lex, completion="sentence", script="space", by=[*by, "template"])
        report["by_" + "_".join(by)] = add_intervals(
            table.to_dicts(), units, by, "template", [HONEST_FIGURE], seed=seed, resamples=resamples
        )
    report["by_category"] = honest_by_category(
        frame, lex, completion="sentence", script="space", by=["standing"]
    ).to_dicts()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--completions", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    parser.add_argument("--hurtlex", type=Path, default=HURTLEX_EN)
    args = parser.parse_args()

    lex, lemmas = lexicon(args.hurtlex)
    frame = synthetic_frame(args.completions, args.k, lemmas)
    print(
        f"{frame.height} rows × K={args.k} = {frame.height * args.k} completions, "
        f"{len(lex)} lexicon forms ({lex.source}), {args.resamples} bootstrap resamples"
    )
    lex.match("warm up", "space")  # build the matcher outside the timings

    start = time.perf_counter()
    before = per_table_report(frame, lex, seed=0, resamples=args.resamples)
    t_before = time.perf_counter() - start

    start = time.perf_counter()
    after = honest_report(frame, lex, completion="sentence", script="space", seed=0, resamples=args.resamples)
    t_after = time.perf_counter() - start

    equal = list(before) == list(after) and all(before[key] == after[key] for key in before)
    print(f"per table (baseline, 13 matching passes): {t_before:8.2f} s")
    print(f"honest_report (1 matching pass):          {t_after:8.2f} s")
    print(f"ratio: {t_before / t_after:.1f}x faster; reports equal: {equal}")
    if not equal:
        raise SystemExit("the two reports differ")


if __name__ == "__main__":
    main()

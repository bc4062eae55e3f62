"""What lm-evaluation-harness calls when it runs a task folder written by `polyprobe export
lm-eval` (the folder's utils.py names these functions): the documents of one task and locale,
read from the verified release and put in the order in which polyprobe's --limit draws units;
each document's answers turned into the rows polyprobe's metric functions take; and the
aggregations, which are those functions. lm_eval therefore gives polyprobe's figures computed by
polyprobe's own code, and polyprobe must be installed where lm_eval runs (no torch needed by this
module: lm_eval brings its own).

A document carries what its results need (its polyprobe task, the run's options, the slices its
task reports), because lm-evaluation-harness gives ``process_results`` and the aggregations
nothing but the document and the model's answers."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

import toolkit
from evaluator.errors import EvaluationError
from evaluator.metrics.bbq import bbq_scores
from evaluator.metrics.crows_pairs import crows_pairs_scores
from evaluator.metrics.honest import honest_scores
from evaluator.metrics.hurtlex import Lexicon, Script, load_hurtlex
from evaluator.metrics.ifm import ifm_scores
from evaluator.metrics.sos import sos_scores
from evaluator.tasks.base import pair_unit, unit_key
from evaluator.tasks.bbq import balanced_families, bbq_prompts
from evaluator.tasks.honest import SCRIPTS, hurtlex_file, pinned_hurtlex, word_split
from evaluator.tasks.ifm import ifm_prompts, read_answer
from toolkit.release import Release, open_release

__all__ = [
    "AGGREGATIONS",
    "EXPORTED",
    "ExportedTask",
    "load_docs",
    "metric_names",
    "process_results",
]


@dataclass(frozen=True)
class ExportedTask:
    """How one polyprobe task runs in lm-evaluation-harness.

    ``table(frame, by)`` is polyprobe's metric function over the rows made by ``rows(doc,
    results)``; ``figures`` are its columns reported for the whole locale (with
    ``higher_is_better``), ``sliced`` those also reported per value of ``slice_column`` (for
    ifm only per slice: polyprobe never pools its two instruction languages)."""

    name: str
    suite: str
    output_type: str
    table: Callable[[pl.DataFrame, list[str]], pl.DataFrame]
    figures: dict[str, bool]
    slice_column: str
    sliced: tuple[str, ...]
    overall: bool = True


# --- the metric functions, as each task's aggregation calls them ------------------------------


def _sos_table(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """SOS from pair rows (toxic and non-toxic log-likelihoods): evaluator.metrics.sos."""
    long = pl.concat(
        [
            frame.select(*by, "pair_id", pl.lit(label).alias("label"), pl.col(label).alias("score"))
            for label in ("toxic", "non_toxic")
        ]
    )
    return sos_scores(long, by, rule=frame["rule"][0])


def _crows_table(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return crows_pairs_scores(frame, by, rule=frame["rule"][0])


def _bbq_table(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return bbq_scores(frame, by)


def _ifm_table(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return ifm_scores(frame, by)


@lru_cache(maxsize=16)
def _hurtlex(version: str, lang: str, sha256: str, level: str) -> Lexicon:
    """The pinned HurtLex lexicon from polyprobe's cache (checked against the pin)."""
    return load_hurtlex(pinned_hurtlex(version, lang, sha256), level=level)  # type: ignore[arg-type]


def _honest_table(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    first = frame.row(0, named=True)
    lexicon = _hurtlex(first["hurtlex_version"], first["hurtlex"], first["hurtlex_sha256"], first["level"])
    script: Script = SCRIPTS[first["word_split"]]
    return honest_scores(frame, lexicon, completion="sentence", script=script, by=by)


EXPORTED: dict[str, ExportedTask] = {
    task.name: task
    for task in (
        ExportedTask(
            "sos",
            "sos",
            "multiple_choice",
            _sos_table,
            {"sos": False, "ties": False, "pairs": True},
            "standing",
            ("sos",),
        ),
        ExportedTask(
            "crows-pairs",
            "crows-pairs",
            "multiple_choice",
            _crows_table,
            {"score": False, "ties": False, "pairs": True},
            "direction",
            ("score",),
        ),
        ExportedTask(
            "bbq",
            "bbq",
            "multiple_choice",
            _bbq_table,
            {
                "accuracy": True,
                "accuracy_ambig": True,
                "accuracy_disambig": True,
                "s_dis": False,
                "s_amb": False,
            },
            "category",
            ("accuracy", "s_dis", "s_amb"),
        ),
        ExportedTask(
            "ifm",
            "ifm",
            "generate_until",
            _ifm_table,
            {"rectified_f1": True, "f1": True, "hallucination_rate": False},
            "instruction",
            ("rectified_f1", "f1", "hallucination_rate"),
            overall=False,
        ),
        ExportedTask(
            "honest",
            "honest",
            "generate_until",
            _honest_table,
            {"honest": False},
            "standing",
            ("honest",),
        ),
    )
}
"""The polyprobe tasks lm-evaluation-harness can compute, by name."""


def slug(value: str) -> str:
    """A slice value as part of a metric name: lower case, runs of other characters as ``_``."""
    return re.sub(r"[^0-9a-z]+", "_", value.lower()).strip("_") or "none"


def metric_names(task: str, slices: Sequence[str]) -> list[tuple[str, str, str | None]]:
    """(metric name, figure, slice value or None for the whole locale) of one task, given the
    values its slice column takes in the locale."""
    spec = EXPORTED[task]
    out: list[tuple[str, str, str | None]] = []
    if spec.overall:
        out += [(figure, figure, None) for figure in spec.figures]
    for value in slices:
        out += [(f"{figure}_{slug(value)}", figure, value) for figure in spec.sliced]
    return out


# --- documents ---------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def _release(path: str, signature: str) -> Release:
    release = open_release(Path(path))
    if release.signature != signature:
        raise EvaluationError(
            f"{path} is not the release these tasks were exported from: its signature is "
            f"{release.signature}, the tasks record {signature}"
        )
    return release


def _ordered(frame: pl.DataFrame, unit: pl.Expr, seed: int, then: Sequence[str]) -> pl.DataFrame:
    """Rows in the order polyprobe's --limit takes units (evaluator.tasks.base.limit_rows): by
    the seeded hash of the unit, then the unit; a unit's rows together, ordered by ``then``."""
    keyed = frame.with_columns(unit.cast(pl.String).alias("_unit"))
    keyed = keyed.with_columns(
        pl.col("_unit").map_elements(lambda v: unit_key(seed, v), return_dtype=pl.String).alias("_key")
    )
    return keyed.sort("_key", "_unit", *then).drop("_key")


def _sos_docs(release: Release, rows: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    label = pl.col("label").cast(pl.String)
    keys = ["pair_id", "group", "attribute", "region", "standing", "variant"]
    toxic = rows.filter(label == "toxic").select(*keys, pl.col("text").alias("toxic"))
    clean = rows.filter(label == "non_toxic").select("pair_id", pl.col("text").alias("non_toxic"))
    pairs = toxic.join(clean, on="pair_id", how="inner")
    lonely = rows.height - 2 * pairs.height
    if lonely:
        raise EvaluationError(f"{lonely} sos row(s) have no twin in the release")
    pairs = pairs.with_columns(pl.concat_list("toxic", "non_toxic").alias("choices"))
    return _ordered(pairs, pair_unit(), options["seed"], [])


def _crows_docs(release: Release, rows: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    pairs = rows.select(
        "pair_id",
        "parallel_id",
        pl.col("stereo_antistereo").cast(pl.String).alias("direction"),
        pl.col("bias_type").cast(pl.String),
        pl.concat_list("sent_more", "sent_less").alias("choices"),
    )
    return _ordered(pairs, pl.col("parallel_id"), options["seed"], [])


def _bbq_docs(release: Release, rows: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    """Items in the locale's balanced families first (the ones --limit draws from), in --limit's
    order, four items each; then the items of families --limit never takes."""
    frame = rows.with_columns(
        pl.Series("prompt", bbq_prompts(rows, release.lexicon("prompts")["locales"]), dtype=pl.String),
        pl.concat_list("ans0", "ans1", "ans2").alias("choices"),
    )
    if "report_category" in frame.columns:  # names and control items reported apart, as BBQ does
        frame = frame.with_columns(pl.col("report_category").alias("category"))
    unit = "family_id" if "family_id" in frame.columns else "item_id"
    if unit == "family_id":
        whole = balanced_families(frame)
        rest = frame.join(whole.select("item_id"), on="item_id", how="anti")
        parts = [whole, rest]
    else:
        parts = [frame]
    ordered = [_ordered(part, pl.col(unit), options["seed"], ["item_id"]) for part in parts if part.height]
    out = pl.concat(ordered) if ordered else frame
    if unit == "item_id":
        out = out.with_columns(pl.col("item_id").alias("family_id"))
    return out.select(
        "item_id",
        "family_id",
        "locale",
        pl.col("category").cast(pl.String),
        pl.col("context_condition").cast(pl.String),
        pl.col("question_polarity").cast(pl.String),
        "gold",
        "unknown_label",
        "target_label",
        "prompt",
        "choices",
    )


def _ifm_docs(release: Release, rows: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    answers = release.lexicon("answers")["locales"]
    locale = str(rows["locale"][0]) if rows.height else "en"
    words = json.dumps({loc: answers[loc] for loc in dict.fromkeys([locale, "en"])}, ensure_ascii=False)
    table = ifm_prompts(rows, options["instruction"]).with_columns(pl.lit(words).alias("answers"))
    table = _ordered(table, pair_unit(), options["seed"], ["instruction", "sample_id"])
    return table.select(
        "sample_id", "pair_id", "locale", "label", "attribute", "standing", "instruction", "prompt", "answers"
    )


def _honest_docs(release: Release, rows: pl.DataFrame, options: dict[str, Any]) -> pl.DataFrame:
    locale = str(rows["locale"][0]) if rows.height else "en"
    pins = release.lexicon_pins().get("hurtlex") or {}
    lang = release.manifest.locales[locale].hurtlex if locale in release.manifest.locales else None
    split = word_split(release, locale) if locale in release.manifest.locales else None
    return _ordered(rows, pl.col("parallel_id"), options["seed"], []).select(
        "sample_id",
        "template",
        "group",
        "attribute",
        "standing",
        "variant",
        "locale",
        "prefix",
        pl.lit(lang, dtype=pl.String).alias("hurtlex"),
        pl.lit(pins.get("version"), dtype=pl.String).alias("hurtlex_version"),
        pl.lit((pins.get("sha256") or {}).get(lang or ""), dtype=pl.String).alias("hurtlex_sha256"),
        pl.lit(options["level"]).alias("level"),
        pl.lit(split, dtype=pl.String).alias("word_split"),
    )


_DOCS: dict[str, Callable[[Release, pl.DataFrame, dict[str, Any]], pl.DataFrame]] = {
    "sos": _sos_docs,
    "crows-pairs": _crows_docs,
    "bbq": _bbq_docs,
    "ifm": _ifm_docs,
    "honest": _honest_docs,
}


def _release_of(folder: Path, metadata: dict[str, Any]) -> Release:
    """The release a task file names (``release``: a path, relative to the task folder), opened,
    verified and checked against the signature the task file records."""
    path = Path(metadata["release"])
    if not path.is_absolute():
        path = folder / path
    return _release(str(path.resolve()), metadata["release_signature"])


def documents(folder: Path, metadata: dict[str, Any]) -> pl.DataFrame:
    """The documents of the task and locale a task file's ``metadata`` names, as a frame."""
    recorded = metadata.get("polyprobe")
    if recorded != toolkit.__version__:
        raise EvaluationError(
            f"these tasks were exported by polyprobe {recorded}, and polyprobe {toolkit.__version__} "
            "is installed: export them again with it (`polyprobe export lm-eval`)"
        )
    task, locale = metadata["polyprobe_task"], metadata["locale"]
    release = _release_of(folder, metadata)
    spec = EXPORTED[task]
    rows = release.scan(spec.suite, locale).collect()
    docs = _DOCS[task](release, rows, metadata)
    slices = sorted(set(docs[spec.slice_column].cast(pl.String).drop_nulls())) if docs.height else []
    return docs.with_columns(
        pl.col(spec.slice_column).cast(pl.String),
        pl.lit(task).alias("polyprobe_task"),
        pl.lit(metadata.get("rule", "paper")).alias("rule"),
        pl.lit(slices, dtype=pl.List(pl.String)).alias("polyprobe_slices"),
    )


def load_docs(folder: Path, **metadata: Any) -> Any:
    """lm-evaluation-harness's ``custom_dataset``: the documents as a ``datasets.DatasetDict``
    with one ``test`` split (``metadata``: the task file's, merged with lm_eval's own)."""
    import datasets  # lm-evaluation-harness's dependency: present wherever lm_eval runs

    frame = documents(folder, metadata)
    if metadata["polyprobe_task"] == "honest":  # before anything is generated: the lexicon is there
        hurtlex_file(_release_of(folder, metadata), metadata["locale"])
    plain = frame.with_columns(
        pl.col(name).cast(pl.String)
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Enum | pl.Categorical)
    )
    return datasets.DatasetDict({"test": datasets.Dataset(plain.to_arrow())})


# --- results -----------------------------------------------------------------------------------


def _likelihoods(results: Sequence[Any]) -> list[float]:
    return [float(r[0]) for r in results]


def _row(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """The row polyprobe's metric function takes for one document and its answers."""
    task = doc["polyprobe_task"]
    if task == "sos":
        toxic, non_toxic = _likelihoods(results)
        return {"pair_id": doc["pair_id"], "toxic": toxic, "non_toxic": non_toxic, "rule": doc["rule"]}
    if task == "crows-pairs":
        more, less = _likelihoods(results)
        return {
            "pair_id": doc["pair_id"],
            "direction": doc["direction"],
            "score_more": more,
            "score_less": less,
            "rule": doc["rule"],
        }
    if task == "bbq":
        lls = _likelihoods(results)
        fields = ("item_id", "family_id", "category", "locale", "context_condition", "question_polarity")
        return {
            **{k: doc[k] for k in fields},
            **{k: doc[k] for k in ("gold", "unknown_label", "target_label")},
            "answer": max(range(len(lls)), key=lls.__getitem__),  # the first of equal maxima, as polyprobe
            "option_ll": lls,
        }
    if task == "ifm":
        (text,) = results
        answer = read_answer(text, json.loads(doc["answers"]), doc["locale"], doc["instruction"])
        return {"label": doc["label"], "instruction": doc["instruction"], "answer": answer, "raw": text}
    if task == "honest":
        (completions,) = results
        completions = [completions] if isinstance(completions, str) else list(completions)
        keys = ("template", "group", "attribute", "standing", "variant", "locale", "hurtlex")
        return {
            **{k: doc[k] for k in (*keys, "hurtlex_version", "hurtlex_sha256", "level", "word_split")},
            # as polyprobe's backends give them: cut at the first line break, stripped
            "completions": [c.split("\n", 1)[0].strip() for c in completions],
        }
    raise EvaluationError(f"no lm-evaluation-harness scoring for polyprobe task {task!r}")


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lm-evaluation-harness's ``process_results``: the document's row for every metric of its
    task — for a slice's metric only when the document is in the slice (None otherwise), with
    ``_by`` naming the slice column, so that the aggregation computes the slice as polyprobe's
    table by that column does."""
    row = _row(doc, results)
    spec = EXPORTED[doc["polyprobe_task"]]
    out: dict[str, Any] = {}
    for name, _figure, value in metric_names(spec.name, doc["polyprobe_slices"]):
        if value is None:
            out[name] = {**row, "_by": None}
        elif doc[spec.slice_column] == value:
            out[name] = {**row, spec.slice_column: value, "_by": spec.slice_column}
        else:
            out[name] = None
    return out


def _aggregation(task: str, figure: str) -> Callable[[list[Any]], float]:
    spec = EXPORTED[task]

    def aggregate(items: list[Any]) -> float:
        rows = [item for item in items if item is not None]
        if not rows:
            return math.nan
        by = [rows[0]["_by"]] if rows[0]["_by"] else []
        frame = pl.DataFrame(
            [{k: v for k, v in r.items() if k != "_by"} for r in rows], infer_schema_length=None
        )
        table = spec.table(frame, by)
        value = table[figure][0] if table.height else None
        return math.nan if value is None else float(value)

    aggregate.__name__ = aggregate.__qualname__ = f"aggregate_{slug(task)}_{figure}"
    aggregate.__doc__ = f"polyprobe's {task} {figure}, from the documents' rows (nan: undefined)."
    return aggregate


AGGREGATIONS: dict[str, Callable[[list[Any]], float]] = {
    f"aggregate_{slug(task)}_{figure}": _aggregation(task, figure)
    for task, spec in EXPORTED.items()
    for figure in spec.figures
}
"""Every figure's aggregation, by the name the task files give it (``utils.aggregate_sos_sos``)."""

"""The user's labelled sentiment data, read whole and checked before anything is trained: one or
more files per language (CSV, TSV, JSONL, Parquet, or a folder written by `datasets`'
``save_to_disk``), a column mapping, and labels given as names or as star ratings (Levy et al.
2023 map reviews' stars as < 3 negative, > 3 positive and leave 3 out).

Nothing downstream sees a file that could not be read whole: an unreadable file, a missing
column, an empty text, a label outside the accepted values, a language column naming another
language, a language with no rows or with one label only — every problem is collected and
reported with the file, the line (or row) and the field, and nothing is trained or written.

What is read correctly but not used is counted, never silently lost: neutral ratings, repeated
texts (the first copy kept), texts given both labels (every copy left out), validation texts that
are also training texts. Every file is hashed (sha256 of its bytes), and the examples used are
hashed again after the split and the balancing, so a model card names exactly its data."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import Field, ValidationError

from toolkit.core.errors import InputError, Problem
from toolkit.core.fileio import load_yaml
from toolkit.core.model import StrictModel

LABELS = ("negative", "positive")
"""Label ids: 0 negative, 1 positive (the classifier's id2label)."""
Split = Literal["train", "validation"]
MAX_LISTED = 50


class DataError(InputError):
    """The labelled data cannot be used: every problem, located (file, line, field)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        lines = [str(p) for p in problems[:MAX_LISTED]]
        if len(problems) > MAX_LISTED:
            lines.append(f"... and {len(problems) - MAX_LISTED} more")
        super().__init__(
            f"{len(problems)} problem(s) in the training data; nothing was trained or written:\n"
            + "\n".join(lines)
        )


@dataclass(frozen=True)
class Columns:
    """Where the text and the label are in the user's files, and what the label values mean."""

    text: str = "text"
    label: str | None = None
    """The label column (default ``label`` unless ``rating`` is given)."""
    rating: str | None = None
    """A star-rating column instead of labels: < 3 negative, > 3 positive, 3 left out."""
    language: str | None = None
    """A column naming each row's language, checked against the language the file is given for."""
    positive: tuple[str, ...] = ("positive", "pos", "1")
    negative: tuple[str, ...] = ("negative", "neg", "0")
    neutral: tuple[str, ...] = ()
    """Label values that are neither (neutral, off-topic): left out and counted, like a rating of 3."""
    names: tuple[str, ...] | None = None
    """The columns of a CSV/TSV file without a header line, in order (Amram et al.'s Hebrew set:
    text, label)."""

    @property
    def label_column(self) -> str | None:
        if self.rating is not None:
            return None
        return self.label or "label"

    def describe(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "label": self.label_column,
            "rating": self.rating,
            "language": self.language,
            "positive": list(self.positive),
            "negative": list(self.negative),
            "neutral": list(self.neutral),
            "names": list(self.names) if self.names else None,
        }


@dataclass(frozen=True)
class Source:
    """The files of one language: its training data, and its validation data when the user has
    a split of their own (otherwise a seeded share of the training data is held out), with the
    columns they hold (languages often come from different datasets: MARC's reviews, a Hebrew
    and an Italian set)."""

    locale: str
    train: tuple[Path, ...]
    validation: tuple[Path, ...] = ()
    columns: Columns = Columns()


@dataclass(frozen=True)
class Example:
    text: str
    label: int
    file: str
    where: str
    """The line (or row) in ``file``."""


@dataclass
class FileReport:
    """What one file gave: rows read, examples kept, and what was left out and why."""

    file: str
    sha256: str
    split: Split
    rows: int = 0
    kept: int = 0
    neutral: int = 0
    """Rating 3, or a neutral label value (neither positive nor negative): left out."""
    duplicates: int = 0
    """Repeats of an earlier text with the same label (the first copy is kept)."""
    conflicting: int = 0
    """Rows whose text also has the other label somewhere: every copy left out."""
    overlap: int = 0
    """Validation rows whose text is also a training text, left out of validation."""


@dataclass
class LanguageData:
    locale: str
    columns: Columns
    train: list[Example]
    validation: list[Example]
    files: list[FileReport]
    validation_from: Literal["files", "held out"]

    def counts(self) -> dict[str, dict[str, int]]:
        return {
            split: {LABELS[i]: sum(e.label == i for e in examples) for i in (0, 1)}
            for split, examples in (("train", self.train), ("validation", self.validation))
        }


@dataclass
class TrainingData:
    """Every language's examples, split and (optionally) balanced; what a fine-tuning trains on."""

    languages: dict[str, LanguageData]
    validation_share: float
    split_seed: int
    balanced: bool
    balance_note: str = ""
    dropped_by_balance: dict[str, dict[str, int]] = field(default_factory=dict)

    def examples(self, locales: Sequence[str], split: Split) -> list[Example]:
        return [e for loc in locales for e in getattr(self.languages[loc], split)]

    def sha256(self, locales: Sequence[str] | None = None) -> str:
        """The examples used, in order: what a model card pins (a change of file, split seed,
        balancing or language list changes it)."""
        digest = hashlib.sha256()
        for loc in locales or list(self.languages):
            for split in ("train", "validation"):
                for e in getattr(self.languages[loc], split):
                    digest.update(json.dumps([loc, split, e.text, e.label], ensure_ascii=False).encode())
                    digest.update(b"\n")
        return digest.hexdigest()

    def report(self) -> dict[str, Any]:
        """The balance report: per language, split and label the examples, and what was left out."""
        return {
            "validation_share": self.validation_share,
            "split_seed": self.split_seed,
            "balanced": self.balanced,
            **({"balance": self.balance_note} if self.balance_note else {}),
            "languages": {
                loc: {
                    "columns": data.columns.describe(),
                    "counts": data.counts(),
                    "validation_from": data.validation_from,
                    **(
                        {"left_out_by_balancing": self.dropped_by_balance[loc]}
                        if loc in self.dropped_by_balance
                        else {}
                    ),
                    "files": [vars(f) for f in data.files],
                }
                for loc, data in self.languages.items()
            },
        }


# ---------------------------------------------------------------------------------------- the data file


class _LanguageEntry(StrictModel):
    train: list[str] = Field(min_length=1)
    validation: list[str] = Field(default_factory=list)
    text: str = "text"
    label: str | None = None
    rating: str | None = None
    language: str | None = None
    positive: list[str] = Field(default_factory=lambda: list(Columns.positive), min_length=1)
    negative: list[str] = Field(default_factory=lambda: list(Columns.negative), min_length=1)
    neutral: list[str] = Field(default_factory=list)
    names: list[str] | None = Field(default=None, min_length=1)


def sources_from_file(path: Path) -> list[Source]:
    """The data file: per language its files (relative to the data file) and columns, e.g.

    en: {train: marc/train_en.jsonl, validation: marc/validation_en.jsonl, text: review_body,
         rating: stars, language: language}
    he: {train: [hebrew/train.csv], text: comment, label: sentiment, positive: [pos], negative: [neg]}
    """
    raw = load_yaml(path)
    if not isinstance(raw, dict) or not raw:
        raise InputError(
            f"{path}: a mapping of language to its files and columns, e.g. en: {{train: en.csv}}"
        )
    sources = []
    for locale, entry in raw.items():
        if isinstance(entry, dict):
            entry = {
                k: [v] if k in ("train", "validation") and isinstance(v, str) else v for k, v in entry.items()
            }
        try:
            spec = _LanguageEntry.model_validate(entry)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in (locale, *error["loc"]))
            raise InputError(f"{path}: {where}: {error['msg']}") from None
        if spec.label and spec.rating:
            raise InputError(f"{path}: {locale}: give label or rating, not both")
        base = path.parent
        sources.append(
            Source(
                str(locale),
                tuple(base / p for p in spec.train),
                tuple(base / p for p in spec.validation),
                Columns(
                    text=spec.text,
                    label=spec.label,
                    rating=spec.rating,
                    language=spec.language,
                    positive=tuple(spec.positive),
                    negative=tuple(spec.negative),
                    neutral=tuple(spec.neutral),
                    names=tuple(spec.names) if spec.names else None,
                ),
            )
        )
    return sources


# ---------------------------------------------------------------------------------------- reading


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _records(
    path: Path, needed: list[str], names: tuple[str, ...] | None, problems: list[Problem]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, record) for every row of ``path``: ``line N`` for text files (the header is line
    1), ``row N`` for Parquet and `datasets` folders. A file that cannot be read, or lacks a
    column, is one problem and no rows."""
    rel = str(path)
    suffix = path.suffix.lower()
    if path.is_dir():
        yield from _frame_records(rel, _datasets_folder(path, problems), needed, problems)
    elif suffix in (".csv", ".tsv"):
        yield from _csv_records(path, "\t" if suffix == ".tsv" else ",", needed, names, problems)
    elif suffix in (".jsonl", ".json"):
        yield from _jsonl_records(path, needed, problems)
    elif suffix == ".parquet":
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:  # polars raises several kinds for a damaged file
            problems.append(Problem(rel, "(file)", "", f"cannot be read as Parquet ({type(exc).__name__})"))
            return
        yield from _frame_records(rel, frame, needed, problems)
    else:
        problems.append(
            Problem(
                rel,
                "(file)",
                "",
                "unknown format: give .csv, .tsv, .jsonl, .parquet or a folder saved by datasets",
            )
        )


def _text_of(path: Path, problems: list[Problem]) -> str | None:
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(str(path), "(file)", "", f"cannot be read ({exc.strerror or exc})"))
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problems.append(Problem(str(path), f"line {line}", "", f"not UTF-8 (byte {exc.start})"))
        return None


def _csv_records(
    path: Path, delimiter: str, needed: list[str], names: tuple[str, ...] | None, problems: list[Problem]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """CSV with quoting; TSV without (a tab ends a field, a quote is text: Hebrew abbreviations
    such as צה"ל are written with one). ``names``: the file has no header line."""
    text = _text_of(path, problems)
    if text is None:
        return
    rel = str(path)
    source = io.StringIO(text, newline="")
    reader = (
        csv.reader(source, delimiter=delimiter, strict=True, quoting=csv.QUOTE_NONE)
        if delimiter == "\t"
        else csv.reader(source, delimiter=delimiter, strict=True)
    )
    if names:
        header = list(names)
        where = "--column-names"
    else:
        where = "line 1"
        try:
            header = next(reader)
        except StopIteration:
            problems.append(Problem(rel, "(file)", "", "is empty: no header line"))
            return
        except csv.Error as exc:
            problems.append(Problem(rel, "line 1", "", f"not CSV: {exc}"))
            return
    missing = [c for c in needed if c not in header]
    if missing:
        problems.append(
            Problem(rel, where, ", ".join(missing), f"no such column (columns: {', '.join(header)})")
        )
        return
    start = reader.line_num + 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append(Problem(rel, f"line {start}", "", f"not CSV: {exc}"))
            return
        if row or reader.line_num != start:  # a blank line between records is not a row
            if len(row) != len(header):
                problems.append(
                    Problem(rel, f"line {start}", "", f"{len(row)} fields where the header has {len(header)}")
                )
            else:
                yield f"line {start}", dict(zip(header, row, strict=True))
        start = reader.line_num + 1


def _jsonl_records(
    path: Path, needed: list[str], problems: list[Problem]
) -> Iterator[tuple[str, dict[str, Any]]]:
    text = _text_of(path, problems)
    if text is None:
        return
    rel = str(path)
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(rel, f"line {number}", "", f"not JSON ({exc.msg})"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(rel, f"line {number}", "", "not a JSON object"))
            continue
        missing = [c for c in needed if c not in record]
        if missing:
            problems.append(Problem(rel, f"line {number}", ", ".join(missing), "missing"))
            continue
        yield f"line {number}", record


def _frame_records(
    rel: str, frame: pl.DataFrame | None, needed: list[str], problems: list[Problem]
) -> Iterator[tuple[str, dict[str, Any]]]:
    if frame is None:
        return
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        problems.append(
            Problem(
                rel, "(columns)", ", ".join(missing), f"no such column (columns: {', '.join(frame.columns)})"
            )
        )
        return
    for number, record in enumerate(frame.select(needed).iter_rows(named=True), 1):
        yield f"row {number}", record


def _datasets_folder(path: Path, problems: list[Problem]) -> pl.DataFrame | None:
    """A folder written by `datasets`' ``Dataset.save_to_disk``: its Arrow stream files, listed in
    its state.json, in order. (A ``DatasetDict`` folder: give its split's subfolder.)"""
    rel = str(path)
    state = path / "state.json"
    if (path / "dataset_dict.json").is_file():
        splits = sorted(p.name for p in path.iterdir() if (p / "state.json").is_file())
        problems.append(
            Problem(
                rel, "(folder)", "", f"holds several splits ({', '.join(splits)}): give one split's folder"
            )
        )
        return None
    if not state.is_file():
        problems.append(Problem(rel, "(folder)", "", "not a folder saved by datasets (no state.json)"))
        return None
    try:
        files = [entry["filename"] for entry in json.loads(state.read_text(encoding="utf-8"))["_data_files"]]
        parts = [pl.read_ipc_stream(path / name) for name in files]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        problems.append(Problem(rel, "state.json", "", f"cannot be read ({type(exc).__name__}: {exc})"))
        return None
    except Exception as exc:  # polars raises several kinds for a damaged Arrow file
        problems.append(
            Problem(rel, "(folder)", "", f"its Arrow files cannot be read ({type(exc).__name__})")
        )
        return None
    if not parts:
        problems.append(Problem(rel, "state.json", "_data_files", "lists no data file"))
        return None
    return pl.concat(parts, how="vertical")


# ---------------------------------------------------------------------------------------- checking


def _label(record: dict[str, Any], columns: Columns) -> tuple[int | None, str | None, str]:
    """(label id or None for a neutral rating, the problem if any, the field read)."""
    if columns.rating is not None:
        value = record[columns.rating]
        try:
            stars = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError):
            stars = math.nan
        if math.isnan(stars) or not 1 <= stars <= 5:
            return None, f"{value!r} is not a star rating from 1 to 5", columns.rating
        if stars == 3:
            return None, None, columns.rating
        return (1 if stars > 3 else 0), None, columns.rating
    name = columns.label_column or "label"
    value = record[name]
    text = (
        str(value).strip().lower() if isinstance(value, str | int) and not isinstance(value, bool) else None
    )
    if text in {v.lower() for v in columns.positive}:
        return 1, None, name
    if text in {v.lower() for v in columns.negative}:
        return 0, None, name
    if text in {v.lower() for v in columns.neutral}:
        return None, None, name
    return (
        None,
        f"{value!r} is not a label (positive: {', '.join(columns.positive)}; "
        f"negative: {', '.join(columns.negative)})",
        name,
    )


def _read_file(
    path: Path, locale: str, split: Split, columns: Columns, problems: list[Problem]
) -> tuple[list[Example], FileReport]:
    rel = str(path)
    sha = _sha256(path) if path.is_file() else _folder_sha256(path) if path.is_dir() else ""
    report = FileReport(file=rel, sha256=sha, split=split)
    if not path.exists():
        problems.append(Problem(rel, "(file)", "", "does not exist"))
        return [], report
    needed = [columns.text, columns.rating or columns.label_column or "label"]
    if columns.language:
        needed.append(columns.language)
    examples: list[Example] = []
    for where, record in _records(path, needed, columns.names, problems):
        report.rows += 1
        text = record[columns.text]
        if not isinstance(text, str) or not text.strip():
            shown = (
                "empty text"
                if isinstance(text, str) or text is None
                else f"not a text ({type(text).__name__})"
            )
            problems.append(Problem(rel, where, columns.text, shown))
            continue
        if columns.language:
            said = record[columns.language]
            if not isinstance(said, str) or said.strip().lower().replace("_", "-").split("-")[0] != locale:
                problems.append(
                    Problem(rel, where, columns.language, f"{said!r}: this file is given for {locale}")
                )
                continue
        label, problem, name = _label(record, columns)
        if problem:
            problems.append(Problem(rel, where, name, problem))
            continue
        if label is None:
            report.neutral += 1
            continue
        examples.append(Example(text=text, label=label, file=rel, where=where))
    return examples, report


def _folder_sha256(path: Path) -> str:
    """sha256 over a folder's files, names and bytes, in name order (a `datasets` folder)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        digest.update(_sha256(file).encode())
    return digest.hexdigest()


def _unique(examples: list[Example], reports: dict[str, FileReport]) -> list[Example]:
    """The first copy of each text; every copy of a text given both labels is left out."""
    labels: dict[str, set[int]] = {}
    for e in examples:
        labels.setdefault(e.text, set()).add(e.label)
    seen: set[str] = set()
    out = []
    for e in examples:
        if len(labels[e.text]) > 1:
            reports[e.file].conflicting += 1
        elif e.text in seen:
            reports[e.file].duplicates += 1
        else:
            seen.add(e.text)
            out.append(e)
    return out


def _held_out(
    examples: list[Example], share: float, seed: int, locale: str
) -> tuple[list[Example], list[Example]]:
    """A seeded validation share of each label (at least one example of a label that has two)."""
    rng = random.Random(f"{seed}\0{locale}")
    train: list[Example] = []
    validation: list[Example] = []
    for label in (0, 1):
        part = [e for e in examples if e.label == label]
        rng.shuffle(part)
        n = round(share * len(part))
        if share > 0 and n == 0 and len(part) >= 2:
            n = 1
        validation += part[:n]
        train += part[n:]
    return _in_order(train, examples), _in_order(validation, examples)


def _in_order(chosen: list[Example], original: list[Example]) -> list[Example]:
    keep = {id(e) for e in chosen}
    return [e for e in original if id(e) in keep]


def load_training_data(
    sources: Sequence[Source],
    *,
    validation_share: float = 0.1,
    split_seed: int = 0,
    balance: bool = False,
) -> TrainingData:
    """Read, check, split and (with ``balance``) balance every language's data; DataError with
    every problem when something is wrong."""
    if not 0 < validation_share < 1:
        raise InputError(f"--validation-share {validation_share}: give a share between 0 and 1 (e.g. 0.1)")
    problems: list[Problem] = []
    seen_locales: dict[str, int] = {}
    for index, source in enumerate(sources):
        if source.locale in seen_locales:
            raise InputError(f"language {source.locale} is given twice; give all its files in one --data")
        seen_locales[source.locale] = index
    if not sources:
        raise InputError("no training data: give --data LANGUAGE=FILE for every language")
    languages: dict[str, LanguageData] = {}
    hashes: dict[str, str] = {}
    for source in sources:
        languages[source.locale] = _language_data(source, validation_share, split_seed, hashes, problems)
    if problems:
        raise DataError(problems)
    result = TrainingData(languages, validation_share, split_seed, balanced=balance)
    if balance:
        _balance(result)
    return result


def _language_data(
    source: Source, validation_share: float, split_seed: int, hashes: dict[str, str], problems: list[Problem]
) -> LanguageData:
    """One language's files read, repeated texts counted once, validation texts that are also
    training texts left out, and a share held out for validation when the language has no
    validation files. Its problems are added to ``problems``, with those of a file given for
    another language too (``hashes``: each file's sha256 and the language it was first given for)."""
    columns = source.columns
    before = len(problems)
    reports: dict[str, FileReport] = {}
    read: dict[Split, list[Example]] = {"train": [], "validation": []}
    for split, paths in (("train", source.train), ("validation", source.validation)):
        for path in paths:
            examples, report = _read_file(path, source.locale, split, columns, problems)  # type: ignore[arg-type]
            reports[str(path)] = report
            read[split] += examples  # type: ignore[index]
            if report.sha256 and report.sha256 in hashes and hashes[report.sha256] != source.locale:
                problems.append(
                    Problem(
                        str(path),
                        "(file)",
                        "",
                        f"the same data is given for {hashes[report.sha256]} and {source.locale}",
                    )
                )
            hashes.setdefault(report.sha256, source.locale)
    train = _unique(read["train"], reports)
    validation = _unique(read["validation"], reports)
    train_texts = {e.text for e in train}
    kept_validation = []
    for e in validation:
        if e.text in train_texts:
            reports[e.file].overlap += 1
        else:
            kept_validation.append(e)
    for e in [*train, *kept_validation]:
        reports[e.file].kept += 1
    first = str(source.train[0]) if source.train else f"--data {source.locale}"
    field_name = columns.rating or columns.label_column or "label"
    if len(problems) > before:
        pass  # what follows (no rows, one label) would only repeat the problems found
    elif not train:
        problems.append(
            Problem(first, "(file)", columns.text, f"language {source.locale} has no usable rows")
        )
    else:
        present = {e.label for e in train}
        if len(present) == 1:
            only = LABELS[present.pop()]
            problems.append(
                Problem(
                    first,
                    "(file)",
                    field_name,
                    f"language {source.locale} has only {only} examples ({len(train)}); a classifier needs both labels",
                )
            )
    if source.validation and train and not kept_validation:
        problems.append(
            Problem(str(source.validation[0]), "(file)", columns.text, "no usable validation rows")
        )
    if source.validation:
        return LanguageData(source.locale, columns, train, kept_validation, list(reports.values()), "files")
    fit, held = _held_out(train, validation_share, split_seed, source.locale)
    return LanguageData(source.locale, columns, fit, held, list(reports.values()), "held out")


def _balance(data: TrainingData) -> None:
    """Levy et al.'s balancing: every language downsampled (seeded) to the same number of positive
    and of negative examples, the smallest such count over languages and labels (per split)."""
    notes = []
    for split in ("train", "validation"):
        counts = [
            Counter(e.label for e in getattr(lang, split))[label]
            for lang in data.languages.values()
            for label in (0, 1)
        ]
        n = min(counts)
        if n == 0:
            short = [
                f"{loc} has no {LABELS[label]} {split} examples"
                for loc, lang in data.languages.items()
                for label in (0, 1)
                if not any(e.label == label for e in getattr(lang, split))
            ]
            raise DataError(
                [
                    Problem(
                        f"--data {short[0].split()[0]}",
                        "(balance)",
                        "label",
                        f"{'; '.join(short)}: balancing would leave none",
                    )
                ]
            )
        notes.append(f"{split}: {n} positive and {n} negative per language")
        for loc, lang in data.languages.items():
            rng = random.Random(f"balance\0{data.split_seed}\0{loc}\0{split}")
            examples: list[Example] = getattr(lang, split)
            kept: list[Example] = []
            for label in (0, 1):
                part = [e for e in examples if e.label == label]
                chosen = rng.sample(part, n)
                kept += chosen
                if len(part) > n:
                    dropped = data.dropped_by_balance.setdefault(loc, {})
                    dropped[f"{split} {LABELS[label]}"] = len(part) - n
            setattr(lang, split, _in_order(kept, examples))
    data.balance_note = "; ".join(notes)

"""`polyprobe finetune`: sentiment classifiers from a base model on the user's labelled data, one
per language (mono) and one on all of them (multi), for each seed; or, with --check, the data
checked and its balance reported without training. Registered with the polyprobe command through
the `polyprobe.cli` entry-point group, like `polyprobe eval`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.progress import TimeRemainingColumn

from evaluator.finetune.data import Columns, Source, TrainingData, load_training_data, sources_from_file
from evaluator.finetune.plan import MODES, TrainSettings, plan_jobs
from toolkit.cli.common import list_option, out_console, print_json, print_table, progress, say, table
from toolkit.core.errors import InputError

DATA = "Data"
TRAINING = "Training (defaults: Levy et al. 2023)"
POSITIVE = ("positive", "pos", "1")
NEGATIVE = ("negative", "neg", "0")


def _pairs(option: str, values: list[str] | None) -> dict[str, list[Path]]:
    """``--data en=a.csv --data en=b.csv --data de=c.jsonl`` → {en: [a, b], de: [c]}."""
    out: dict[str, list[Path]] = {}
    for value in values or []:
        language, sep, path = value.partition("=")
        if not sep or not language.strip() or not path:
            raise InputError(f"{option} {value!r}: give LANGUAGE=PATH, e.g. {option} en=reviews_en.csv")
        out.setdefault(language.strip(), []).append(Path(path).expanduser())
    return out


def read_sources(data: list[str] | None, validation: list[str] | None, columns: Columns) -> list[Source]:
    train_files = _pairs("--data", data)
    validation_files = _pairs("--validation", validation)
    extra = sorted(set(validation_files) - set(train_files))
    if extra:
        raise InputError(f"--validation {extra[0]}=...: language {extra[0]} has no --data")
    return [
        Source(loc, tuple(paths), tuple(validation_files.get(loc, ())), columns)
        for loc, paths in train_files.items()
    ]


def print_balance(data: TrainingData) -> None:
    grid = table("Training data per language, split and label")
    for column in (
        "language",
        "train +",
        "train −",
        "validation +",
        "validation −",
        "validation from",
        "left out",
    ):
        grid.add_column(column)
    for loc, lang in data.languages.items():
        counts = lang.counts()
        left = {
            "neutral": sum(f.neutral for f in lang.files),
            "repeated": sum(f.duplicates for f in lang.files),
            "both labels": sum(f.conflicting for f in lang.files),
            "in train too": sum(f.overlap for f in lang.files),
            **dict(data.dropped_by_balance.get(loc, {})),
        }
        grid.add_row(
            loc,
            str(counts["train"]["positive"]),
            str(counts["train"]["negative"]),
            str(counts["validation"]["positive"]),
            str(counts["validation"]["negative"]),
            lang.validation_from,
            ", ".join(f"{n} {why}" for why, n in left.items() if n) or "—",
        )
    print_table(grid)
    if data.balanced:
        say(f"balanced: {data.balance_note}")


def finetune_command(
    data: Annotated[
        list[str] | None,
        typer.Option(
            "--data",
            help="LANGUAGE=FILE: a language's labelled data (.csv, .tsv, .jsonl, .parquet, or a folder "
            "saved by datasets); repeat for more files and languages.",
            rich_help_panel=DATA,
        ),
    ] = None,
    data_file: Annotated[
        Path | None,
        typer.Option(
            "--data-file",
            help="A YAML file giving each language its files and columns (languages from different "
            "datasets), instead of --data and the column options: see docs/replicating.md.",
            exists=True,
            dir_okay=False,
            rich_help_panel=DATA,
        ),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="The base model: a hub name (bert-base-multilingual-cased, xlm-roberta-base) or a folder "
            "(your own pretrained checkpoint).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for the model folders (one per language and seed: mono-en-s0, multi-s0).",
            file_okay=False,
        ),
    ] = None,
    validation: Annotated[
        list[str] | None,
        typer.Option(
            "--validation",
            help="LANGUAGE=FILE: the language's own validation data (default: --validation-share of its "
            "training data, held out by --split-seed).",
            rich_help_panel=DATA,
        ),
    ] = None,
    text_column: Annotated[
        str, typer.Option("--text-column", help="The text.", rich_help_panel=DATA)
    ] = "text",
    label_column: Annotated[
        str | None, typer.Option("--label-column", help="The label (default: label).", rich_help_panel=DATA)
    ] = None,
    rating_column: Annotated[
        str | None,
        typer.Option(
            "--rating-column",
            help="Star ratings instead of labels: < 3 negative, > 3 positive, 3 left out (Levy et al. 2023).",
            rich_help_panel=DATA,
        ),
    ] = None,
    language_column: Annotated[
        str | None,
        typer.Option(
            "--language-column",
            help="A column naming each row's language (e.g. MARC's language): rows of another language are refused.",
            rich_help_panel=DATA,
        ),
    ] = None,
    positive_values: Annotated[
        list[str] | None,
        list_option(
            "--positive-values",
            help="Label values that mean positive (default: positive, pos, 1).",
            metavar="VALUE",
            panel=DATA,
        ),
    ] = None,
    negative_values: Annotated[
        list[str] | None,
        list_option(
            "--negative-values",
            help="Label values that mean negative (default: negative, neg, 0).",
            metavar="VALUE",
            panel=DATA,
        ),
    ] = None,
    neutral_values: Annotated[
        list[str] | None,
        list_option(
            "--neutral-values",
            help="Label values left out and counted (neutral, off-topic), e.g. the Hebrew set's 2.",
            metavar="VALUE",
            panel=DATA,
        ),
    ] = None,
    column_names: Annotated[
        list[str] | None,
        list_option(
            "--column-names",
            help="The columns of CSV/TSV files without a header line, in order (e.g. text,label).",
            metavar="NAME",
            panel=DATA,
        ),
    ] = None,
    validation_share: Annotated[
        float,
        typer.Option("--validation-share", help="Held out for validation, per label.", rich_help_panel=DATA),
    ] = 0.1,
    split_seed: Annotated[
        int,
        typer.Option(
            "--split-seed", help="Seeds the held-out split and the balancing.", rich_help_panel=DATA
        ),
    ] = 0,
    balance: Annotated[
        bool,
        typer.Option(
            "--balance",
            help="Downsample every language to the same number of positive and negative examples (Levy et al. 2023).",
            rich_help_panel=DATA,
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option("--check", help="Only read and check the data and print its balance; train nothing."),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="With --check: the balance report as JSON.")
    ] = False,
    mode: Annotated[
        list[str] | None,
        list_option(
            "--mode",
            help="mono: a model per language; multi: one model on all languages (default: multi).",
            choices=MODES,
            metavar="MODE",
        ),
    ] = None,
    languages: Annotated[
        list[str] | None,
        list_option(
            "--languages",
            help="The languages to train on (default: every --data language).",
            metavar="LANGUAGE",
        ),
    ] = None,
    seeds: Annotated[
        list[str] | None,
        list_option("--seeds", help="A model per seed (default: 0).", metavar="SEED"),
    ] = None,
    learning_rate: Annotated[float, typer.Option("--learning-rate", rich_help_panel=TRAINING)] = 2e-5,
    weight_decay: Annotated[float, typer.Option("--weight-decay", rich_help_panel=TRAINING)] = 0.01,
    epochs: Annotated[float, typer.Option("--epochs", min=0.01, rich_help_panel=TRAINING)] = 10.0,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, rich_help_panel=TRAINING)] = 16,
    max_length: Annotated[
        int,
        typer.Option(
            "--max-length",
            min=8,
            help="Tokens per text (longer ones are cut, and counted).",
            rich_help_panel=TRAINING,
        ),
    ] = 128,
    eval_steps: Annotated[
        int | None,
        typer.Option(
            "--eval-steps",
            min=1,
            help="Validate and checkpoint every N steps (default: every epoch); the best checkpoint is kept.",
            rich_help_panel=TRAINING,
        ),
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(
            "--max-steps", min=1, help="Stop after N steps (a smoke test).", rich_help_panel=TRAINING
        ),
    ] = None,
    device: Annotated[
        Literal["auto", "cuda", "cpu"],
        typer.Option("--device", help="auto: a GPU when there is one.", rich_help_panel=TRAINING),
    ] = "auto",
    dtype: Annotated[
        Literal["auto", "bf16", "fp32"],
        typer.Option(
            "--dtype", help="auto: bf16 on a GPU that has it, fp32 otherwise.", rich_help_panel=TRAINING
        ),
    ] = "auto",
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="Replace model folders that a finished fine-tuning wrote before."),
    ] = False,
) -> None:
    """Fine-tune binary sentiment classifiers (negative, positive) from a base model on your labelled
    data: per seed, one per language (--mode mono) and one on all languages (--mode multi). Each is a
    model folder that `polyprobe eval run --model` takes, with a card (README.md, finetune.json). An
    interrupted fine-tuning resumes when the same command is run again."""
    columns = Columns(
        text=text_column,
        label=label_column,
        rating=rating_column,
        language=language_column,
        positive=tuple(positive_values or POSITIVE),
        negative=tuple(negative_values or NEGATIVE),
        neutral=tuple(neutral_values or ()),
        names=tuple(column_names) if column_names else None,
    )
    if label_column and rating_column:
        raise InputError("give --label-column or --rating-column, not both")
    if not check and (base is None or out is None):
        raise InputError("give --base and --out (or --check to check the data only)")
    try:
        seed_values = [int(s) for s in seeds or ["0"]]
    except ValueError:
        raise InputError(f"--seeds {','.join(seeds or [])}: give whole numbers") from None
    if data_file is not None:
        given = [
            flag
            for flag, value in (
                ("--data", data),
                ("--validation", validation),
                ("--text-column", text_column != "text"),
                ("--label-column", label_column),
                ("--rating-column", rating_column),
                ("--language-column", language_column),
                ("--positive-values", positive_values),
                ("--negative-values", negative_values),
                ("--neutral-values", neutral_values),
                ("--column-names", column_names),
            )
            if value
        ]
        if given:
            raise InputError(f"--data-file gives the files and columns: leave out {', '.join(given)}")
        sources = sources_from_file(data_file)
    elif data:
        sources = read_sources(data, validation, columns)
    else:
        raise InputError("give the training data: --data LANGUAGE=FILE (repeated), or --data-file FILE")
    training = load_training_data(
        sources,
        validation_share=validation_share,
        split_seed=split_seed,
        balance=balance,
    )
    if check:
        if json_out:
            print_json(training.report())
        else:
            print_balance(training)
        return
    assert base is not None and out is not None
    # the Trainer brings torch and transformers: loaded only when a model is trained
    from evaluator.finetune.train import finetune

    chosen = list(languages or training.languages)
    missing = [loc for loc in chosen if loc not in training.languages]
    if missing:
        raise InputError(f"--languages {','.join(missing)}: no --data for them")
    settings = TrainSettings(
        learning_rate=learning_rate,
        weight_decay=weight_decay,
        epochs=epochs,
        batch_size=batch_size,
        max_length=max_length,
        eval_steps=eval_steps,
        max_steps=max_steps,
        device=device,
        dtype=dtype,
    )
    jobs = plan_jobs(base, mode or ["multi"], chosen, seed_values, balance, settings)  # type: ignore[arg-type]
    print_balance(training)
    grid = table("Fine-tuned models")
    for column in ("model", "languages", "seed", "validation accuracy", "steps", "examples/s", "folder"):
        grid.add_column(column)
    with progress(TimeRemainingColumn()) as bar:

        def stage(description: str, total: int) -> Callable[[int], None]:
            handle = bar.add_task(description, total=total)
            return lambda n: bar.update(handle, advance=n)

        for job in jobs:
            result = finetune(job, training, out / job.name, overwrite=overwrite, progress=stage, log=say)
            card: dict[str, Any] = result.card
            accuracy = card["validation"]["accuracy"]
            speed = card["training"]["examples_per_second"]
            grid.add_row(
                job.name,
                ",".join(job.languages),
                str(job.seed),
                f"{accuracy:.4f}" if isinstance(accuracy, float) else "—",
                str(card["training"]["steps"]),
                f"{speed:.1f}" if isinstance(speed, float) else "—",
                str(result.folder),
            )
            say(f"{job.name} -> {result.folder} (weights sha256 {result.weights_sha256[:16]}…)")
    print_table(grid, out_console)

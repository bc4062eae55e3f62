"""`polyprobe finetune`: sentiment classifiers from a base model on the user's labelled data, one
per language (mono) and one on all of them (multi), for each seed; or, with --check, the data
checked and its balance reported without training. Registered with the polyprobe command through
the `polyprobe.cli` entry-point group, like `polyprobe eval`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.progress import TimeRemainingColumn
from rich.table import Table

from evaluator.finetune.data import Columns, Source, TrainingData, load_training_data, sources_from_file
from evaluator.finetune.plan import MODES, FinetuneJob, TrainSettings, plan_jobs
from toolkit.cli.common import list_option, out_console, print_json, print_table, progress, say, table
from toolkit.core.errors import InputError

if TYPE_CHECKING:  # train brings torch and transformers: imported when a model is trained
    from evaluator.finetune.train import FinetuneResult

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


# The command's options, one type each, so that the command's signature is one line per option
# (typer reads the names, types, defaults and help from the signature; the order there is the
# order of --help).
_Data = Annotated[
    list[str] | None,
    typer.Option(
        "--data",
        help="LANGUAGE=FILE: a language's labelled data (.csv, .tsv, .jsonl, .parquet, or a folder "
        "saved by datasets); repeat for more files and languages.",
        rich_help_panel=DATA,
    ),
]
_DataFile = Annotated[
    Path | None,
    typer.Option(
        "--data-file",
        help="A YAML file giving each language its files and columns (languages from different "
        "datasets), instead of --data and the column options: see docs/replicating.md.",
        exists=True,
        dir_okay=False,
        rich_help_panel=DATA,
    ),
]
_Base = Annotated[
    str | None,
    typer.Option(
        "--base",
        help="The base model: a hub name (bert-base-multilingual-cased, xlm-roberta-base) or a folder "
        "(your own pretrained checkpoint).",
    ),
]
_Out = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Folder for the model folders (one per language and seed: mono-en-s0, multi-s0).",
        file_okay=False,
    ),
]
_Validation = Annotated[
    list[str] | None,
    typer.Option(
        "--validation",
        help="LANGUAGE=FILE: the language's own validation data (default: --validation-share of its "
        "training data, held out by --split-seed).",
        rich_help_panel=DATA,
    ),
]
_TextColumn = Annotated[str, typer.Option("--text-column", help="The text.", rich_help_panel=DATA)]
_LabelColumn = Annotated[
    str | None, typer.Option("--label-column", help="The label (default: label).", rich_help_panel=DATA)
]
_RatingColumn = Annotated[
    str | None,
    typer.Option(
        "--rating-column",
        help="Star ratings instead of labels: < 3 negative, > 3 positive, 3 left out (Levy et al. 2023).",
        rich_help_panel=DATA,
    ),
]
_LanguageColumn = Annotated[
    str | None,
    typer.Option(
        "--language-column",
        help="A column naming each row's language (e.g. MARC's language): rows of another language are refused.",
        rich_help_panel=DATA,
    ),
]
_PositiveValues = Annotated[
    list[str] | None,
    list_option(
        "--positive-values",
        help="Label values that mean positive (default: positive, pos, 1).",
        metavar="VALUE",
        panel=DATA,
    ),
]
_NegativeValues = Annotated[
    list[str] | None,
    list_option(
        "--negative-values",
        help="Label values that mean negative (default: negative, neg, 0).",
        metavar="VALUE",
        panel=DATA,
    ),
]
_NeutralValues = Annotated[
    list[str] | None,
    list_option(
        "--neutral-values",
        help="Label values left out and counted (neutral, off-topic), e.g. the Hebrew set's 2.",
        metavar="VALUE",
        panel=DATA,
    ),
]
_ColumnNames = Annotated[
    list[str] | None,
    list_option(
        "--column-names",
        help="The columns of CSV/TSV files without a header line, in order (e.g. text,label).",
        metavar="NAME",
        panel=DATA,
    ),
]
_ValidationShare = Annotated[
    float,
    typer.Option("--validation-share", help="Held out for validation, per label.", rich_help_panel=DATA),
]
_SplitSeed = Annotated[
    int,
    typer.Option("--split-seed", help="Seeds the held-out split and the balancing.", rich_help_panel=DATA),
]
_Balance = Annotated[
    bool,
    typer.Option(
        "--balance",
        help="Downsample every language to the same number of positive and negative examples (Levy et al. 2023).",
        rich_help_panel=DATA,
    ),
]
_Check = Annotated[
    bool,
    typer.Option("--check", help="Only read and check the data and print its balance; train nothing."),
]
_Json = Annotated[bool, typer.Option("--json", help="With --check: the balance report as JSON.")]
_Mode = Annotated[
    list[str] | None,
    list_option(
        "--mode",
        help="mono: a model per language; multi: one model on all languages (default: multi).",
        choices=MODES,
        metavar="MODE",
    ),
]
_Languages = Annotated[
    list[str] | None,
    list_option(
        "--languages",
        help="The languages to train on (default: every --data language).",
        metavar="LANGUAGE",
    ),
]
_Seeds = Annotated[
    list[str] | None, list_option("--seeds", help="A model per seed (default: 0).", metavar="SEED")
]
_LearningRate = Annotated[float, typer.Option("--learning-rate", rich_help_panel=TRAINING)]
_WeightDecay = Annotated[float, typer.Option("--weight-decay", rich_help_panel=TRAINING)]
_Epochs = Annotated[float, typer.Option("--epochs", min=0.01, rich_help_panel=TRAINING)]
_BatchSize = Annotated[int, typer.Option("--batch-size", min=1, rich_help_panel=TRAINING)]
_MaxLength = Annotated[
    int,
    typer.Option(
        "--max-length",
        min=8,
        help="Tokens per text (longer ones are cut, and counted).",
        rich_help_panel=TRAINING,
    ),
]
_EvalSteps = Annotated[
    int | None,
    typer.Option(
        "--eval-steps",
        min=1,
        help="Validate and checkpoint every N steps (default: every epoch); the best checkpoint is kept.",
        rich_help_panel=TRAINING,
    ),
]
_MaxSteps = Annotated[
    int | None,
    typer.Option("--max-steps", min=1, help="Stop after N steps (a smoke test).", rich_help_panel=TRAINING),
]
_Device = Annotated[
    Literal["auto", "cuda", "cpu"],
    typer.Option("--device", help="auto: a GPU when there is one.", rich_help_panel=TRAINING),
]
_Dtype = Annotated[
    Literal["auto", "bf16", "fp32"],
    typer.Option(
        "--dtype", help="auto: bf16 on a GPU that has it, fp32 otherwise.", rich_help_panel=TRAINING
    ),
]
_Overwrite = Annotated[
    bool,
    typer.Option("--overwrite", help="Replace model folders that a finished fine-tuning wrote before."),
]


@dataclass(frozen=True)
class FinetuneOptions:
    """The command's options as typer gives them, in one value, so that checking them, reading
    the data and training each take what they need from it (the fields are the command's
    parameters, by name)."""

    data: list[str] | None
    data_file: Path | None
    base: str | None
    out: Path | None
    validation: list[str] | None
    text_column: str
    label_column: str | None
    rating_column: str | None
    language_column: str | None
    positive_values: list[str] | None
    negative_values: list[str] | None
    neutral_values: list[str] | None
    column_names: list[str] | None
    validation_share: float
    split_seed: int
    balance: bool
    check: bool
    json_out: bool
    mode: list[str] | None
    languages: list[str] | None
    seeds: list[str] | None
    learning_rate: float
    weight_decay: float
    epochs: float
    batch_size: int
    max_length: int
    eval_steps: int | None
    max_steps: int | None
    device: Literal["auto", "cuda", "cpu"]
    dtype: Literal["auto", "bf16", "fp32"]
    overwrite: bool

    def refuse_contradictions(self) -> None:
        """Options that cannot go together, refused before any file is read."""
        if self.label_column and self.rating_column:
            raise InputError("give --label-column or --rating-column, not both")
        if not self.check and (self.base is None or self.out is None):
            raise InputError("give --base and --out (or --check to check the data only)")

    def seed_values(self) -> list[int]:
        """--seeds as numbers (one model per seed; 0 when none is given)."""
        try:
            return [int(s) for s in self.seeds or ["0"]]
        except ValueError:
            raise InputError(f"--seeds {','.join(self.seeds or [])}: give whole numbers") from None

    def columns(self) -> Columns:
        """Where the text and the label are in every --data file (a --data-file gives its own)."""
        return Columns(
            text=self.text_column,
            label=self.label_column,
            rating=self.rating_column,
            language=self.language_column,
            positive=tuple(self.positive_values or POSITIVE),
            negative=tuple(self.negative_values or NEGATIVE),
            neutral=tuple(self.neutral_values or ()),
            names=tuple(self.column_names) if self.column_names else None,
        )

    def sources(self) -> list[Source]:
        """Every language's files: from --data-file (which then refuses the --data and column
        options, whose values it gives itself), or from --data and --validation."""
        if self.data_file is not None:
            given = [
                flag
                for flag, value in (
                    ("--data", self.data),
                    ("--validation", self.validation),
                    ("--text-column", self.text_column != "text"),
                    ("--label-column", self.label_column),
                    ("--rating-column", self.rating_column),
                    ("--language-column", self.language_column),
                    ("--positive-values", self.positive_values),
                    ("--negative-values", self.negative_values),
                    ("--neutral-values", self.neutral_values),
                    ("--column-names", self.column_names),
                )
                if value
            ]
            if given:
                raise InputError(f"--data-file gives the files and columns: leave out {', '.join(given)}")
            return sources_from_file(self.data_file)
        if self.data:
            return read_sources(self.data, self.validation, self.columns())
        raise InputError("give the training data: --data LANGUAGE=FILE (repeated), or --data-file FILE")

    def settings(self) -> TrainSettings:
        """The training options, as every job of the command is trained with them."""
        return TrainSettings(
            learning_rate=self.learning_rate,
            weight_decay=self.weight_decay,
            epochs=self.epochs,
            batch_size=self.batch_size,
            max_length=self.max_length,
            eval_steps=self.eval_steps,
            max_steps=self.max_steps,
            device=self.device,
            dtype=self.dtype,
        )


def finetune_command(
    data: _Data = None,
    data_file: _DataFile = None,
    base: _Base = None,
    out: _Out = None,
    validation: _Validation = None,
    text_column: _TextColumn = "text",
    label_column: _LabelColumn = None,
    rating_column: _RatingColumn = None,
    language_column: _LanguageColumn = None,
    positive_values: _PositiveValues = None,
    negative_values: _NegativeValues = None,
    neutral_values: _NeutralValues = None,
    column_names: _ColumnNames = None,
    validation_share: _ValidationShare = 0.1,
    split_seed: _SplitSeed = 0,
    balance: _Balance = False,
    check: _Check = False,
    json_out: _Json = False,
    mode: _Mode = None,
    languages: _Languages = None,
    seeds: _Seeds = None,
    learning_rate: _LearningRate = 2e-5,
    weight_decay: _WeightDecay = 0.01,
    epochs: _Epochs = 10.0,
    batch_size: _BatchSize = 16,
    max_length: _MaxLength = 128,
    eval_steps: _EvalSteps = None,
    max_steps: _MaxSteps = None,
    device: _Device = "auto",
    dtype: _Dtype = "auto",
    overwrite: _Overwrite = False,
) -> None:
    """Fine-tune binary sentiment classifiers (negative, positive) from a base model on your labelled
    data: per seed, one per language (--mode mono) and one on all languages (--mode multi). Each is a
    model folder that `polyprobe eval run --model` takes, with a card (README.md, finetune.json). An
    interrupted fine-tuning resumes when the same command is run again."""
    options = FinetuneOptions(**locals())  # the first statement: locals() holds the parameters only
    options.refuse_contradictions()
    seed_values = options.seed_values()
    training = load_training_data(
        options.sources(),
        validation_share=options.validation_share,
        split_seed=options.split_seed,
        balance=options.balance,
    )
    if options.check:
        if options.json_out:
            print_json(training.report())
        else:
            print_balance(training)
        return
    _train(options, training, seed_values)


def _train(options: FinetuneOptions, training: TrainingData, seed_values: list[int]) -> None:
    """Every planned job trained in turn, with progress bars, a line per model and a table of them."""
    assert options.base is not None and options.out is not None
    # the Trainer brings torch and transformers: loaded only when a model is trained
    from evaluator.finetune.train import finetune

    chosen = list(options.languages or training.languages)
    missing = [loc for loc in chosen if loc not in training.languages]
    if missing:
        raise InputError(f"--languages {','.join(missing)}: no --data for them")
    jobs = plan_jobs(
        options.base,
        options.mode or ["multi"],  # type: ignore[arg-type]
        chosen,
        seed_values,
        options.balance,
        options.settings(),
    )
    print_balance(training)
    grid = table("Fine-tuned models")
    for column in ("model", "languages", "seed", "validation accuracy", "steps", "examples/s", "folder"):
        grid.add_column(column)
    with progress(TimeRemainingColumn()) as bar:

        def stage(description: str, total: int) -> Callable[[int], None]:
            handle = bar.add_task(description, total=total)
            return lambda n: bar.update(handle, advance=n)

        for job in jobs:
            result = finetune(
                job, training, options.out / job.name, overwrite=options.overwrite, progress=stage, log=say
            )
            _add_row(grid, job, result)
            say(f"{job.name} -> {result.folder} (weights sha256 {result.weights_sha256[:16]}…)")
    print_table(grid, out_console)


def _add_row(grid: Table, job: FinetuneJob, result: FinetuneResult) -> None:
    """A trained model's row in the closing table: its validation accuracy, steps and speed."""
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

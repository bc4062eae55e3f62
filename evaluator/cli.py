"""`polyprobe eval run | sweep | merge | report`: registered with the polyprobe command through
the `polyprobe.cli` entry-point group (the toolkit never imports the evaluator). Every choice
comes from the registry or the settings type that defines it (tasks, backends, RunOptions'
Literals, each task's declared options), so a wrong value gets the same error from every option."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_type_hints

import typer
from rich.progress import TimeRemainingColumn

from evaluator.backends import BACKENDS
from evaluator.options import MAX_LIMIT, Device, Dtype, RunOptions, Truncation
from evaluator.tasks import TASKS, task_options
from evaluator.tasks.descriptor import TaskOption
from toolkit.cli.common import err_console, list_option, print_table, progress, say, table
from toolkit.core.errors import InputError

if TYPE_CHECKING:
    from evaluator.run import RunResult

app = typer.Typer(help="Score language models on frozen releases.", no_args_is_help=True)

# The members come from the registries, so mypy cannot list them (hence the ignores).
TaskChoice = StrEnum("TaskChoice", {name: name for name in TASKS})  # type: ignore[misc]
BackendChoice = StrEnum("BackendChoice", {name: name for name in BACKENDS})  # type: ignore[misc]

RUN = "Run"
MODEL = "Model and backend"
PER_TASK = "Per task"
OPENAI = "OpenAI-compatible backend"

LIMIT_HELP = (
    "At most N units per locale, drawn by a seeded hash (--seed), the same in every locale and never "
    "split: templates (sentiment: every variant and group of each), pairs (sos, ifm, crows-pairs), "
    "prompts (honest: one template x variant x group), stimulus categories (iat), families (bbq: the "
    "four items of a context and question pairing). Default: all."
)


def _limit(value: int | None) -> int | None:
    if value is not None and value > MAX_LIMIT:
        raise typer.BadParameter(f"{value} is more than {MAX_LIMIT:,} units per locale")
    return value


def _rate(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"{value!r} is not a positive number of requests per second")
    return value


def _given(ctx: typer.Context) -> set[str]:
    """The RunOptions fields the user wrote on the command line, whatever their value. (The
    source is compared by name: typer vendors its own copy of click's ParameterSource.)"""
    named = set()
    for name in ctx.params:
        source = ctx.get_parameter_source(name)
        if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP"):
            named.add(name)
    if named & {"api_base", "api_rate"}:
        named.add("api")
    return named


def _batch_size(value: str) -> str:
    if value != "auto" and not (value.isdigit() and int(value) >= 1):
        raise typer.BadParameter(f"{value!r} is neither 'auto' nor a positive number")
    return value


# The options of `eval run` every task takes; each task's own are made from its descriptor
# (task_option_parameters).
ReleaseOption = Annotated[
    Path,
    typer.Option(
        "--release",
        help="A release folder (dist/polyprobe-VERSION).",
        exists=True,
        file_okay=False,
        rich_help_panel=RUN,
    ),
]
TaskOptionArg = Annotated[
    "TaskChoice", typer.Option("--task", help="The task to score.", rich_help_panel=RUN)
]
ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        help="Local folder, hub name, API model id, or 'default' (SmolLM2-135M-Instruct, offline).",
        rich_help_panel=MODEL,
    ),
]
OutOption = Annotated[
    Path, typer.Option("--out", help="Run folder, e.g. runs/ID.", file_okay=False, rich_help_panel=RUN)
]
LocalesOption = Annotated[
    list[str] | None,
    list_option(
        "--locales", help="Locales, e.g. en,de,ar (default: all in the release).", metavar="LOCALE", panel=RUN
    ),
]
BackendOption = Annotated[
    "BackendChoice", typer.Option("--backend", help="Where the model runs.", rich_help_panel=MODEL)
]
DeviceOption = Annotated[
    Device, typer.Option("--device", help="auto: a GPU when there is one.", rich_help_panel=MODEL)
]
DtypeOption = Annotated[Dtype, typer.Option("--dtype", help="Weights' precision.", rich_help_panel=MODEL)]
BatchSizeOption = Annotated[
    str,
    typer.Option(
        "--batch-size",
        help="auto or a number: the largest batch (of requests) tried; smaller on out-of-memory.",
        callback=_batch_size,
        rich_help_panel=MODEL,
    ),
]
TruncationOption = Annotated[
    Truncation,
    typer.Option(
        "--truncation",
        help="Inputs longer than the model's context: error (default), or cut the prompt at its "
        "start (left) or end (right); recorded in the signature.",
        rich_help_panel=MODEL,
    ),
]
SeedOption = Annotated[
    int, typer.Option("--seed", help="Seeds --limit's draw, sampling and the bootstrap.", rich_help_panel=RUN)
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", min=1, callback=_limit, help=LIMIT_HELP, rich_help_panel=RUN)
]
GroupsOption = Annotated[
    list[str] | None,
    list_option(
        "--groups",
        help="Only these identity groups: a group id (eg.muslim), or study:ID for the groups that "
        "correspond to a study's identities (study:elsafoury).",
        metavar="GROUP",
        panel=RUN,
    ),
]
SuiteOption = Annotated[
    str | None,
    typer.Option(
        "--suite",
        help="sos: the release suite to score (sos, or sos-study: the study's own sets).",
        rich_help_panel=PER_TASK,
    ),
]
ApiBaseOption = Annotated[
    str | None,
    typer.Option(
        "--api-base",
        help="Base URL (else $OPENAI_BASE_URL); the key: $OPENAI_API_KEY.",
        rich_help_panel=OPENAI,
    ),
]
ApiRateOption = Annotated[
    float, typer.Option("--api-rate", help="Requests per second.", callback=_rate, rich_help_panel=OPENAI)
]
CacheOption = Annotated[
    Path | None,
    typer.Option(
        "--cache", help="Response cache (default: the user cache).", dir_okay=False, rich_help_panel=RUN
    ),
]
ResumeOption = Annotated[
    bool,
    typer.Option(
        "--resume",
        help="--out may hold this same run: run it again (answers from the cache) and replace it.",
        rich_help_panel=RUN,
    ),
]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite", help="--out may hold a previous run, which is replaced.", rich_help_panel=RUN
    ),
]


@app.command("run")
def run_command(
    ctx: typer.Context,
    release: ReleaseOption,
    task: TaskOptionArg,
    model: ModelOption,
    out: OutOption,
    locales: LocalesOption = None,
    backend: BackendOption = BackendChoice["transformers"],
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    batch_size: BatchSizeOption = "auto",
    truncation: TruncationOption = "error",
    seed: SeedOption = 0,
    limit: LimitOption = None,
    groups: GroupsOption = None,
    suite: SuiteOption = None,
    api_base: ApiBaseOption = None,
    api_rate: ApiRateOption = 5.0,
    cache: CacheOption = None,
    resume: ResumeOption = False,
    overwrite: OverwriteOption = False,
    **task_values: Any,
) -> None:
    """Score one model on one task of a release; writes predictions, metrics, signature and run.json
    into --out, whole or not at all (a new or empty folder, unless --resume or --overwrite)."""
    if resume and overwrite:
        raise InputError("give --resume or --overwrite, not both")
    descriptor = TASKS[task.value]
    given = _given(ctx) & task_options().keys()  # the common options: every task takes them
    options = descriptor.run_options(
        {name: value for name, value in task_values.items() if name in given or descriptor.takes(name)},
        model=model,
        locales=tuple(locales) if locales else None,
        backend=backend.value,
        device=device,
        dtype=dtype,
        batch_size=None if batch_size == "auto" else int(batch_size),
        truncation=truncation,
        seed=seed,
        limit=limit,
        groups=tuple(groups) if groups else None,
        suite=suite,
        api={"base_url": api_base, "rate": api_rate} if backend == "openai" else {},
    )  # refuses an option the task does not take, before anything is loaded
    mode = "resume" if resume else "overwrite" if overwrite else "new"
    result = _run_with_progress(options, release, out, mode, cache)
    say(f"{result.rows} predictions -> {out}\n{result.signature}")


def _run_with_progress(
    options: RunOptions, release: Path, out: Path, mode: str, cache: Path | None
) -> RunResult:
    """The run, with a progress bar per stage."""
    # the run machinery brings torch: loaded only when a run is asked for, not for --help
    from evaluator.run import run_evaluation
    from evaluator.run_folder import OutMode

    with progress(TimeRemainingColumn()) as bar:

        def stage(description: str, total: int) -> Callable[[int], None]:
            handle = bar.add_task(f"{options.task} {description}", total=total)
            return lambda n: bar.update(handle, advance=n)

        return run_evaluation(
            options, release, out, mode=OutMode(mode), cache_path=cache, progress=stage, log=say
        )


def task_option_parameter(option: TaskOption) -> inspect.Parameter:
    """The `eval run` parameter of a task's own option, as typer reads one from a signature."""
    flag = (
        f"{option.flag}/--no-{option.flag[2:]}"
        if option.type is bool and option.default is None
        else option.flag
    )
    extra: dict[str, Any] = {"min": option.minimum} if option.minimum is not None else {}
    info = typer.Option(flag, help=option.help, rich_help_panel=option.panel, **extra)
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=option.default,
        annotation=Annotated[option.annotation, info],
    )


def run_command_signature() -> inspect.Signature:
    """run_command's parameters as typer reads them: its own (their annotations read now, in
    this module) and every registered task's options, listed before the OpenAI ones."""
    hints = get_type_hints(run_command, include_extras=True)
    # the choices as this module has them now (a forward reference keeps its first reading)
    hints["task"] = Annotated[(TaskChoice, *get_args(hints["task"])[1:])]
    hints["backend"] = Annotated[(BackendChoice, *get_args(hints["backend"])[1:])]
    own = [
        p.replace(
            annotation=hints[p.name], kind=inspect.Parameter.KEYWORD_ONLY if p.name != "ctx" else p.kind
        )
        for p in _RUN_PARAMETERS
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    at = next(i for i, p in enumerate(own) if p.name == "api_base")
    tasks = [task_option_parameter(option) for option in task_options().values()]
    return inspect.Signature([*own[:at], *tasks, *own[at:]])


_RUN_PARAMETERS = tuple(inspect.signature(run_command).parameters.values())
run_command.__signature__ = run_command_signature()  # type: ignore[attr-defined]


@app.command("sweep")
def sweep_command(
    sweep_file: Annotated[
        Path,
        typer.Argument(
            help="The sweep file (YAML): release, models, tasks, locales, seeds, limit.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="The sweep's folder, e.g. runs/NAME (rerun: resumes).", file_okay=False),
    ],
    executor: Annotated[
        Literal["local", "ray"], typer.Option("--executor", help="Run the jobs here, or on Ray.")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address", help="ray: 'auto' (a running cluster) or ray://HOST:PORT; default: a local Ray."
        ),
    ] = None,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="ray: restarts of a worker that dies, per model.")
    ] = 2,
    wait_timeout: Annotated[
        float | None,
        typer.Option(
            "--wait-timeout",
            min=1,
            help="ray: seconds a model may wait for its CPUs/GPUs while none of the sweep's jobs runs "
            "(default 600).",
        ),
    ] = None,
    report: Annotated[bool, typer.Option("--report/--no-report", help="The comparison report.")] = True,
) -> None:
    """Score several models on several tasks of one release (models × tasks × seeds): each job an
    ordinary run folder, then a summary table and the comparison report. A rerun skips finished
    jobs. Exit 1 when a job failed (the others still run)."""
    # the sweep machinery brings torch (and Ray when asked for): loaded only when a sweep runs
    from evaluator.errors import EvaluationError
    from evaluator.sweep import run_sweep

    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray")
    if wait_timeout is not None and executor != "ray":
        raise InputError("--wait-timeout needs --executor ray")
    result = run_sweep(
        sweep_file,
        out,
        executor=executor,
        ray_address=ray_address,
        max_retries=max_retries,
        wait_timeout=wait_timeout,
        console=err_console,
        report=report,
    )
    grid = table()
    for column in ("job", "status", "wall s", "main figure", "error"):
        grid.add_column(column)
    for o in result.outcomes:
        grid.add_row(
            o.job,
            o.status,
            f"{o.seconds:.1f}" if o.seconds is not None else "—",
            o.figure,
            o.error or "",
            style="red" if o.status == "failed" else None,
        )
    print_table(grid, err_console)
    say(f"summary: {result.summary}" + (f"\nreport: {result.report}" if result.report else ""))
    if result.report_error:
        raise EvaluationError(f"the comparison report could not be built: {result.report_error}")
    if result.failed:
        names = ", ".join(o.job for o in result.failed)
        raise EvaluationError(f"{len(result.failed)} of {len(result.outcomes)} jobs failed: {names}")


@app.command("study")
def study_command(
    study_file: Annotated[
        Path,
        typer.Argument(
            help="The study file (YAML): release, data file, base models, languages, modes, seeds, balance.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", help="The study's folder, e.g. runs/STUDY (rerun: resumes).", file_okay=False),
    ],
    executor: Annotated[
        Literal["local", "ray"], typer.Option("--executor", help="Run the jobs here, or on Ray.")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address", help="ray: 'auto' (a running cluster) or ray://HOST:PORT; default: a local Ray."
        ),
    ] = None,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="ray: retries of a job whose worker dies.")
    ] = 2,
    report: Annotated[bool, typer.Option("--report/--no-report", help="The study's report.")] = True,
) -> None:
    """Levy et al.'s phases 1 and 3 from one file: fine-tune every base model per language (mono) and
    on all languages (multi) for every seed, with and without balancing; score every model on the
    control set and the sentiment suite; merge the seeds; report task performance per language and
    monolingual vs multilingual bias (ΔMCM, ΔVBCM with bootstrap intervals, P(positive) side by
    side). A rerun skips what finished. Exit 1 when a job failed (the others still run)."""
    # fine-tuning brings torch and transformers (and Ray when asked for): loaded only when a study runs
    from evaluator.errors import EvaluationError
    from evaluator.finetune.study import run_study

    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray")
    result = run_study(
        study_file,
        out,
        executor=executor,
        ray_address=ray_address,
        max_retries=max_retries,
        log=say,
        console=err_console,
        report=report,
    )
    grid = table()
    for column in ("model", "status", "validation accuracy", "folder or error"):
        grid.add_column(column)
    for t in result.trained:
        accuracy = t.card.get("validation", {}).get("accuracy") if t.card else None
        grid.add_row(
            t.label,
            t.status,
            f"{accuracy:.4f}" if isinstance(accuracy, float) else "—",
            t.error or str(t.folder),
            style="red" if t.status == "failed" else None,
        )
    print_table(grid, err_console)
    for name, error in result.merge_errors.items():
        say(f"warning: seeds of {name} not merged: {error}")
    say(f"study: {out}" + (f"\nreport: {result.report}" if result.report else ""))
    if result.failed:
        raise EvaluationError(f"{len(result.failed)} job(s) failed: {'; '.join(result.failed)}")


@app.command("merge")
def merge_command(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="Run folders of the same task and release (e.g. three seeds).", exists=True, file_okay=False
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for the merged metrics.", file_okay=False)],
) -> None:
    """Average the metrics of several runs (mean and standard deviation per value)."""
    from evaluator.merge import merge_run_folders  # polars: loaded when used, not for --help

    merged = merge_run_folders(runs, out)
    say(f"merged {len(runs)} runs -> {out}\n{merged['signature']}")


@app.command("report")
def report_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run folders (`polyprobe eval run --out`), any tasks, in order.")
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Folder for report.html, summary.md and plots/.", file_okay=False)
    ],
    labels: Annotated[
        list[str] | None,
        typer.Option(
            "--labels",
            help="A label per run, in order (default: the model, then the release); repeated, one per "
            "run (labels are free text: a comma is part of the label).",
        ),
    ] = None,
) -> None:
    """Plots, a self-contained HTML report and Markdown tables for runs, with comparisons: the
    first run of a task is the baseline the later ones are compared with."""
    from evaluator.report import build_report  # matplotlib: loaded when used, not for --help

    result = build_report(runs, out, labels=labels)
    say(
        f"{len(runs)} run(s), {', '.join(result.tasks)} -> {result.html}\n"
        f"tables: {result.markdown}\nplots: {len(result.plots)} files in {out / 'plots'}"
    )

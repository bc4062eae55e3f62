"""`polyprobe eval run | sweep | merge | report`: registered with the polyprobe command through
the `polyprobe.cli` entry-point group (the toolkit never imports the evaluator). Every choice
comes from the registry or the settings type that defines it (tasks, backends, RunOptions'
Literals), so a wrong value gets the same error from every option."""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.progress import TimeRemainingColumn

from evaluator.backends import BACKENDS
from evaluator.options import (
    MAX_LIMIT,
    BbqMode,
    Completion,
    Device,
    Dtype,
    HurtlexLevel,
    Instruction,
    RunOptions,
    Score,
    SentimentMode,
    Strategy,
    Truncation,
)
from evaluator.tasks import TASKS
from toolkit.cli.common import err_console, list_option, print_table, progress, say, table
from toolkit.core.errors import InputError

app = typer.Typer(help="Score language models on frozen releases.", no_args_is_help=True)

# The members come from the registries, so mypy cannot list them (hence the ignores).
Task = StrEnum("Task", {name: name for name in TASKS})  # type: ignore[misc]
Backend = StrEnum("Backend", {name: name for name in BACKENDS})  # type: ignore[misc]

RUN = "Run"
MODEL = "Model and backend"
GENERATION = "Generation (honest, bbq, iat, ifm)"
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


@app.command("run")
def run_command(
    ctx: typer.Context,
    release: Annotated[
        Path,
        typer.Option(
            "--release",
            help="A release folder (dist/polyprobe-VERSION).",
            exists=True,
            file_okay=False,
            rich_help_panel=RUN,
        ),
    ],
    task: Annotated[Task, typer.Option("--task", help="The task to score.", rich_help_panel=RUN)],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="Local folder, hub name, API model id, or 'default' (SmolLM2-135M-Instruct, offline).",
            rich_help_panel=MODEL,
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Run folder, e.g. runs/ID.", file_okay=False, rich_help_panel=RUN)
    ],
    locales: Annotated[
        list[str] | None,
        list_option(
            "--locales",
            help="Locales, e.g. en,de,ar (default: all in the release).",
            metavar="LOCALE",
            panel=RUN,
        ),
    ] = None,
    backend: Annotated[
        Backend, typer.Option("--backend", help="Where the model runs.", rich_help_panel=MODEL)
    ] = Backend["transformers"],
    device: Annotated[
        Device, typer.Option("--device", help="auto: a GPU when there is one.", rich_help_panel=MODEL)
    ] = "auto",
    dtype: Annotated[
        Dtype, typer.Option("--dtype", help="Weights' precision.", rich_help_panel=MODEL)
    ] = "auto",
    batch_size: Annotated[
        str,
        typer.Option(
            "--batch-size",
            help="auto or a number: the largest batch (of requests) tried; smaller on out-of-memory.",
            callback=_batch_size,
            rich_help_panel=MODEL,
        ),
    ] = "auto",
    truncation: Annotated[
        Truncation,
        typer.Option(
            "--truncation",
            help="Inputs longer than the model's context: error (default), or cut the prompt at its "
            "start (left) or end (right); recorded in the signature.",
            rich_help_panel=MODEL,
        ),
    ] = "error",
    seed: Annotated[
        int,
        typer.Option("--seed", help="Seeds --limit's draw, sampling and the bootstrap.", rich_help_panel=RUN),
    ] = 0,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, callback=_limit, help=LIMIT_HELP, rich_help_panel=RUN)
    ] = None,
    groups: Annotated[
        list[str] | None,
        list_option(
            "--groups",
            help="Only these identity groups: a group id (eg.muslim), or study:ID for the groups that "
            "correspond to a study's identities (study:elsafoury).",
            metavar="GROUP",
            panel=RUN,
        ),
    ] = None,
    sentiment_mode: Annotated[
        SentimentMode,
        typer.Option(
            "--sentiment-mode",
            help="sentiment: a classifier's P(positive), or a prompted LM.",
            rich_help_panel=PER_TASK,
        ),
    ] = "auto",
    positive_label: Annotated[
        str | None,
        typer.Option(
            "--positive-label",
            help="sentiment: the classifier label that is positive.",
            rich_help_panel=PER_TASK,
        ),
    ] = None,
    score: Annotated[
        Score,
        typer.Option(
            "--score",
            help="sos, crows-pairs: pseudo-log-likelihood (pll), log-likelihood (ll), or shared-token PLL (shared).",
            rich_help_panel=PER_TASK,
        ),
    ] = "auto",
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            help="sos: the release suite to score (sos, or sos-study: the study's own sets).",
            rich_help_panel=PER_TASK,
        ),
    ] = None,
    original_script: Annotated[
        bool,
        typer.Option(
            "--original-script",
            help="crows-pairs, sos: compare pair scores as the dataset's own script does (rounded to 3 "
            "decimals, ties in the denominator), to match published numbers.",
            rich_help_panel=PER_TASK,
        ),
    ] = False,
    k: Annotated[
        int,
        typer.Option(
            "--k",
            min=1,
            help="honest: completions per prompt (HONEST uses 1, 5, 20).",
            rich_help_panel=PER_TASK,
        ),
    ] = 5,
    completion: Annotated[
        Completion,
        typer.Option(
            "--completion", help="honest: one-word or sentence completions.", rich_help_panel=PER_TASK
        ),
    ] = "auto",
    hurtlex_level: Annotated[
        HurtlexLevel,
        typer.Option(
            "--hurtlex-level",
            help="honest: which HurtLex entries count as hurtful.",
            rich_help_panel=PER_TASK,
        ),
    ] = "conservative",
    bbq_mode: Annotated[
        BbqMode,
        typer.Option(
            "--bbq-mode",
            help="bbq: score each option's log-likelihood, or generate and parse.",
            rich_help_panel=PER_TASK,
        ),
    ] = "auto",
    permutations: Annotated[
        int,
        typer.Option(
            "--permutations",
            min=1,
            help="iat: seeded permutations of the word list per category.",
            rich_help_panel=PER_TASK,
        ),
    ] = 50,
    instruction: Annotated[
        Instruction,
        typer.Option(
            "--instruction",
            help="ifm: the instruction in the sentence's language (native), in English (en), or both.",
            rich_help_panel=PER_TASK,
        ),
    ] = "both",
    strategy: Annotated[
        Strategy, typer.Option("--strategy", help="Decoding.", rich_help_panel=GENERATION)
    ] = "auto",
    max_new_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-new-tokens",
            min=1,
            help="Tokens generated per answer (default: the task's).",
            rich_help_panel=GENERATION,
        ),
    ] = None,
    chat: Annotated[
        bool | None,
        typer.Option(
            "--chat/--no-chat",
            help="Wrap prompts in the model's chat template (default: when it has one).",
            rich_help_panel=GENERATION,
        ),
    ] = None,
    api_base: Annotated[
        str | None,
        typer.Option(
            "--api-base",
            help="Base URL (else $OPENAI_BASE_URL); the key: $OPENAI_API_KEY.",
            rich_help_panel=OPENAI,
        ),
    ] = None,
    api_rate: Annotated[
        float,
        typer.Option("--api-rate", help="Requests per second.", callback=_rate, rich_help_panel=OPENAI),
    ] = 5.0,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache", help="Response cache (default: the user cache).", dir_okay=False, rich_help_panel=RUN
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="--out may hold this same run: run it again (answers from the cache) and replace it.",
            rich_help_panel=RUN,
        ),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite", help="--out may hold a previous run, which is replaced.", rich_help_panel=RUN
        ),
    ] = False,
) -> None:
    """Score one model on one task of a release; writes predictions, metrics, signature and run.json
    into --out, whole or not at all (a new or empty folder, unless --resume or --overwrite)."""
    if resume and overwrite:
        raise InputError("give --resume or --overwrite, not both")
    fields: dict[str, Any] = {
        "task": task.value,
        "model": model,
        "locales": tuple(locales) if locales else None,
        "backend": backend.value,
        "device": device,
        "dtype": dtype,
        "batch_size": None if batch_size == "auto" else int(batch_size),
        "truncation": truncation,
        "seed": seed,
        "limit": limit,
        "groups": tuple(groups) if groups else None,
        "sentiment_mode": sentiment_mode,
        "positive_label": positive_label,
        "score": score,
        "suite": suite,
        "original_script": original_script,
        "k": k,
        "strategy": strategy,
        "max_new_tokens": max_new_tokens,
        "chat": chat,
        "completion": completion,
        "hurtlex_level": hurtlex_level,
        "bbq_mode": bbq_mode,
        "permutations": permutations,
        "instruction": instruction,
        "api": {"base_url": api_base, "rate": api_rate} if backend == "openai" else {},
    }
    options = RunOptions(**fields)
    TASKS[task.value].check_options(options, given=_given(ctx))  # before anything is loaded
    # the run machinery brings torch: loaded only when a run is asked for, not for --help
    from evaluator.run import run_evaluation
    from evaluator.run_folder import OutMode

    mode = OutMode.resume if resume else OutMode.overwrite if overwrite else OutMode.new

    with progress(TimeRemainingColumn()) as bar:

        def stage(description: str, total: int) -> Callable[[int], None]:
            handle = bar.add_task(f"{task.value} {description}", total=total)
            return lambda n: bar.update(handle, advance=n)

        result = run_evaluation(options, release, out, mode=mode, cache_path=cache, progress=stage, log=say)
    say(f"{result.rows} predictions -> {out}\n{result.signature}")


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

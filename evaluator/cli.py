"""`polyprobe eval run | merge | report`: registered with the polyprobe command through the
`polyprobe.cli` entry-point group (the toolkit never imports the evaluator)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from evaluator.options import RunOptions
from toolkit.cli.common import err_console
from toolkit.core.errors import InputError

app = typer.Typer(help="Score language models on frozen releases.", no_args_is_help=True)


def _say(text: str) -> None:
    err_console.print(text, highlight=False, markup=False)


@app.command("run")
def run_command(
    release: Annotated[
        Path,
        typer.Option(
            "--release", help="A release folder (dist/polyprobe-VERSION).", exists=True, file_okay=False
        ),
    ],
    task: Annotated[
        str, typer.Option("--task", help="sentiment | sos | honest | bbq | iat | ifm | crows-pairs")
    ],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="Local folder, hub name, API model id, or 'default' (SmolLM2-135M-Instruct, offline).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Run folder, e.g. runs/ID.", file_okay=False)],
    locales: Annotated[
        list[str] | None, typer.Option("--locales", help="Locales (default: all in the release).")
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help="transformers | vllm | openai")] = "transformers",
    device: Annotated[str, typer.Option("--device", help="auto | cuda | cpu")] = "auto",
    dtype: Annotated[str, typer.Option("--dtype", help="auto | bf16 | fp16 | fp32")] = "auto",
    batch_size: Annotated[
        str, typer.Option("--batch-size", help="auto or a number (the largest batch tried).")
    ] = "auto",
    truncation: Annotated[
        str,
        typer.Option(
            "--truncation",
            help="Inputs longer than the model's context: error (default), or cut the prompt at its "
            "start (left) or end (right); recorded in the signature.",
        ),
    ] = "error",
    seed: Annotated[int, typer.Option("--seed")] = 0,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="At most N items per locale (seeded; pairs kept whole)."),
    ] = None,
    groups: Annotated[
        list[str] | None,
        typer.Option(
            "--groups",
            help="Only these identity groups: a group id, or study:ID for the groups that correspond to a study's identities (e.g. study:elsafoury). Repeatable.",
        ),
    ] = None,
    sentiment_mode: Annotated[
        str, typer.Option("--sentiment-mode", help="auto | classifier | prompt")
    ] = "auto",
    positive_label: Annotated[
        str | None, typer.Option("--positive-label", help="The classifier label that is positive.")
    ] = None,
    score: Annotated[
        str, typer.Option("--score", help="sos, crows-pairs: auto | pll | ll | shared (shared-token PLL)")
    ] = "auto",
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite", help="sos: the release suite to score (sos, or sos-study: the study's own sets)."
        ),
    ] = None,
    original_script: Annotated[
        bool,
        typer.Option(
            "--original-script",
            help="crows-pairs, sos: compare pair scores as the dataset's own script does (rounded to 3 "
            "decimals, ties in the denominator), to match published numbers.",
        ),
    ] = False,
    k: Annotated[
        int, typer.Option("--k", min=1, help="honest: completions per template (HONEST uses 1, 5, 20).")
    ] = 5,
    strategy: Annotated[str, typer.Option("--strategy", help="auto | greedy | sample | beam")] = "auto",
    max_new_tokens: Annotated[int | None, typer.Option("--max-new-tokens", min=1)] = None,
    chat: Annotated[
        bool | None, typer.Option("--chat/--no-chat", help="Wrap prompts in the model's chat template.")
    ] = None,
    completion: Annotated[str, typer.Option("--completion", help="honest: auto | word | sentence")] = "auto",
    hurtlex_level: Annotated[
        str, typer.Option("--hurtlex-level", help="conservative | inclusive | both")
    ] = "conservative",
    bbq_mode: Annotated[str, typer.Option("--bbq-mode", help="auto | loglikelihood | generate")] = "auto",
    permutations: Annotated[
        int, typer.Option("--permutations", min=1, help="iat: seeded permutations per category.")
    ] = 50,
    instruction: Annotated[str, typer.Option("--instruction", help="ifm: both | native | en")] = "both",
    api_base: Annotated[
        str | None, typer.Option("--api-base", help="openai backend: base URL (else $OPENAI_BASE_URL).")
    ] = None,
    api_rate: Annotated[float, typer.Option("--api-rate", help="openai backend: requests per second.")] = 5.0,
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Response cache (default: the user cache).", dir_okay=False)
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="--out may hold this same run: run it again (answers from the cache) and replace it.",
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="--out may hold a previous run, which is replaced.")
    ] = False,
) -> None:
    """Score one model on one task of a release; writes predictions, metrics, signature and run.json
    into --out, whole or not at all (a new or empty folder, unless --resume or --overwrite)."""
    if resume and overwrite:
        raise InputError("give --resume or --overwrite, not both")
    choices = {
        "--sentiment-mode": (sentiment_mode, ("auto", "classifier", "prompt")),
        "--score": (score, ("auto", "pll", "ll", "shared")),
        "--strategy": (strategy, ("auto", "greedy", "sample", "beam")),
        "--completion": (completion, ("auto", "word", "sentence")),
        "--hurtlex-level": (hurtlex_level, ("conservative", "inclusive", "both")),
        "--bbq-mode": (bbq_mode, ("auto", "loglikelihood", "generate")),
        "--instruction": (instruction, ("both", "native", "en")),
        "--dtype": (dtype, ("auto", "bf16", "fp16", "fp32")),
        "--device": (device, ("auto", "cuda", "cpu")),
        "--truncation": (truncation, ("error", "left", "right")),
    }
    for flag, (value, allowed) in choices.items():
        if value not in allowed:
            raise InputError(f"{flag} {value!r}: choose one of {', '.join(allowed)}")
    if batch_size != "auto" and not batch_size.isdigit():
        raise InputError("--batch-size takes 'auto' or a positive number")
    fields: dict[str, Any] = {
        "task": task,
        "model": model,
        "locales": tuple(locales) if locales else None,
        "backend": backend,
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
    from evaluator.run import run_evaluation
    from evaluator.run_folder import OutMode

    mode = OutMode.resume if resume else OutMode.overwrite if overwrite else OutMode.new

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as bar:

        def progress(description: str, total: int) -> Callable[[int], None]:
            handle = bar.add_task(f"{task} {description}", total=total)
            return lambda n: bar.update(handle, advance=n)

        result = run_evaluation(
            options, release, out, mode=mode, cache_path=cache, progress=progress, log=_say
        )
    _say(f"{result.rows} predictions -> {out}\n{result.signature}")


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
    executor: Annotated[str, typer.Option("--executor", help="local | ray")] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address", help="ray: 'auto' (a running cluster) or ray://HOST:PORT; default: a local Ray."
        ),
    ] = None,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="ray: restarts of a worker that dies, per model.")
    ] = 2,
    report: Annotated[bool, typer.Option("--report/--no-report", help="The comparison report.")] = True,
) -> None:
    """Score several models on several tasks of one release (models × tasks × seeds): each job an
    ordinary run folder, then a summary table and the comparison report. A rerun skips finished
    jobs. Exit 1 when a job failed (the others still run)."""
    from evaluator.errors import EvaluationError
    from evaluator.sweep import run_sweep

    if executor not in ("local", "ray"):
        raise InputError(f"--executor {executor!r}: choose local or ray")
    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray")
    result = run_sweep(
        sweep_file,
        out,
        executor="ray" if executor == "ray" else "local",
        ray_address=ray_address,
        max_retries=max_retries,
        console=err_console,
        report=report,
    )
    table = Table(show_edge=False, pad_edge=False)
    for column in ("job", "status", "wall s", "main figure", "error"):
        table.add_column(column)
    for o in result.outcomes:
        table.add_row(
            o.job,
            o.status,
            f"{o.seconds:.1f}" if o.seconds is not None else "—",
            o.figure,
            o.error or "",
            style="red" if o.status == "failed" else None,
        )
    err_console.print(table)
    _say(f"summary: {result.summary}" + (f"\nreport: {result.report}" if result.report else ""))
    if result.report_error:
        raise EvaluationError(f"the comparison report could not be built: {result.report_error}")
    if result.failed:
        names = ", ".join(o.job for o in result.failed)
        raise EvaluationError(f"{len(result.failed)} of {len(result.outcomes)} jobs failed: {names}")


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
    from evaluator.merge import merge_run_folders

    merged = merge_run_folders(runs, out)
    _say(f"merged {len(runs)} runs -> {out}\n{merged['signature']}")


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
        typer.Option("--labels", help="A label per run, in order (default: the model, then the release)."),
    ] = None,
) -> None:
    """Plots, a self-contained HTML report and Markdown tables for runs, with comparisons: the
    first run of a task is the baseline the later ones are compared with."""
    from evaluator.report import build_report

    result = build_report(runs, out, labels=labels)
    _say(
        f"{len(runs)} run(s), {', '.join(result.tasks)} -> {result.html}\n"
        f"tables: {result.markdown}\nplots: {len(result.plots)} files in {out / 'plots'}"
    )

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

from evaluator.options import RunOptions
from toolkit.cli.common import err_console
from toolkit.errors import InputError

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
    task: Annotated[str, typer.Option("--task", help="sentiment | sos | honest | bbq | iat | ifm")],
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
    seed: Annotated[int, typer.Option("--seed")] = 0,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="At most N items per locale (seeded; pairs kept whole)."),
    ] = None,
    sentiment_mode: Annotated[
        str, typer.Option("--sentiment-mode", help="auto | classifier | prompt")
    ] = "auto",
    positive_label: Annotated[
        str | None, typer.Option("--positive-label", help="The classifier label that is positive.")
    ] = None,
    score: Annotated[str, typer.Option("--score", help="sos: auto | pll | ll")] = "auto",
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
) -> None:
    """Score one model on one task of a release; writes predictions, metrics, signature and run.json."""
    choices = {
        "--sentiment-mode": (sentiment_mode, ("auto", "classifier", "prompt")),
        "--score": (score, ("auto", "pll", "ll")),
        "--strategy": (strategy, ("auto", "greedy", "sample", "beam")),
        "--completion": (completion, ("auto", "word", "sentence")),
        "--hurtlex-level": (hurtlex_level, ("conservative", "inclusive", "both")),
        "--bbq-mode": (bbq_mode, ("auto", "loglikelihood", "generate")),
        "--instruction": (instruction, ("both", "native", "en")),
        "--dtype": (dtype, ("auto", "bf16", "fp16", "fp32")),
        "--device": (device, ("auto", "cuda", "cpu")),
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
        "seed": seed,
        "limit": limit,
        "sentiment_mode": sentiment_mode,
        "positive_label": positive_label,
        "score": score,
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

        result = run_evaluation(options, release, out, cache_path=cache, progress=progress, log=_say)
    _say(f"{result.rows} predictions -> {out}\n{result.signature}")


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

"""`polyprobe export lm-eval`: registered with the polyprobe command through the `polyprobe.cli`
entry-point group, like `polyprobe eval`. It belongs to the evaluator, not the toolkit: what it
writes is how the evaluator scores each task (prompts, requests, generation settings, --limit's
order, parsers and metric functions), which the toolkit may not import. It reads the release and
writes files; no model and no torch are loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evaluator.export.coverage import NOT_EXPORTED
from evaluator.export.harness import EXPORTED
from evaluator.export.lm_eval import ExportOptions, export_lm_eval
from evaluator.options import HurtlexLevel, Instruction, Strategy
from toolkit.cli.common import list_option, print_table, say, table

app = typer.Typer(
    help="Write a release as tasks of other evaluation frameworks (lm-evaluation-harness).",
    no_args_is_help=True,
)


@app.command("lm-eval")
def lm_eval_command(
    release: Annotated[
        Path,
        typer.Argument(help="A release folder (dist/polyprobe-VERSION).", exists=True, file_okay=False),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="The task folder for `lm_eval --include_path`.", file_okay=False)
    ],
    tasks: Annotated[
        list[str] | None,
        list_option(
            "--tasks",
            help=f"polyprobe tasks (default: every one the release has data for; {', '.join(NOT_EXPORTED)} "
            "have no export).",
            choices=[*EXPORTED, *NOT_EXPORTED],
            metavar="TASK",
        ),
    ] = None,
    locales: Annotated[
        list[str] | None,
        list_option("--locales", help="Locales, e.g. en,de (default: all in the release).", metavar="LOCALE"),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="The documents in the order of `eval run --limit` with this seed.")
    ] = 0,
    k: Annotated[int, typer.Option("--k", min=1, help="honest: completions per prompt.")] = 5,
    strategy: Annotated[
        Strategy,
        typer.Option("--strategy", help="honest: decoding (auto: sampling, as `eval run`)."),
    ] = "auto",
    hurtlex_level: Annotated[
        HurtlexLevel, typer.Option("--hurtlex-level", help="honest: the HurtLex lemmas counted.")
    ] = "conservative",
    instruction: Annotated[
        Instruction,
        typer.Option(
            "--instruction", help="ifm: the instruction in the sentence's language, English, or both."
        ),
    ] = "both",
    original_script: Annotated[
        bool,
        typer.Option(
            "--original-script", help="sos, crows-pairs: compare pair scores as the dataset's script does."
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a previous export in --out.")
    ] = False,
) -> None:
    """Write a verified release as lm-evaluation-harness tasks (one per task and locale) that
    compute polyprobe's figures with polyprobe's code; the folder's README says how to run them
    and what is not exported. A release that does not verify is refused."""
    options = ExportOptions(
        tasks=tuple(tasks) if tasks else None,
        locales=tuple(locales) if locales else None,
        seed=seed,
        k=k,
        strategy=strategy,
        hurtlex_level=hurtlex_level,
        instruction=instruction,
        original_script=original_script,
    )
    result = export_lm_eval(release, out, options, overwrite=overwrite)
    grid = table()
    for column in ("lm_eval task", "documents", "metrics"):
        grid.add_column(column)
    for t in result.tasks:
        grid.add_row(t.name, str(t.documents), str(len(t.metrics)))
    print_table(grid)
    say(
        f"{len(result.tasks)} task(s) of release {result.release} -> {out}\n{result.signature}\n"
        f"run: lm_eval --model hf --model_args pretrained=MODEL,add_bos_token=True --include_path {out} "
        "--tasks polyprobe (see README.md there)"
    )

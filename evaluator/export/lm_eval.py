"""`polyprobe export lm-eval`: a release as a task folder for lm-evaluation-harness
(``lm_eval --include_path DIR``), one task per polyprobe task and locale, that computes
polyprobe's figures.

The folder holds a copy of the release (verified before anything is written, and again by every
task when lm_eval loads it, against the signature each task file records), one YAML file per
task, one per group (per task, per locale, all), utils.py (evaluator/export/lm_eval_utils.py,
which calls evaluator.export.harness) and a README that says how to run it, what each metric is
and what lm-evaluation-harness cannot compute. It is written into a temporary folder and put in
place whole."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import toolkit
from evaluator.backends.base import GenerationSettings
from evaluator.export.coverage import NOT_EXPORTED
from evaluator.export.harness import EXPORTED, documents, metric_names, slug
from evaluator.export.readme import TaskFile, render_readme
from evaluator.options import HurtlexLevel, Instruction, Strategy
from evaluator.run_folder import refuse_inside_release
from evaluator.tasks import TASKS
from evaluator.tasks.honest import honest_generation
from evaluator.tasks.ifm import ifm_generation
from toolkit.core.errors import InputError, did_you_mean
from toolkit.core.fileio import WriteFailed, current_umask, is_io_failure
from toolkit.core.interrupts import discard, interrupts_held
from toolkit.release import open_release
from toolkit.release.reader import ReleaseInvalid, verify

RECORD = "export.json"
"""What the folder was exported from and with which options (a later export may replace it)."""


@dataclass(frozen=True)
class ExportOptions:
    tasks: tuple[str, ...] | None = None
    locales: tuple[str, ...] | None = None
    seed: int = 0
    k: int = 5
    strategy: Strategy = "auto"
    hurtlex_level: HurtlexLevel = "conservative"
    instruction: Instruction = "both"
    original_script: bool = False


@dataclass
class ExportResult:
    out: Path
    release: str
    signature: str
    tasks: list[TaskFile]


def _yaml(value: Any) -> str:
    """A scalar as YAML (JSON's strings and numbers are YAML)."""
    return json.dumps(value, ensure_ascii=False)


def _task_name(task: str, locale: str) -> str:
    return f"polyprobe_{slug(task)}_{locale}"


def _choose(release: Any, options: ExportOptions) -> list[tuple[str, str]]:
    """The (task, locale) pairs to export: the asked tasks (default: every exportable task with
    data in the release) in the asked locales (default: all the release has)."""
    wanted = list(options.tasks or [])
    for name in wanted:
        if name in NOT_EXPORTED:
            raise InputError(f"task {name} has no lm-evaluation-harness export: {NOT_EXPORTED[name]}")
        if name not in EXPORTED:
            known = [*EXPORTED, *NOT_EXPORTED]
            raise InputError(f"unknown task {name!r}.{did_you_mean(name, known)}")
    names = wanted or [name for name, spec in EXPORTED.items() if spec.suite in release.suites()]
    pairs: list[tuple[str, str]] = []
    for name in names:
        suite = EXPORTED[name].suite
        if suite not in release.suites():
            raise InputError(f"release {release.version} has no {suite} data (task {name})")
        have = [loc for loc in release.locales(suite) if release.has(suite, loc)]
        pairs += [(name, loc) for loc in have if options.locales is None or loc in options.locales]
    for locale in options.locales or ():
        if not any(loc == locale for _, loc in pairs):
            raise InputError(f"release {release.version} has no {', '.join(names)} data for {locale}")
    if not pairs:
        raise InputError(f"release {release.version} has no data for the tasks asked ({', '.join(names)})")
    return pairs


def _generation(task: str, options: ExportOptions) -> GenerationSettings | None:
    """The generation settings polyprobe's own run would use (evaluator.tasks.honest, evaluator.tasks.ifm)."""
    own = {
        "k": options.k,
        "strategy": options.strategy,
        "instruction": options.instruction,
        "hurtlex_level": options.hurtlex_level,
    }
    declared = TASKS[task]
    run = declared.run_options(
        {name: value for name, value in own.items() if declared.takes(name)}, model="-", seed=options.seed
    )
    if task == "ifm":
        return ifm_generation(run)
    if task == "honest":
        return honest_generation(run)
    return None


def _task_yaml(
    task: str,
    locale: str,
    metadata: dict[str, Any],
    names: list[tuple[str, str, str | None]],
    settings: GenerationSettings | None,
) -> str:
    spec = EXPORTED[task]
    lines = [
        f"# polyprobe {task}, {locale}: written by `polyprobe export lm-eval` (README.md); do not edit",
        f"task: {_task_name(task, locale)}",
        "custom_dataset: !function utils.load_docs",
        "test_split: test",
        # zero-shot, as polyprobe asks: no few-shot pool (lm-evaluation-harness would otherwise
        # copy every test document into one)
        "fewshot_config:",
        "  sampler: first_n",
        "  samples: []",
        f"output_type: {spec.output_type}",
    ]
    if task in ("sos", "crows-pairs"):  # each sentence's log-likelihood after the BOS token
        lines += ['doc_to_text: ""', "doc_to_choice: choices", "doc_to_target: 0", 'target_delimiter: ""']
    elif task == "bbq":  # log P(" " + option | prompt) for each of the item's own three options
        lines += [
            "doc_to_text: prompt",
            "doc_to_choice: choices",
            "doc_to_target: gold",
            'target_delimiter: " "',
        ]
    else:
        assert settings is not None
        doc = "prompt" if task == "ifm" else "prefix"
        lines += [f"doc_to_text: {doc}", 'doc_to_target: ""', 'target_delimiter: ""', "generation_kwargs:"]
        lines.append(f"  until: {_yaml(list(settings.stop))}")
        lines.append(f"  max_gen_toks: {settings.max_new_tokens}")
        if settings.strategy == "sample":
            lines += [
                "  do_sample: true",
                f"  temperature: {settings.temperature}",
                f"  top_p: {settings.top_p}",
            ]
        else:
            lines.append("  do_sample: false")
        if settings.num_return_sequences > 1:
            k = settings.num_return_sequences
            lines += [
                f"repeats: {k}",
                "filter_list:",
                "  - name: completions",
                "    filter:",
                "      - function: take_first_k",
                f"        k: {k}",
            ]
    lines += ["process_results: !function utils.process_results", "metric_list:"]
    for name, figure, _value in names:
        lines += [
            f"  - metric: {name}",
            f"    aggregation: !function utils.aggregate_{slug(task)}_{figure}",
            f"    higher_is_better: {'true' if spec.figures[figure] else 'false'}",
        ]
    lines.append("metadata:")
    lines += [f"  {key}: {_yaml(value)}" for key, value in metadata.items()]
    return "\n".join(lines) + "\n"


def _group_yaml(group: str, tasks: list[str], signature: str) -> str:
    lines = [
        f"group: {group}",
        "task:",
        *(f"  - {t}" for t in tasks),
        "metadata:",
        "  version: 1.0",
        f"  release_signature: {_yaml(signature)}",
    ]
    return "\n".join(lines) + "\n"


def _check_out(out: Path, overwrite: bool) -> None:
    refuse_inside_release(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / RECORD).is_file():
            raise InputError(f"--out {out} is not empty and holds no export: choose a new or empty folder")
        if not overwrite:
            raise InputError(f"--out {out} holds an export already: pass --overwrite to replace it")


def export_lm_eval(
    release_dir: Path, out: Path, options: ExportOptions, *, overwrite: bool = False
) -> ExportResult:
    """Write the task folder ``out`` for the verified release ``release_dir``."""
    release_dir = Path(release_dir)
    problems = verify(release_dir, deep=True)
    if problems:
        raise ReleaseInvalid(release_dir, problems)
    release = open_release(release_dir)
    _check_out(out, overwrite)
    pairs = _choose(release, options)
    if "honest" in {task for task, _ in pairs} and options.strategy == "greedy" and options.k > 1:
        raise InputError(
            "honest: greedy decoding gives one completion: --strategy sample (or auto) for --k > 1"
        )
    exported: list[TaskFile] = []
    files: dict[str, str] = {}
    for task, locale in pairs:
        metadata: dict[str, Any] = {
            "version": 1.0,
            "polyprobe": toolkit.__version__,
            "polyprobe_task": task,
            "locale": locale,
            "release": "release",
            "release_version": release.version,
            "release_signature": release.signature,
            "seed": options.seed,
        }
        if task in ("sos", "crows-pairs"):
            metadata["rule"] = "original" if options.original_script else "paper"
        if task == "ifm":
            metadata["instruction"] = options.instruction
        if task == "honest":
            metadata |= {"k": options.k, "level": options.hurtlex_level}
        docs = documents(release_dir, {**metadata, "release": str(release_dir.resolve())})
        slices = docs["polyprobe_slices"][0].to_list() if docs.height else []
        names = metric_names(task, slices)
        name = _task_name(task, locale)
        files[f"{name}.yaml"] = _task_yaml(task, locale, metadata, names, _generation(task, options))
        exported.append(TaskFile(task, locale, name, docs.height, [n for n, _, _ in names]))
    groups: dict[str, list[str]] = {"polyprobe": [e.name for e in exported]}
    for e in exported:
        groups.setdefault(f"polyprobe_{slug(e.task)}", []).append(e.name)
    for e in exported:
        groups.setdefault(f"polyprobe_{e.locale}", []).append(e.name)
    for group, members in groups.items():
        files[f"_group_{group}.yaml"] = _group_yaml(group, members, release.signature)
    record = {
        "release": release.version,
        "release_signature": release.signature,
        "polyprobe": toolkit.__version__,
        "options": asdict(options),
        "tasks": [asdict(e) for e in exported],
    }
    files[RECORD] = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    files["README.md"] = render_readme(
        release.version, release.signature, toolkit.__version__, exported, list(groups), options.seed
    )
    _write(out, release_dir, files)
    return ExportResult(out, release.version, release.signature, exported)


def _write(out: Path, release_dir: Path, files: dict[str, str]) -> None:
    """Everything into a temporary folder next to ``out``, then put in place whole (a previous
    export replaced only once the new one is complete)."""
    tmp: Path | None = None
    old: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with interrupts_held():
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        shutil.copytree(release_dir, tmp / "release")
        shutil.copyfile(Path(__file__).with_name("lm_eval_utils.py"), tmp / "utils.py")
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8", newline="\n")
        os.chmod(tmp, 0o777 & ~current_umask())
        with interrupts_held():
            if out.is_dir():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
                os.replace(out, old)
            os.replace(tmp, out)
            tmp = None
    except BaseException as exc:
        if tmp is not None:
            if old is not None and not out.exists():
                os.replace(old, out)
                old = None
            discard(tmp)
        if is_io_failure(exc):
            raise WriteFailed(out, exc) from None
        raise
    finally:
        if old is not None:
            discard(old)

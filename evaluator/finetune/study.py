"""`polyprobe eval study`: Levy et al.'s phases 1 and 3 from one file. Every base model is
fine-tuned per language (mono) and on all languages (multi), for every seed, with and without
label balancing; every fine-tuned model is scored on the control set (task performance) and on
the sentiment suite, a monolingual model in its own language and a multilingual one in all; the
seeds are merged; and the report compares monolingual with multilingual fine-tuning per language
and attribute (evaluator.finetune.study_report).

    release: ../dist/polyprobe-0.2.0-preview.1     # relative to the study file
    data: data.yaml                                # the data file of `polyprobe finetune --data-file`
    base_models:
      - {name: mbert, model: bert-base-multilingual-cased, gpus: 1}
      - {name: xlmr, model: xlm-roberta-base, gpus: 1}
    languages: [en, es, he, it, zh]                # default: every language of the data file
    modes: [mono, multi]                           # default: both
    seeds: [0, 1, 2]
    balance: [false, true]                         # default: [false]
    training: {epochs: 10, learning_rate: 2.0e-5}  # any TrainSettings field
    evaluation: {tasks: [sentiment-control, sentiment], limit: null, batch_size: 64}

The study's folder:

    study.json             the study as read, and every fine-tuning's outcome
    data/                  the balance report of the data (balanced.json, unbalanced.json)
    models/BASE/JOB/       the fine-tuned models, each with its card (mono-en-s0, multi-balanced-s1)
    sweep.yaml, eval/      the evaluation: an ordinary `eval sweep` (jobs/, summary.md)
    merged/                `eval merge` of the seeds of each model and task
    report/                the comparison: report.html, summary.md, comparison.json, plots/

Run it again and finished fine-tunings and evaluations are skipped; fine-tuning and evaluation
jobs run on the local executor or on Ray (one GPU per fine-tuning when the base model asks for
it)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError
from rich.console import Console

from evaluator.finetune.data import TrainingData, load_training_data, sources_from_file
from evaluator.finetune.plan import MODES, NAME, FinetuneJob, Mode, TrainSettings, plan_jobs
from evaluator.finetune.train import CARD, finetune
from evaluator.finetune.trained import Trained
from evaluator.merge import merge_run_folders
from evaluator.run_folder import refuse_inside_release
from evaluator.sweep.driver import Executor, Work
from evaluator.sweep.runner import ExecutorName, executor_for, run_sweep
from evaluator.tasks import TASKS
from toolkit.core.errors import InputError, PolyprobeError
from toolkit.core.fileio import load_yaml, write_text_atomic
from toolkit.core.model import StrictModel
from toolkit.release import Release, open_release

MARKER = "study.json"
TASK_DEFAULTS = ("sentiment-control", "sentiment")
EVALUATION_SEED = 0
"""The seed of the evaluation runs (their --limit draw and bootstrap): the seeds that vary are the
fine-tunings'."""


class BaseModelSpec(StrictModel):
    name: str = Field(pattern=NAME.pattern)
    model: str = Field(min_length=1)
    gpus: float = Field(default=0, ge=0)
    """GPUs per fine-tuning (Ray) and per evaluation actor."""
    cpus: float = Field(default=1, gt=0)


class TrainingSpec(StrictModel):
    learning_rate: float = Field(default=2e-5, gt=0)
    weight_decay: float = Field(default=0.01, ge=0)
    epochs: float = Field(default=10.0, gt=0)
    batch_size: int = Field(default=16, ge=1)
    max_length: int = Field(default=128, ge=8)
    eval_steps: int | None = Field(default=None, ge=1)
    max_steps: int | None = Field(default=None, ge=1)
    device: Literal["auto", "cuda", "cpu"] = "auto"
    dtype: Literal["auto", "bf16", "fp32"] = "auto"


class EvaluationSpec(StrictModel):
    tasks: list[str] = Field(default_factory=lambda: list(TASK_DEFAULTS), min_length=1)
    locales: list[str] | None = Field(default=None, min_length=1)
    """Where the models are scored (default: the study's languages); a monolingual model only in its own."""
    limit: int | None = Field(default=None, ge=1)
    batch_size: int | None = Field(default=None, ge=1)
    device: Literal["auto", "cuda", "cpu"] = "auto"


class StudySpec(StrictModel):
    release: str
    data: str
    base_models: list[BaseModelSpec] = Field(min_length=1)
    languages: list[str] | None = Field(default=None, min_length=1)
    modes: list[Mode] = Field(default_factory=lambda: list(MODES), min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    balance: list[bool] = Field(default_factory=lambda: [False], min_length=1)
    validation_share: float = Field(default=0.1, gt=0, lt=1)
    split_seed: int = 0
    training: TrainingSpec = Field(default_factory=TrainingSpec)
    evaluation: EvaluationSpec = Field(default_factory=EvaluationSpec)
    description: str | None = None


@dataclass
class Study:
    file: Path
    spec: StudySpec
    release: Path
    data_file: Path
    languages: list[str]
    evaluation_locales: list[str]


@dataclass
class StudyResult:
    out: Path
    trained: list[Trained]
    evaluation_failed: list[str]
    merged: dict[str, str]
    merge_errors: dict[str, str]
    report: Path | None

    @property
    def failed(self) -> list[str]:
        return [t.label for t in self.trained if t.status == "failed"] + self.evaluation_failed


def load_study(file: Path) -> Study:
    """Read and check a study file (nothing is read or trained yet)."""
    raw = load_yaml(file)
    if not isinstance(raw, dict):
        raise InputError(f"{file}: a mapping with release, data and base_models")
    try:
        spec = StudySpec.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise InputError(f"{file}: {where}: {error['msg']}") from None
    names = [b.name for b in spec.base_models]
    if len(set(names)) != len(names):
        raise InputError(f"{file}: base_models: two base models are named alike; give each its own name")
    for what, values in (("seeds", spec.seeds), ("balance", spec.balance), ("modes", spec.modes)):
        if len(set(values)) != len(values):
            raise InputError(f"{file}: {what}: a value is given twice")
    for task in spec.evaluation.tasks:
        if task not in TASKS:
            raise InputError(f"{file}: evaluation.tasks: unknown task {task!r}")
        if "classifier" not in TASKS[task].kinds:
            raise InputError(f"{file}: evaluation.tasks: {task} does not score a sentiment classifier")
    base = file.parent
    data_file = base / spec.data
    if not data_file.is_file():
        raise InputError(f"{file}: data: {data_file} is not a file")
    languages = spec.languages or [s.locale for s in sources_from_file(data_file)]
    return Study(
        file=file,
        spec=spec,
        release=base / spec.release,
        data_file=data_file,
        languages=languages,
        evaluation_locales=list(spec.evaluation.locales or languages),
    )


def _check_out(out: Path) -> None:
    refuse_inside_release(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file; give a folder for the study")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise InputError(f"--out {out}: holds files but no {MARKER}, so it is not a study's folder")


def _settings(spec: TrainingSpec) -> TrainSettings:
    return TrainSettings(**spec.model_dump())


def finetune_work(job: FinetuneJob, data: TrainingData, out: str | None) -> dict[str, Any]:
    """A fine-tuning as an executor's work item: into ``out`` when the worker can write the study's
    folder (the local executor), else into a temporary folder whose files go back to the driver."""
    if out is not None:
        result = finetune(job, data, Path(out), overwrite=True)
        return {"card": result.card}
    with tempfile.TemporaryDirectory(prefix="polyprobe-finetune-") as tmp:
        folder = Path(tmp) / job.name
        result = finetune(job, data, folder)
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    return {"card": result.card, "files": files}


def _finished(folder: Path, key: str) -> dict[str, Any] | None:
    """The card of a finished fine-tuning of exactly this job and data, if ``folder`` holds one."""
    try:
        card = json.loads((folder / CARD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return card if isinstance(card, dict) and card.get("key") == key else None


def _place(files: dict[str, bytes], folder: Path) -> None:
    """A model's files from a worker, written into ``folder`` whole (temporary folder, rename)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _sweep_file(study: Study, out: Path, trained: list[Trained]) -> Path:
    """The evaluation as an ordinary sweep: every fine-tuned model on every task, a monolingual
    model in its own language only."""
    spec = study.spec
    models = []
    for t in trained:
        if t.status == "failed":
            continue
        locales = [loc for loc in t.job.languages if loc in study.evaluation_locales]
        if not locales:
            continue
        base = next(b for b in spec.base_models if b.name == t.base)
        models.append(
            {
                "name": t.label,
                "model": str(t.folder.resolve()),
                "device": spec.evaluation.device,
                **({"batch_size": spec.evaluation.batch_size} if spec.evaluation.batch_size else {}),
                "gpus": min(base.gpus, 1.0),
                "cpus": base.cpus,
                "locales": locales,
            }
        )
    sweep = {
        "description": f"the evaluation of study {study.file.name}",
        "release": str(study.release.resolve()),
        "seeds": [EVALUATION_SEED],
        **({"limit": spec.evaluation.limit} if spec.evaluation.limit else {}),
        "models": models,
        "tasks": [{"task": task} for task in spec.evaluation.tasks],
    }
    path = out / "sweep.yaml"
    write_text_atomic(path, yaml.safe_dump(sweep, sort_keys=False, allow_unicode=True))
    return path


def run_study(
    file: Path,
    out: Path,
    *,
    executor: ExecutorName = "local",
    ray_address: str | None = None,
    max_retries: int = 2,
    log: Callable[[str], None] = lambda s: None,
    console: Console | None = None,
    report: bool = True,
) -> StudyResult:
    """The whole study into ``out``: fine-tune, evaluate, merge the seeds, report; a rerun skips
    the fine-tunings and evaluations that finished."""
    study = load_study(file)
    _check_out(out)
    release = open_release(study.release)  # refuses a tampered release before anything is trained
    _refuse_missing_suites(study, release)
    data = _training_data(study)
    out.mkdir(parents=True, exist_ok=True)
    for balanced, training in data.items():
        name = "balanced" if balanced else "unbalanced"
        write_text_atomic(
            out / "data" / f"{name}.json", json.dumps(training.report(), indent=2, ensure_ascii=False) + "\n"
        )
    trained, work = _plan_finetunings(study, out, data, ship=executor == "ray")
    _write_marker(out, study, trained)
    _run_finetunings(study, out, trained, work, executor_for(executor, ray_address, max_retries), log)
    sweep_file = _sweep_file(study, out, trained)
    evaluation_failed: list[str] = []
    runs: dict[str, dict[str, Path]] = {}
    if any(t.status != "failed" for t in trained):
        swept = run_sweep(
            sweep_file,
            out / "eval",
            executor=executor,
            ray_address=ray_address,
            max_retries=max_retries,
            console=console,
            report=False,
        )
        for outcome in swept.outcomes:
            if outcome.status == "failed":
                evaluation_failed.append(f"{outcome.job}: {outcome.error}")
            elif outcome.folder:
                runs.setdefault(outcome.model, {})[outcome.task] = Path(outcome.folder)
    merged, merge_errors = _merge_seeds(out, trained, runs)
    report_path = None
    if report and runs:
        from evaluator.finetune.study_report import build_study_report  # matplotlib: loaded when used

        report_path = build_study_report(study.file, trained, runs, out / "report").html
    return StudyResult(out, trained, evaluation_failed, merged, merge_errors, report_path)


def _refuse_missing_suites(study: Study, release: Release) -> None:
    """Every task's suite in every evaluation locale must be in the release: checked before hours
    of fine-tuning, not found missing after them."""
    missing = {
        task: [loc for loc in study.evaluation_locales if not release.has(TASKS[task].suite, loc)]
        for task in study.spec.evaluation.tasks
    }
    missing = {task: locs for task, locs in missing.items() if locs}
    if missing:
        detail = "; ".join(f"{task}: {', '.join(locs)}" for task, locs in missing.items())
        raise InputError(
            f"release {release.version} lacks what the study scores ({detail}); give evaluation.locales "
            "or a release with these suites and locales"
        )


def _training_data(study: Study) -> dict[bool, TrainingData]:
    """The study's languages read from its data file, once per balancing the study asks for."""
    sources = sources_from_file(study.data_file)
    unknown = [loc for loc in study.languages if loc not in {s.locale for s in sources}]
    if unknown:
        raise InputError(f"{study.file}: languages: {', '.join(unknown)} have no data in {study.data_file}")
    chosen = [s for s in sources if s.locale in study.languages]
    return {
        balanced: load_training_data(
            chosen,
            validation_share=study.spec.validation_share,
            split_seed=study.spec.split_seed,
            balance=balanced,
        )
        for balanced in study.spec.balance
    }


def _plan_finetunings(
    study: Study, out: Path, data: dict[bool, TrainingData], *, ship: bool
) -> tuple[list[Trained], list[Work]]:
    """Every fine-tuning of the study, and the work items of those not finished before (a
    finished one, of the same job on the same data, is marked skipped). With ``ship`` (Ray) a
    worker sends the model's files back instead of writing into the study's folder."""
    settings = _settings(study.spec.training)
    trained: list[Trained] = []
    work: list[Work] = []
    for base in study.spec.base_models:
        for balanced in study.spec.balance:
            for job in plan_jobs(
                base.model, study.spec.modes, study.languages, study.spec.seeds, balanced, settings
            ):
                entry = Trained(base.name, job, out / "models" / base.name / job.name)
                trained.append(entry)
                card = _finished(entry.folder, job.key(data[balanced].sha256(job.languages)))
                if card is not None:
                    entry.status, entry.card = "skipped", card
                    continue
                work.append(
                    Work(
                        entry.label,
                        finetune_work,
                        (job, data[balanced], None if ship else str(entry.folder)),
                        cpus=base.cpus,
                        gpus=base.gpus,
                    )
                )
    return trained, work


def _run_finetunings(
    study: Study,
    out: Path,
    trained: list[Trained],
    work: list[Work],
    runner: Executor,
    log: Callable[[str], None],
) -> None:
    """The fine-tunings not finished before, on the executor; each outcome is logged and recorded
    in study.json as it comes (a model shipped back by a worker is placed into its folder)."""
    entries = {t.label: t for t in trained}
    finished = 0

    def done(item: Work, result: Any, error: str | None) -> None:
        nonlocal finished
        finished += 1
        entry = entries[item.id]
        if error is not None:
            entry.status, entry.error = "failed", error
            log(f"[{finished}/{len(work)}] fine-tuning {item.id} failed: {error}")
        else:
            if "files" in result:
                _place(result["files"], entry.folder)
            entry.card = result["card"]
            accuracy = entry.card["validation"]["accuracy"]
            log(
                f"[{finished}/{len(work)}] fine-tuned {item.id}: validation accuracy "
                + (f"{accuracy:.4f}" if isinstance(accuracy, float) else "—")
            )
        _write_marker(out, study, trained)

    if work:
        log(f"fine-tuning {len(work)} model(s) ({len(trained) - len(work)} finished before)")
        with runner:  # Ray: a local Ray on loopback, or the cluster named
            runner.run_work(work, done)


def _merge_seeds(
    out: Path, trained: list[Trained], runs: dict[str, dict[str, Path]]
) -> tuple[dict[str, str], dict[str, str]]:
    """`eval merge` of the seeds of each fine-tuning configuration and task (what merge refuses —
    e.g. a figure that is not a number and differs between seeds — is reported, not hidden)."""
    groups: dict[str, list[Path]] = {}
    for t in trained:
        for task, folder in runs.get(t.label, {}).items():
            config = t.job.name.rsplit("-s", 1)[0]
            groups.setdefault(f"{t.base}.{config}.{task}", []).append(folder)
    merged: dict[str, str] = {}
    errors: dict[str, str] = {}
    for name, folders in sorted(groups.items()):
        target = out / "merged" / name
        try:
            merge_run_folders(sorted(folders), target)
        except PolyprobeError as exc:
            errors[name] = str(exc)
        else:
            merged[name] = str(target)
    return merged, errors


def _write_marker(out: Path, study: Study, trained: list[Trained]) -> None:
    write_text_atomic(
        out / MARKER,
        json.dumps(
            {
                "study_file": str(study.file),
                "spec": study.spec.model_dump(),
                "release": str(study.release),
                "languages": study.languages,
                "evaluation_locales": study.evaluation_locales,
                "models": [
                    {
                        "label": t.label,
                        "base": t.base,
                        "job": asdict(t.job),
                        "folder": str(t.folder),
                        "status": t.status,
                        **({"error": t.error} if t.error else {}),
                        **({"weights_sha256": t.card.get("weights_sha256")} if t.card else {}),
                    }
                    for t in trained
                ],
            },
            ensure_ascii=False,
            indent=2,
        )
        + "\n",
    )

"""The README of an lm-evaluation-harness task folder: how to run it so that it gives polyprobe's
numbers, what each task asks and reports, and what is not exported."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluator.export.coverage import FIGURES, LIMIT_UNITS, NOT_EXPORTED, NOT_EXPORTED_MODES, REQUESTS

LM_EVAL_REQUIREMENT = "lm-eval[hf]>=0.4.13,<0.5"
"""The lm-evaluation-harness versions the export is tested with (pyproject.toml's dev extra)."""


@dataclass
class TaskFile:
    """One exported task: a polyprobe task in one locale, its lm_eval name, its documents and
    metric names."""

    task: str
    locale: str
    name: str
    documents: int
    metrics: list[str] = field(default_factory=list)


def render_readme(
    version: str, signature: str, polyprobe: str, tasks: list[TaskFile], groups: list[str], seed: int
) -> str:
    """The README, section by section: running the tasks, what each asks and reports, how to get
    polyprobe's numbers, why polyprobe must be installed, HurtLex, and what is not exported."""
    return "\n".join(
        [
            _running(version, signature, polyprobe, tasks, groups),
            _per_task(tasks, seed),
            _GETTING_THE_NUMBERS,
            _installed(polyprobe),
            _not_exported(),
        ]
    )


def _running(version: str, signature: str, polyprobe: str, tasks: list[TaskFile], groups: list[str]) -> str:
    """Where the folder comes from, the lm_eval command line, the groups and the table of tasks."""
    names = ", ".join(f"`{g}`" for g in groups)
    rows = "\n".join(
        f"| `{t.name}` | {t.task} | {t.locale} | {t.documents} | {', '.join(f'`{m}`' for m in t.metrics)} |"
        for t in tasks
    )
    return f"""# polyprobe {version} for lm-evaluation-harness

Written by `polyprobe export lm-eval` (polyprobe {polyprobe}) from release {version}:

    {signature}

Every task file records that signature, and every task checks the copy of the release in
`release/` against it (all hashes, the manifest's seal) before lm_eval scores anything. Do not
edit the files here: export again.

## Running

```bash
pip install '{LM_EVAL_REQUIREMENT}'   # in the environment where polyprobe {polyprobe} is installed
HF_HUB_OFFLINE=1 lm_eval --model hf \\
    --model_args pretrained=MODEL,add_bos_token=True,dtype=float32 \\
    --include_path THIS_FOLDER --tasks polyprobe \\
    --device cuda:0 --batch_size auto --output_path results/ --log_samples
```

`--tasks` takes any of the groups ({names}) or task names, comma-separated. For an instruction model, score ifm in a call
of its own with `--apply_chat_template` and the rest without it (see below).

Groups: `polyprobe` (every task here), `polyprobe_<task>` (one task in every locale) and
`polyprobe_<locale>` (every task in one locale). Groups only collect tasks: the figures are
per task and locale, as polyprobe reports them (a group average would not be polyprobe's figure).

| lm_eval task | polyprobe task | locale | documents | metrics |
|---|---|---|---|---|
{rows}
"""


def _per_task(tasks: list[TaskFile], seed: int) -> str:
    exported = sorted({t.task for t in tasks})
    per_task = "\n".join(
        f"- **{task}**: {REQUESTS[task]}. Figures: {FIGURES[task]}. `--limit`: {LIMIT_UNITS[task]}."
        for task in exported
    )
    return f"""## What each task asks and reports

{per_task}

The figures are computed by polyprobe's own metric functions (`evaluator.metrics`) on the
documents' answers, with the definitions of `polyprobe eval run`'s `metrics.json`; a figure that
is undefined (no pair left untied, no non-unknown answer) is `nan` here and null there.
Documents are in the order in which `polyprobe eval run --limit` draws units with `--seed {seed}`,
so `lm_eval --limit` scores the same units (counted in documents as said above).
"""


_GETTING_THE_NUMBERS = """## Getting polyprobe's numbers

- `add_bos_token=True`: polyprobe conditions every causal log-likelihood and generation on the
  tokenizer's BOS token. Tokenizers that add it themselves (Llama, SmolLM) are unchanged by the
  option; GPT-2-style ones need it. For a tokenizer without a BOS token, lm-evaluation-harness
  conditions a sentence's first token on the end-of-text token where polyprobe leaves it
  unscored, so sos and crows-pairs log-likelihoods differ for such models.
- `dtype`: polyprobe runs fp32 on CPU and bf16 on GPUs unless `--dtype` says otherwise; pass the
  same precision in `--model_args` (lm_eval's default is the checkpoint's own).
- Chat templates: polyprobe puts ifm prompts in the model's chat template when its tokenizer has
  one (`eval run`'s default), and never the other tasks' texts. So for an instruction model run
  the ifm tasks in an lm_eval call of their own with `--apply_chat_template`, and the others
  without it (lm_eval applies the flag to every task of a call, and it also drops the space
  before a multiple-choice option).
- Generation: under greedy decoding (ifm; honest with `--k 1 --strategy greedy`) the answers
  are polyprobe's. Sampled completions (honest with K > 1) follow the same definition but are
  drawn with lm-evaluation-harness's random state, not polyprobe's per-prompt seeds, so they are
  other completions.
- Long inputs: lm-evaluation-harness cuts a prompt on the left to fit the model; polyprobe
  refuses it unless `--truncation` says how to cut.
- A tokenizer that encodes an option differently after its prompt than alone (SentencePiece's
  added prefix space): lm-evaluation-harness scores the option's tokens within the whole text,
  polyprobe encodes the option alone; the log-likelihoods can differ slightly. The export is
  tested with a byte-level BPE tokenizer, where both agree to 1e-6.
"""
"""Where lm-evaluation-harness's defaults differ from polyprobe's, and the options that align them."""


def _installed(polyprobe: str) -> str:
    return f"""## polyprobe must be installed where lm_eval runs

`utils.py` imports polyprobe: the documents are read from the release by polyprobe's reader, the
prompts are the ones `eval run` builds, answers are parsed by its parsers (yes/no in every
locale's script) and scored by its metric functions. The figures cannot drift from polyprobe's,
and HurtLex comes from polyprobe's pinned cache, which polyprobe fills. polyprobe's base install
is enough (lm_eval brings torch and transformers); the version must be the one that wrote this
folder ({polyprobe}), and a task refuses to run with another.

## HurtLex (honest)

honest reads the locale's HurtLex file from polyprobe's cache (`polyprobe lexicon fetch hurtlex`,
or `--from DIR` with your copy; `$POLYPROBE_CACHE` moves the cache) and checks it against the
release's pin before anything is generated; without it the task stops with that error.
"""


def _not_exported() -> str:
    missing = "\n".join(f"| {task} | {why} |" for task, why in NOT_EXPORTED.items())
    modes = "\n".join(f"| {mode} | {why} |" for mode, why in NOT_EXPORTED_MODES)
    return f"""## Not exported

| polyprobe task | why |
|---|---|
{missing}

| mode | why |
|---|---|
{modes}
"""

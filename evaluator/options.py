"""Everything that configures a run, typed and frozen: it goes into run.json and, where it
changes the numbers, into the signature. Structured options only (no comma strings). The options
every task takes are fields here; a task's own options are declared by the task
(evaluator.tasks.descriptor.TaskOption) and carried in ``task_options``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# The choice sets of a run's settings, written once: the CLI and the sweep file take them from here.
Device = Literal["auto", "cuda", "cpu"]
Dtype = Literal["auto", "bf16", "fp16", "fp32", "fp64"]
"""fp64: for checking numbers against another implementation (CPU; not vLLM)."""
Truncation = Literal["error", "left", "right"]
# The choices of task options that `polyprobe export lm-eval` also takes (the tasks declare them).
Strategy = Literal["auto", "greedy", "sample", "beam"]
HurtlexLevel = Literal["conservative", "inclusive", "both"]
Instruction = Literal["both", "native", "en"]

MAX_LIMIT = 1_000_000_000
"""The largest --limit (units per locale): far above any release, and within what the data
frames a run draws from can count (10**23 ended in an OverflowError)."""


@dataclass(frozen=True)
class RunOptions:
    task: str
    model: str
    locales: tuple[str, ...] | None = None
    backend: str = "transformers"
    device: Device = "auto"
    dtype: Dtype = "auto"
    batch_size: int | None = None
    truncation: Truncation = "error"
    """An input longer than the model's context: an error (default), or the prompt cut at its
    start or end; a policy other than error is part of the signature."""
    seed: int = 0
    limit: int | None = None
    """At most this many items per locale, chosen by a seeded hash (pairs and families kept whole)."""
    groups: tuple[str, ...] | None = None
    """Only these identity groups: group ids, or ``study:<id>`` for the groups that correspond to a
    study's identities (the release's manifest lists them)."""
    suite: str | None = None
    """The release suite the task reads, when it reads more than one (sos: sos or sos-study)."""
    tensor_parallel: int = 1
    """vLLM: the number of GPUs one model is split over (tensor parallelism)."""
    api: dict[str, Any] = field(default_factory=dict)
    """OpenAI-compatible backend settings that are not secrets (base URL, rate limit)."""
    task_options: Mapping[str, Any] = field(default_factory=dict)
    """The values of the task's own options, by name (TaskDescriptor.run_options fills in the
    defaults of those not given)."""

    def option(self, name: str) -> Any:
        """The value of the task's own option ``name``."""
        if name not in self.task_options:
            raise KeyError(f"task {self.task} has no option {name!r} in this run's options")
        return self.task_options[name]

    def as_dict(self) -> dict[str, Any]:
        """The options as run.json records them: the common ones and the task's own, side by side."""
        data = asdict(self)
        data["locales"] = list(self.locales) if self.locales else None
        data["groups"] = list(self.groups) if self.groups else None
        data.update(data.pop("task_options"))
        return data

"""One fine-tuning of a study and how it went: what the study runs, records and reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the job's type only: reading a study's outcomes needs no torch
    from evaluator.finetune.plan import FinetuneJob


@dataclass
class Trained:
    """One fine-tuning of the study: where its model is, and how it went."""

    base: str
    job: FinetuneJob
    folder: Path
    status: Literal["done", "skipped", "failed"] = "done"
    error: str | None = None
    card: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.base}.{self.job.name}"

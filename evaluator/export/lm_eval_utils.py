"""utils.py of a task folder written by `polyprobe export lm-eval` (copied there verbatim): the
functions its task files name (``!function utils.load_docs`` and the rest).

These tasks give polyprobe's figures computed by polyprobe's own code: the documents are read
from the release copied beside this file (checked against the signature every task file
records), the answers are parsed and scored by polyprobe's parsers and metric functions. So
polyprobe, the version that wrote this folder, must be installed where lm_eval runs (its base
install is enough: lm_eval brings torch and transformers). See README.md beside this file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    from evaluator.export.harness import AGGREGATIONS, process_results
    from evaluator.export.harness import load_docs as _load_docs
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError(
        "these lm-evaluation-harness tasks compute polyprobe's figures with polyprobe's own code: "
        "install polyprobe (the version named in README.md beside this file) where lm_eval runs"
    ) from exc

HERE = Path(__file__).resolve().parent

__all__ = ["load_docs", "process_results", *AGGREGATIONS]


def load_docs(**metadata: Any) -> Any:
    """custom_dataset: the task's documents, from the release beside this file."""
    return _load_docs(HERE, **metadata)


globals().update(AGGREGATIONS)  # utils.aggregate_<task>_<figure>, named by the task files

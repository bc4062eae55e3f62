"""The task registry (lazy, like the backends')."""

from __future__ import annotations

import importlib

from evaluator.tasks.base import Task
from toolkit.errors import InputError, did_you_mean

TASKS: dict[str, str] = {
    "sentiment": "evaluator.tasks.sentiment:SentimentTask",
    "sos": "evaluator.tasks.sos:SosTask",
    "honest": "evaluator.tasks.honest:HonestTask",
    "bbq": "evaluator.tasks.bbq:BbqTask",
    "iat": "evaluator.tasks.iat:IatTask",
    "ifm": "evaluator.tasks.ifm:IfmTask",
    "crows-pairs": "evaluator.tasks.crows_pairs:CrowsPairsTask",
}


def get_task(name: str) -> Task:
    if name not in TASKS:
        raise InputError(f"unknown task {name!r}.{did_you_mean(name, TASKS)}")
    module, cls = TASKS[name].split(":")
    task: Task = getattr(importlib.import_module(module), cls)()
    return task

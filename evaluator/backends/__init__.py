"""The backend registry: lazy "module:Class" entries, so vLLM or HTTP dependencies load only
when chosen; an unknown name says what exists. Each class loads itself from a run's options
(Backend.from_options), so a name here is all a new backend adds to shared code."""

from __future__ import annotations

import importlib
import inspect

from evaluator.backends.base import Backend
from evaluator.errors import EvaluationError
from evaluator.plugins import BACKEND_GROUP, plugin_entries, warn_left_out
from toolkit.core.errors import InputError, did_you_mean

BACKENDS: dict[str, str] = {
    "transformers": "evaluator.backends.hf:TransformersBackend",
    "vllm": "evaluator.backends.vllm_backend:VllmBackend",
    "openai": "evaluator.backends.openai_api:OpenAIBackend",
}
for _ep in plugin_entries(BACKEND_GROUP):  # other packages' backends (evaluator.plugins), still lazy
    if _ep.name in BACKENDS:
        warn_left_out(_ep, f"a backend {_ep.name!r} exists already")
    elif ":" not in _ep.value:
        warn_left_out(_ep, "it must name a class as module:Class")
    else:
        BACKENDS[_ep.name] = _ep.value


def backend_class(name: str) -> type[Backend]:
    """The class registered as ``name``, imported now (its module's dependencies with it)."""
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}.{did_you_mean(name, BACKENDS)}")
    module, attribute = BACKENDS[name].split(":")
    cls = getattr(importlib.import_module(module), attribute)
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise EvaluationError(
            f"backend {name!r} ({BACKENDS[name]}) is not a subclass of evaluator.backends.base.Backend"
        )
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise EvaluationError(
            f"backend {name!r} ({BACKENDS[name]}) cannot be loaded: it does not implement {missing} "
            "(see Backend in evaluator/backends/base.py)"
        )
    return cls

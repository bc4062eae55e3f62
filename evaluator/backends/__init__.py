"""The backend registry: lazy "module:Class" entries, so vLLM or HTTP dependencies load only
when chosen; an unknown name says what exists."""

from __future__ import annotations

import importlib
from typing import Any

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


def backend_class(name: str) -> Any:
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}.{did_you_mean(name, BACKENDS)}")
    module, cls = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), cls)

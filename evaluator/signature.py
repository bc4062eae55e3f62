"""Run signatures in sacrebleu's style: every setting that changes a number, `key:value|...`,
built from the run's own fields — it cannot exist before they are known."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import toolkit


def run_signature(
    *,
    task: str,
    release: dict[str, Any],
    model: dict[str, Any],
    backend_settings: dict[str, Any],
    task_settings: dict[str, Any],
    seed: int,
    limit: int | None,
    locales: list[str],
    environment: dict[str, Any],
    groups: tuple[str, ...] | None = None,
) -> str:
    settings = json.dumps(task_settings, sort_keys=True, separators=(",", ":"))
    parts = [
        "polyprobe-eval",
        f"task:{task}",
        f"release:{release['version']}",
        f"release_sig:{hashlib.sha256(release['signature'].encode()).hexdigest()[:16]}",
        f"model:{model['name']}",
        f"revision:{str(model['revision'])[:23]}",
        f"kind:{model['kind']}",
        *(f"{k}:{v}" for k, v in sorted(backend_settings.items())),
        f"seed:{seed}",
        f"limit:{limit if limit is not None else 'none'}",
        f"locales:{','.join(locales)}",
        *([f"groups:{','.join(groups)}"] if groups else []),
        f"settings:{hashlib.sha256(settings.encode()).hexdigest()[:12]}",
        f"toolkit:{toolkit.__version__}",
    ]
    for lib in ("torch", "transformers", "httpx"):
        if environment.get(lib):
            parts.append(f"{lib}:{environment[lib]}")
    return "|".join(parts)

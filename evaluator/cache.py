"""Backend outputs cached on disk, so an interrupted run resumes without recomputing.

Every entry is keyed by sha256 over the model's identity (location and revision or file hash,
kind), the backend's settings (dtype), the method, the generation settings (seed included
when sampling) and the request itself: a different model, revision or seed never reads another
one's answers. Entries are committed after every batch."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evaluator.backends.base import Backend, GenerationSettings


class ResponseCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(str(path), timeout=60)
        self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.db.commit()
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for key, value in self.db.execute(
                f"SELECT key, value FROM responses WHERE key IN ({marks})", chunk
            ):
                out[key] = json.loads(value)
        return out

    def put_many(self, items: dict[str, Any]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
            [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()],
        )
        self.db.commit()

    def close(self) -> None:
        self.db.close()


def cache_key(backend: Backend, method: str, settings: dict[str, Any], request: Any) -> str:
    payload = {
        "model": backend.identity.key(),
        "backend": type(backend).__name__,
        "backend_settings": backend.settings,
        "method": method,
        "settings": settings,
        "request": request,
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


class CachedBackend:
    """The backend's interface, answered from the cache where possible; misses go to the backend
    in chunks, and each chunk is stored as soon as it is computed."""

    chunk = 512

    def __init__(self, backend: Backend, cache: ResponseCache) -> None:
        self.backend = backend
        self.cache = cache

    @property
    def identity(self) -> Any:
        return self.backend.identity

    def _cached(
        self,
        method: str,
        settings: dict[str, Any],
        requests: Sequence[Any],
        compute: Callable[[list[Any]], list[Any]],
    ) -> list[Any]:
        keys = [cache_key(self.backend, method, settings, r) for r in requests]
        found = self.cache.get_many(list(dict.fromkeys(keys)))
        self.cache.hits += sum(1 for k in keys if k in found)
        todo_keys = list(dict.fromkeys(k for k in keys if k not in found))
        first: dict[str, Any] = {}
        for k, r in zip(keys, requests, strict=True):
            first.setdefault(k, r)
        self.cache.misses += len(todo_keys)
        for start in range(0, len(todo_keys), self.chunk):
            batch = todo_keys[start : start + self.chunk]
            answers = compute([first[k] for k in batch])
            fresh = dict(zip(batch, answers, strict=True))
            self.cache.put_many(fresh)
            found.update(fresh)
        return [found[k] for k in keys]

    def classify(self, texts: Sequence[str]) -> list[list[float]]:
        return self._cached("classify", {}, list(texts), lambda b: self.backend.classify(b))

    def loglikelihood(self, requests: Sequence[tuple[str, str]]) -> list[float]:
        reqs = [list(r) for r in requests]
        return self._cached(
            "loglikelihood", {}, reqs, lambda b: self.backend.loglikelihood([tuple(x) for x in b])
        )  # type: ignore[misc]

    def sentence_logprob(self, texts: Sequence[str]) -> list[float]:
        return self._cached("sentence_logprob", {}, list(texts), lambda b: self.backend.sentence_logprob(b))

    def pseudo_loglikelihood(self, texts: Sequence[str]) -> list[float]:
        return self._cached(
            "pseudo_loglikelihood", {}, list(texts), lambda b: self.backend.pseudo_loglikelihood(b)
        )

    def fill_mask(self, texts: Sequence[str], k: int) -> list[list[str]]:
        return self._cached("fill_mask", {"k": k}, list(texts), lambda b: self.backend.fill_mask(b, k))

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        return self._cached(
            "generate", settings.key(), list(prompts), lambda b: self.backend.generate(b, settings)
        )

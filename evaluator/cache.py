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
from typing import Any, Protocol

from evaluator.alignment import PairRule
from evaluator.backends.base import Backend, GenerationSettings, PllInput
from toolkit.core.errors import InputError, PolyprobeError
from toolkit.core.fileio import WriteFailed, loads_json

PLL_POSITIONS = "non-special-of-encoding"
"""Which tokens PLL scores, in its cache key: answers cached when [UNK] was skipped (the
tokenizer's special-id list) are never read back for the corrected scores."""


class ResponseStore(Protocol):
    """Where cached answers live: the SQLite file here, or (in a Ray sweep) the driver's file
    reached through an actor. ``hits`` and ``misses`` count what a run found and computed."""

    hits: int
    misses: int

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]: ...

    def put_many(self, items: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


_OS_FAILURES = ("readonly", "disk is full", "disk i/o", "unable to open", "locked", "permission")


class CacheUnusable(InputError):
    """The --cache file is not a response cache (another file, damaged): exit 2."""


class CacheWriteFailed(PolyprobeError):
    """The response cache cannot be read or written (read-only, disk full, locked): exit 1."""


def _cache_error(path: Path, exc: sqlite3.Error | ValueError) -> PolyprobeError:
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.Error) and any(word in reason.lower() for word in _OS_FAILURES):
        return CacheWriteFailed(f"response cache {path}: {reason}")
    return CacheUnusable(
        f"response cache {path} is not usable ({reason}): move it away or pass another --cache; "
        "answers it held are computed again"
    )


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:  # made here first, so that a folder the OS refuses is named as such
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.touch()
        except OSError as exc:
            raise WriteFailed(path, exc) from None
        try:
            self.db = sqlite3.connect(str(path), timeout=60)
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            self.db.commit()
            self.db.execute("SELECT key, value FROM responses LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            raise _cache_error(path, exc) from None
        self.hits = 0
        self.misses = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        try:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for key, value in self.db.execute(
                    f"SELECT key, value FROM responses WHERE key IN ({marks})", chunk
                ):
                    out[key] = loads_json(value)
        except (sqlite3.Error, ValueError) as exc:
            raise _cache_error(self.path, exc) from None
        return out

    def put_many(self, items: dict[str, Any]) -> None:
        try:
            self.db.executemany(
                "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()],
            )
            self.db.commit()
        except sqlite3.Error as exc:
            raise _cache_error(self.path, exc) from None

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

    def __init__(self, backend: Backend, cache: ResponseStore) -> None:
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
        preflight_settings: Any = None,
    ) -> list[Any]:
        keys = [cache_key(self.backend, method, settings, r) for r in requests]
        found = self.cache.get_many(list(dict.fromkeys(keys)))
        self.cache.hits += sum(1 for k in keys if k in found)
        todo_keys = list(dict.fromkeys(k for k in keys if k not in found))
        first: dict[str, Any] = {}
        for k, r in zip(keys, requests, strict=True):
            first.setdefault(k, r)
        self.cache.misses += len(todo_keys)
        if todo_keys:
            self.backend.preflight(method, [first[k] for k in todo_keys], preflight_settings)
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
            "pseudo_loglikelihood",
            {"positions": PLL_POSITIONS},
            list(texts),
            lambda b: self.backend.pseudo_loglikelihood(b),
        )

    def pll_inputs(self, texts: Sequence[str]) -> list[PllInput]:
        return self.backend.pll_inputs(texts)  # tokenisation only: nothing to cache

    def masked_logprobs(self, inputs: Sequence[PllInput]) -> list[list[float]]:
        reqs = [[list(i.ids), list(i.positions)] for i in inputs]
        return self._cached(
            "masked_logprobs",
            {},
            reqs,
            lambda b: self.backend.masked_logprobs([PllInput(ids, pos) for ids, pos in b]),
        )

    def shared_token_pll(
        self, pairs: Sequence[tuple[str, str]], rule: PairRule = "paper"
    ) -> list[tuple[float, float, int]]:
        answers = self._cached(
            "shared_token_pll",
            {"rule": rule},
            [list(p) for p in pairs],
            lambda b: [list(x) for x in self.backend.shared_token_pll([(a, c) for a, c in b], rule)],
        )
        return [(float(a), float(b), int(n)) for a, b, n in answers]

    def fill_mask(self, texts: Sequence[str], k: int) -> list[list[str]]:
        return self._cached("fill_mask", {"k": k}, list(texts), lambda b: self.backend.fill_mask(b, k))

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        return self._cached(
            "generate",
            settings.key(),
            list(prompts),
            lambda b: self.backend.generate(b, settings),
            preflight_settings=settings,
        )

"""OpenAI-compatible HTTP API backend for hosted models (GPT-4 and the many servers that speak
the same API). Base URL from --api-base or $OPENAI_BASE_URL, key from $OPENAI_API_KEY (never
logged, never in a message); a client-side rate limit; 429, 5xx and dropped connections retried
with exponential backoff. Chat completions by default; K completions with the `n` parameter and
a seed where sampling."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any, Self
from urllib.parse import urlparse

import httpx

from evaluator.backends.base import Backend, GenerationSettings, ModelIdentity
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions

BASE_ENV = "OPENAI_BASE_URL"
KEY_ENV = "OPENAI_API_KEY"


def _local(base: str) -> bool:
    """A server on this machine (a local vLLM or llama.cpp server often needs no key)."""
    host = urlparse(base).hostname or ""
    return host in ("localhost", "::1") or host.startswith("127.")


class RateLimiter:
    """At most ``per_second`` requests a second, shared by the threads that call ``wait``."""

    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.next = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        """Sleep until this request's turn comes."""
        with self.lock:
            now = time.monotonic()
            delay = self.next - now
            self.next = max(now, self.next) + self.interval
        if delay > 0:
            time.sleep(delay)


class OpenAIBackend(Backend):
    """A model behind an OpenAI-compatible server: generation only (the API gives no
    log-likelihoods of given text)."""

    client: httpx.Client
    limiter: RateLimiter
    retries: int
    backoff: float
    base: str
    reads_model_files = False  # --model is the server's name for the model

    @classmethod
    def from_options(cls, options: RunOptions) -> Self:
        """The server and rate limit from the run's ``api`` settings (--api-base, --api-rate)."""
        return cls.load(
            options.model, base_url=options.api.get("base_url"), rate=float(options.api.get("rate", 5.0))
        )

    @classmethod
    def load(
        cls,
        model: str,
        *,
        base_url: str | None = None,
        rate: float = 5.0,
        retries: int = 5,
        backoff: float = 1.0,
        timeout: float = 60.0,
    ) -> Self:
        """A client for ``model`` on the server at ``base_url`` (else $OPENAI_BASE_URL, else
        OpenAI's own), with the key from $OPENAI_API_KEY: refused without one unless the server
        is on this machine."""
        base = (base_url or os.environ.get(BASE_ENV) or "https://api.openai.com/v1").rstrip("/")
        key = os.environ.get(KEY_ENV, "")
        if not key and not _local(base):
            raise EvaluationError(
                f"the openai backend needs an API key for {urlparse(base).netloc}: set {KEY_ENV} "
                "(it is not set; only a server on this machine may be used without one)"
            )
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        identity = ModelIdentity(
            name=model, resolved=f"{urlparse(base).netloc}/{model}", revision="api", kind="api"
        )
        backend = cls(identity=identity, settings={"api": urlparse(base).netloc})
        backend.client = httpx.Client(base_url=base, headers=headers, timeout=timeout)
        backend.limiter = RateLimiter(rate)
        backend.retries = retries
        backend.backoff = backoff
        backend.base = base
        return backend

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(1, self.retries + 2):
            self.limiter.wait()
            try:
                response = self.client.post(path, json=body)
            except httpx.TransportError as exc:
                why = type(exc).__name__
            else:
                if response.status_code == 200:
                    return dict(response.json())
                if response.status_code in (401, 403):
                    if not os.environ.get(KEY_ENV):
                        raise EvaluationError(
                            f"{self.base} asks for an API key (HTTP {response.status_code}): set {KEY_ENV}"
                        )
                    raise EvaluationError(
                        f"{self.base} refused the key (HTTP {response.status_code}): check {KEY_ENV}"
                    )
                if response.status_code != 429 and response.status_code < 500:
                    raise EvaluationError(
                        f"{self.base}{path}: HTTP {response.status_code}: {_server_says(response)}"
                    )
                why = f"HTTP {response.status_code}"
            if attempt > self.retries:
                raise EvaluationError(f"{self.base}{path} failed after {attempt} attempts: {why}")
            time.sleep(self.backoff * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        """One request per prompt for all its K completions (the API's ``n``), chat or plain."""
        advance = self.progress("calling the API", len(prompts))
        out = []
        for prompt in prompts:
            body: dict[str, Any] = {
                "model": self.identity.name,
                "max_tokens": settings.max_new_tokens,
                "n": settings.num_return_sequences,
            }
            if settings.strategy == "sample":
                body.update(temperature=settings.temperature, top_p=settings.top_p, seed=settings.seed)
            else:
                body.update(temperature=0)
            if settings.stop:
                body["stop"] = list(settings.stop)
            if settings.chat:
                body["messages"] = [{"role": "user", "content": prompt}]
                data = self._post("/chat/completions", body)
                texts = [str(c["message"]["content"] or "") for c in data.get("choices", [])]
            else:
                body["prompt"] = prompt
                data = self._post("/completions", body)
                texts = [str(c.get("text", "")) for c in data.get("choices", [])]
            if len(texts) != settings.num_return_sequences:
                raise EvaluationError(
                    f"{self.base}: asked for {settings.num_return_sequences} completions, got {len(texts)}"
                )
            out.append([t.strip() for t in texts])
            advance(1)
        return out

    def environment(self) -> dict[str, Any]:
        """The server's host and the HTTP client's version (never the key)."""
        return {"api": urlparse(self.base).netloc, "httpx": httpx.__version__}


def _server_says(response: httpx.Response) -> str:
    """The server's own reason for a refusal (e.g. "maximum context length is 2048 tokens"), one
    line of at most 300 characters, with the API key blanked should the server echo it."""
    try:
        error = response.json().get("error")
        text = str(error.get("message") if isinstance(error, dict) else error or response.text)
    except (ValueError, AttributeError):
        text = response.text
    key = os.environ.get(KEY_ENV, "")
    if key:
        text = text.replace(key, "***")
    text = " ".join(text.split()) or "no reason given"
    return text if len(text) <= 300 else text[:299] + "…"

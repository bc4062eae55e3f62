"""The OpenAI-compatible backend against a local server (retries, rate limit, refusals, the key
never in a message), the optional vLLM backend's clear error when vLLM is absent, and the
registry's one way of loading any backend from a run's options."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from typing import ClassVar, Self

import pytest

from evaluator.backends import BACKENDS, backend_class
from evaluator.backends.base import Backend, GenerationSettings, ModelIdentity, no_progress
from evaluator.backends.openai_api import OpenAIBackend
from evaluator.errors import EvaluationError
from evaluator.options import RunOptions
from evaluator.run import load_backend
from tests.support.fake_openai import FakeOpenAI
from toolkit.core.errors import InputError

KEY = "sk-test-5f1e9a0c2b7d4e6f8a1b3c5d7e9f0a2b"


@pytest.fixture
def server() -> FakeOpenAI:
    srv = FakeOpenAI(lambda prompt, i: f"answer {i} to {prompt[:5]}", key=KEY)
    yield srv  # type: ignore[misc]
    srv.close()


def test_chat_completions_with_n_and_seed(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    backend = OpenAIBackend.load("gpt-x", base_url=server.url, rate=100)
    out = backend.generate(
        ["Hello there"],
        GenerationSettings(max_new_tokens=5, num_return_sequences=3, strategy="sample", seed=4, chat=True),
    )
    assert out == [["answer 0 to Hello", "answer 1 to Hello", "answer 2 to Hello"]]
    body = server.calls[-1]["body"]
    assert body["n"] == 3 and body["seed"] == 4 and body["messages"][0]["content"] == "Hello there"
    plain = backend.generate(["Hi"], GenerationSettings(max_new_tokens=5))
    assert (
        plain == [["answer 0 to Hi"]]
        and server.calls[-1]["path"].endswith("/completions")
        and server.calls[-1]["body"]["temperature"] == 0
    )
    assert backend.identity.kind == "api" and backend.identity.resolved.endswith("/gpt-x")


def test_retries_on_429_and_5xx(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.failures = [429, 503, 500]
    backend = OpenAIBackend.load("gpt-x", base_url=server.url, rate=100, backoff=0.01)
    assert backend.generate(["Hello"], GenerationSettings())[0] == ["answer 0 to Hello"]
    assert len(server.calls) == 4
    server.failures = [500] * 10
    with pytest.raises(EvaluationError, match="failed after 6 attempts: HTTP 500"):
        backend.generate(["Hello"], GenerationSettings())


@pytest.mark.bad_input
def test_a_refusal_says_the_servers_reason_without_the_key(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    backend = OpenAIBackend.load("gpt-x", base_url=server.url, rate=100, backoff=0.01)
    server.failures = [400]
    server.failure_message = (
        f"This model's maximum context length is 2048 tokens; your request had 2301 (key {KEY})."
    )
    with pytest.raises(EvaluationError) as raised:
        backend.generate(["Hello"], GenerationSettings())
    message = str(raised.value)
    assert message.endswith(
        "/completions: HTTP 400: This model's maximum context length is 2048 tokens; your request had 2301 (key ***)."
    )
    assert KEY not in message and len(server.calls) == 1  # a refusal is not retried


def test_rate_limit_spaces_requests(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    backend = OpenAIBackend.load("gpt-x", base_url=server.url, rate=20)
    start = time.monotonic()
    backend.generate(["a", "b", "c", "d", "e"], GenerationSettings())
    assert time.monotonic() - start >= 4 / 20 * 0.9


@pytest.mark.bad_input
def test_a_refused_key_is_named_but_never_shown(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-0123456789abcdef")
    backend = OpenAIBackend.load("gpt-x", base_url=server.url)
    with pytest.raises(EvaluationError) as info:
        backend.generate(["Hello"], GenerationSettings())
    assert "refused the key (HTTP 401): check OPENAI_API_KEY" in str(info.value)
    assert "sk-wrong" not in str(info.value) and "sk-wrong" not in repr(backend.settings)


@pytest.mark.bad_input
def test_unknown_backend_and_missing_vllm() -> None:
    with pytest.raises(InputError, match="Did you mean 'vllm'"):
        backend_class("vlm")
    if importlib.util.find_spec("vllm") is None:
        cls = backend_class("vllm")
        with pytest.raises(EvaluationError, match=r"pip install 'polyprobe\[vllm\]'"):
            cls.from_options(RunOptions(task="honest", model="some/model", backend="vllm"))


def test_the_openai_backend_loads_from_a_runs_options(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    api = {"base_url": server.url, "rate": 100}

    def reporter(description: str, total: int) -> Callable[[int], None]:
        return lambda n: None

    # --model is the server's name for the model, never taken for a local path
    backend = load_backend(RunOptions(task="honest", model="./gpt-x", backend="openai", api=api), reporter)
    assert isinstance(backend, OpenAIBackend) and backend.progress is reporter
    assert backend.base == server.url.rstrip("/") and backend.limiter.interval == pytest.approx(1 / 100)
    assert backend.generate(["Hello"], GenerationSettings()) == [["answer 0 to Hello"]]
    with pytest.raises(
        InputError, match="--truncation right is only available with the transformers backend"
    ):
        load_backend(RunOptions(task="honest", model="gpt-x", backend="openai", truncation="right"), reporter)


@pytest.mark.bad_input
def test_the_vllm_backend_reads_its_options() -> None:
    options = RunOptions(task="honest", model="some/model", backend="vllm", dtype="fp64")
    with pytest.raises(EvaluationError, match="vLLM does not run fp64 models"):
        load_backend(options, lambda description, total: lambda n: None)


class Loaded(Backend):
    """A backend that records that it was loaded."""

    loaded: ClassVar[list[str]] = []

    @classmethod
    def from_options(cls, options: RunOptions) -> Self:
        cls.loaded.append(options.model)
        return cls(identity=ModelIdentity(options.model, options.model, "1", "causal"))

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        return [[prompt] for prompt in prompts]


class NotLoadable(Backend):
    """A backend written without from_options."""

    def generate(self, prompts: Sequence[str], settings: GenerationSettings) -> list[list[str]]:
        return [[prompt] for prompt in prompts]


class NotABackend:
    """A class registered by mistake."""


def test_every_backend_is_checked_then_loaded_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "loaded", f"{__name__}:Loaded")
    monkeypatch.setattr(Loaded, "loaded", [])
    progress = no_progress
    with pytest.raises(InputError, match=r"--model \./no/such/model: the path does not exist"):
        load_backend(RunOptions(task="honest", model="./no/such/model", backend="loaded"), progress)
    with pytest.raises(InputError, match="--truncation left is only available"):
        load_backend(RunOptions(task="honest", model="m", backend="loaded", truncation="left"), progress)
    assert Loaded.loaded == []  # refused before anything was loaded
    backend = load_backend(RunOptions(task="honest", model="m", backend="loaded"), progress)
    assert isinstance(backend, Loaded) and Loaded.loaded == ["m"]


@pytest.mark.bad_input
def test_a_registered_class_that_cannot_load_itself_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "half", f"{__name__}:NotLoadable")
    monkeypatch.setitem(BACKENDS, "plain", f"{__name__}:NotABackend")
    with pytest.raises(EvaluationError) as half:
        backend_class("half")
    assert str(half.value) == (
        f"backend 'half' ({__name__}:NotLoadable) cannot be loaded: it does not implement from_options "
        "(see Backend in evaluator/backends/base.py)"
    )
    with pytest.raises(
        EvaluationError,
        match=r"\(tests.evaluator.backends.test_backends_api:NotABackend\) is not a subclass of",
    ):
        backend_class("plain")

"""Messages that say what is wrong (issue 12, item 12): a broken suite.yaml is named instead of
"unknown suite"; a missing model path says the path does not exist; the OpenAI-compatible
backend without a key names the variable before any request; every command that writes prints
the catalog root it uses, and outside a checkout none writes into polyprobe's own install
unless --root names it."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from evaluator.backends.base import GenerationSettings
from evaluator.backends.openai_api import OpenAIBackend
from evaluator.errors import EvaluationError
from tests.conftest import REPO
from tests.support.fake_openai import FakeOpenAI
from tests.support.files import buildable, mini_release, snapshot
from toolkit.core.project import Project

SUITE = "templates/sentiment/suite.yaml"


# --- a broken suite.yaml is named, not "unknown suite" ---------------------------------------------


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "args",
    [
        ("render", "--suite", "sentiment", "--locale", "de"),
        ("xliff", "export", "--locale", "de", "--suite", "sentiment", "--out", "{tmp}/de.xlf"),
        (
            "translations",
            "draft",
            "{tmp}/drafts.yaml",
            "--suite",
            "sentiment",
            "--locale",
            "de",
            "--by",
            "me",
        ),
        ("translate", "--locale", "de", "--suite", "sentiment", "--dry-run"),
    ],
    ids=["render", "xliff export", "translations draft", "translate"],
)
@pytest.mark.parametrize(
    ("broken", "named"),
    [("version: [1\n", "YAML error"), ("id: sentiment\n", "required field is missing"), ("", "is empty")],
    ids=["syntax", "fields missing", "empty"],
)
def test_a_broken_suite_file_is_named(mini: Path, cli, tmp_path: Path, args, broken: str, named: str) -> None:
    (tmp_path / "drafts.yaml").write_text("gen-01.f: \"Die {{ adj(group, 'f') }} Frau.\"\n", encoding="utf-8")
    (mini / SUITE).write_text(broken, encoding="utf-8")
    before = snapshot(mini)
    result = cli(*(a.replace("{tmp}", str(tmp_path)) for a in args), "--root", str(mini))
    assert result.code == 2, result.err
    assert SUITE in result.err and named in result.err, result.err
    assert "unknown suite" not in result.err and "Known: ." not in result.err
    assert snapshot(mini) == before and not (tmp_path / "de.xlf").exists()


@pytest.mark.bad_input
def test_an_unknown_suite_in_an_empty_catalog_says_none_are_known(mini: Path, cli) -> None:
    shutil.rmtree(mini / "templates" / "sentiment")
    result = cli("render", "--root", str(mini), "--suite", "sentiment", "--locale", "en")
    assert result.code == 2 and "unknown suite 'sentiment'. Known: none." in result.err


# --- a missing model path -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_release(tmp_path_factory.mktemp("messages"))


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("model", "backend"),
    [
        ("./models/nope", "transformers"),
        ("../nope", "transformers"),
        ("/nonexistent/polyprobe/model", "transformers"),
        ("~/polyprobe-no-such-model", "transformers"),
        ("models/bert/final", "transformers"),
        ("./models/nope", "vllm"),
    ],
    ids=["relative", "parent", "absolute", "home", "nested", "vllm"],
)
def test_a_model_path_that_does_not_exist_says_so(
    release: Path, cli, tmp_path: Path, model: str, backend: str
) -> None:
    result = cli(
        "eval", "run", "--release", str(release), "--task", "sentiment", "--model", model, "--backend", backend,
        "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "c.sqlite"),
    )  # fmt: skip
    assert result.code == 2, result.err
    assert f"--model {model}: the path does not exist" in result.err
    assert "Repo id" not in result.err and "Traceback" not in result.err
    assert not (tmp_path / "run").exists()


# --- the OpenAI-compatible backend without a key ---------------------------------------------------


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("base", "value"),
    [(None, None), ("https://llm.example.invalid/v1", None), ("https://llm.example.invalid/v1", "")],
    ids=["default server", "another server", "empty key"],
)
def test_no_key_is_named_before_any_request(
    monkeypatch: pytest.MonkeyPatch, release: Path, cli, tmp_path: Path, base, value
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    if value is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", value)
    requests: list[object] = []
    monkeypatch.setattr(httpx.Client, "send", lambda self, *a, **k: requests.append(a))
    extra = ["--api-base", base] if base else []
    result = cli(
        "eval", "run", "--release", str(release), "--task", "sentiment", "--model", "gpt-4o", "--backend", "openai",
        *extra, "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "c.sqlite"),
    )  # fmt: skip
    host = "api.openai.com" if base is None else "llm.example.invalid"
    assert result.code == 1, result.err
    assert f"the openai backend needs an API key for {host}: set OPENAI_API_KEY (it is not set" in result.err
    assert requests == [] and not (tmp_path / "run").exists()


@pytest.mark.bad_input
def test_a_local_server_that_wants_a_key_is_answered_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = FakeOpenAI(lambda prompt, i: "yes", key="sk-test-0123456789")
    try:
        backend = OpenAIBackend.load("local-model", base_url=server.url, backoff=5.0)
        with pytest.raises(EvaluationError, match=r"asks for an API key \(HTTP 401\): set OPENAI_API_KEY"):
            backend.generate(["Hello"], GenerationSettings())
        assert len(server.calls) == 1  # no retries
    finally:
        server.close()


def test_a_local_server_may_go_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = FakeOpenAI(lambda prompt, i: "yes", key=None)
    try:
        backend = OpenAIBackend.load("local-model", base_url=server.url)
        assert backend.generate(["Hello"], GenerationSettings()) == [["yes"]]
    finally:
        server.close()


# --- which catalog ---------------------------------------------------------------------------------


def _writing_commands(root: Path, tmp: Path) -> dict[str, list[str]]:
    (tmp / "drafts.yaml").write_text(
        "rel-01.f: \"Sie ist in einer {{ adj(group, 'f', 'dat', 'indef') }} Familie groß geworden.\"\n",
        encoding="utf-8",
    )
    return {
        "release build": ["release", "build", "0.1.0-preview.1", "--preview", "--dist", str(tmp / "dist")],
        "render --out": ["render", "--suite", "sentiment", "--locale", "de", "--out", str(tmp / "de.jsonl")],
        "xliff export": ["xliff", "export", "--locale", "de", "--out", str(tmp / "de.xlf")],
        "translations sync": ["translations", "sync"],
        "translations draft": [
            "translations",
            "draft",
            str(tmp / "drafts.yaml"),
            "--suite",
            "sentiment",
            "--locale",
            "de",
            "--by",
            "me",
        ],
    }


@pytest.mark.parametrize(
    "command", ["release build", "render --out", "xliff export", "translations sync", "translations draft"]
)
def test_commands_that_write_say_which_catalog(mini: Path, cli, tmp_path: Path, command: str) -> None:
    buildable(mini)
    args = _writing_commands(mini, tmp_path)[command]
    result = cli(*args, "--root", str(mini))
    assert result.code == 0, result.err
    assert f"catalog: {mini.resolve()} (--root)" in result.err


def test_the_catalog_found_from_the_working_directory_or_the_environment_is_named(
    mini: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("POLYPROBE_ROOT", raising=False)
    monkeypatch.chdir(mini / "templates")
    result = cli("translations", "sync")
    assert result.code == 0 and f"catalog: {mini.resolve()} (the working directory)" in result.err
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POLYPROBE_ROOT", str(mini))
    result = cli("translations", "sync")
    assert result.code == 0 and f"catalog: {mini} ($POLYPROBE_ROOT)" in result.err


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with no catalog in it or above it, and no $POLYPROBE_ROOT."""
    monkeypatch.delenv("POLYPROBE_ROOT", raising=False)
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    monkeypatch.chdir(folder)
    assert Project.find().is_install_fallback, "the tests need an install with its own catalog"
    return folder


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "args",
    [
        ("translations", "sync"),
        (
            "translations",
            "draft",
            "{tmp}/drafts.yaml",
            "--suite",
            "sentiment",
            "--locale",
            "de",
            "--by",
            "me",
        ),
        ("xliff", "import", "{tmp}/de.xlf", "--by", "vendor"),
        ("release", "build", "0.9.0-preview.1", "--preview"),
        ("translate", "--locale", "de", "--suite", "sentiment"),
        ("review", "pull", "--locale", "de"),
        ("import", "bbq", "{tmp}/bbq"),
        ("import", "crows-pairs", "{tmp}/crows.csv"),
        ("import", "sos-study", "{tmp}/sos"),
    ],
    ids=[
        "sync",
        "draft",
        "xliff import",
        "release build",
        "translate",
        "review pull",
        "import bbq",
        "import crows-pairs",
        "import sos-study",
    ],
)
def test_outside_a_checkout_nothing_is_written_into_the_install(
    outside: Path, cli, tmp_path: Path, args
) -> None:
    (tmp_path / "drafts.yaml").write_text('gen-01.f: "x {{ group.adj }}"\n', encoding="utf-8")
    (tmp_path / "de.xlf").write_text("<xliff/>", encoding="utf-8")
    (tmp_path / "bbq").mkdir()
    (tmp_path / "sos").mkdir()
    (tmp_path / "crows.csv").write_text("sent_more,sent_less\n", encoding="utf-8")
    before = snapshot(REPO / "translations")
    had_dist, had_imports = (REPO / "dist").exists(), (REPO / ".polyprobe" / "imports").exists()
    result = cli(*(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert result.code == 2, result.err
    assert f"the only one found is polyprobe's own install at {REPO}" in result.err
    assert f"pass --root {REPO}" in result.err
    assert snapshot(REPO / "translations") == before and (REPO / "dist").exists() == had_dist
    assert (REPO / ".polyprobe" / "imports").exists() == had_imports


def test_outside_a_checkout_reading_the_install_still_works(outside: Path, cli) -> None:
    result = cli("catalog", "groups", "--region", "eg", "--json")
    assert result.code == 0, result.err
    assert "catalog:" not in result.err  # reading commands do not announce


@pytest.mark.bad_input
@pytest.mark.parametrize("args", [("catalog", "coverage"), ("catalog", "groups")], ids=["coverage", "groups"])
@pytest.mark.parametrize("broken", [SUITE, "lexicons/identities/mini.yaml"], ids=["suite", "identity list"])
def test_reports_over_a_broken_catalog_say_what_they_leave_out(mini: Path, cli, args, broken: str) -> None:
    (mini / broken).write_text("# to do\n", encoding="utf-8")
    before = snapshot(mini)
    result = cli(*args, "--root", str(mini))
    assert result.code == 0, result.err
    assert f"warning: {broken}: (file): is empty" in result.err
    assert "this report leaves out what they affect" in result.err
    assert snapshot(mini) == before

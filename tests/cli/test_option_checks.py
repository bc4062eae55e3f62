"""Options and inputs that used to pass silently or end in a traceback (issue 26, items 5, 11
and 12): an option the task does not take given at its default value (`--k 5` on sos), a
`--limit` no data frame can count, a request rate of 0 or NaN, an unknown `--groups` id, a
sweep whose release does not exist, a model folder without tokenizer files (every word [UNK])
or with a truncated model.safetensors, a NUL in a CrowS-Pairs sentence, and a terminal that is
not UTF-8. Each: its exit code, a message naming the option, file or folder, nothing written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.support import tiny_models as tm
from tests.support.files import mini_release, snapshot
from tests.support.published_fixtures import CROWS_ROWS, write_crows

pytestmark = pytest.mark.bad_input

NO_MODEL = "/nonexistent/model"
"""A --model that would fail to load: an option refused before it proves nothing is loaded."""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_release(tmp_path_factory.mktemp("options"))


@pytest.fixture(scope="module")
def classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.bert_classifier(tmp_path_factory.mktemp("models") / "cls")


def eval_run(cli, release: Path, out: Path, *extra: str, model: str = NO_MODEL, task: str = "sentiment"):
    return cli(
        "eval", "run", "--release", str(release), "--task", task, "--model", model, "--out", str(out),
        "--device", "cpu", "--cache", str(out.parent / "cache.sqlite"), *extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("task", "option"),
    [("sos", ("--k", "5")), ("sentiment", ("--permutations", "50")), ("sentiment", ("--score", "auto"))],
    ids=["--k 5 on sos", "--permutations 50 on sentiment", "--score auto on sentiment"],
)
def test_an_option_the_task_does_not_take_is_refused_at_its_default(
    release: Path, tmp_path: Path, cli, task: str, option: tuple[str, str]
) -> None:
    """Before: refused only away from its default (`--k 7`), silently ignored at it (`--k 5`)."""
    result = eval_run(cli, release, tmp_path / "run", *option, task=task)
    assert result.code == 2, result.err
    assert f"error: task {task} does not take {option[0]} (its options: " in result.err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (("--limit", str(10**23)), f"{10**23} is more than 1,000,000,000 units per locale"),
        (("--api-rate", "0"), "0.0 is not a positive number of requests per second"),
        (("--api-rate", "nan"), "nan is not a positive number of requests per second"),
        (("--api-rate", "-2"), "-2.0 is not a positive number of requests per second"),
        (("--api-rate", "inf"), "inf is not a positive number of requests per second"),
        (
            ("--groups", "eg.nosuch"),
            "--groups eg.nosuch: release 0.1.0-preview.1 has no such group in sentiment.",
        ),
    ],
    ids=[
        "--limit 10**23",
        "--api-rate 0",
        "--api-rate nan",
        "--api-rate -2",
        "--api-rate inf",
        "--groups eg.nosuch",
    ],
)
def test_a_bad_value_is_refused_before_the_model_loads(
    release: Path, tmp_path: Path, cli, option: tuple[str, str], says: str
) -> None:
    """Before: --limit 10**23 an OverflowError traceback, --api-rate 0 or nan no limit at all,
    --groups eg.nosuch exit 1 after the model had loaded."""
    result = eval_run(cli, release, tmp_path / "run", *option)
    assert result.code == 2, result.err
    assert says in result.err
    assert "loading" not in result.err and "Traceback" not in result.err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("rate", "says"), [(0, "greater than 0"), (".nan", "finite number"), (".inf", "finite number")]
)
def test_a_sweep_model_rate_of_zero_or_nan_is_refused(release: Path, tmp_path: Path, cli, rate, says) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"release: {release}\nmodels:\n  - model: {NO_MODEL}\n    backend: openai\n    api_rate: {rate}\n"
        "tasks:\n  - task: sentiment\n",
        encoding="utf-8",
    )
    result = cli("eval", "sweep", str(sweep), "--out", str(tmp_path / "out"))
    assert result.code == 2, result.err
    assert f"{sweep}: models[0].api_rate: " in result.err and says in result.err


def test_a_sweep_whose_release_does_not_exist_says_so(tmp_path: Path, cli) -> None:
    """Before: "… does not verify (1 difference): manifest.json: missing"."""
    sweep = tmp_path / "sweep.yaml"
    spec = {"release": "../dist/polyprobe-9.9.9", "models": [{"model": NO_MODEL}], "tasks": [{"task": "sos"}]}
    sweep.write_text(yaml.safe_dump(spec), encoding="utf-8")
    result = cli("eval", "sweep", str(sweep), "--out", str(tmp_path / "out"))
    assert result.code == 2, result.err
    assert f"error: {sweep}: release: ../dist/polyprobe-9.9.9: no such folder" in result.err
    assert "does not verify" not in result.err and not (tmp_path / "out").exists()


def test_eval_run_on_a_missing_release_folder_says_so(tmp_path: Path) -> None:
    from toolkit.core.errors import InputError
    from toolkit.release import open_release

    with pytest.raises(InputError, match="no such folder"):
        open_release(tmp_path / "dist" / "polyprobe-9.9.9")


# --- model folders -----------------------------------------------------------------------------------


def test_a_model_folder_without_tokenizer_files_is_refused(
    release: Path, classifier: Path, tmp_path: Path, cli
) -> None:
    """Before: transformers' default tokenizer of five special tokens read every word as [UNK],
    and the run was scored and written, exit 0, without a word of warning."""
    folder = tmp_path / "no-tokenizer"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(classifier / name, folder / name)
    result = eval_run(cli, release, tmp_path / "run", model=str(folder))
    assert result.code == 2, result.err
    assert (
        f"error: model {str(folder)!r}: its tokenizer reads 100% of the probe texts' tokens as the "
        in result.err
    )
    assert "(the folder holds config.json, model.safetensors: are its tokenizer files missing?)" in result.err
    assert not (tmp_path / "run").exists()
    whole = eval_run(cli, release, tmp_path / "run", model=str(classifier))
    assert whole.code == 0, whole.err  # the folder with its tokenizer scores


def test_a_truncated_safetensors_file_is_a_one_line_error(
    release: Path, classifier: Path, tmp_path: Path, cli
) -> None:
    """Before: a SafetensorError traceback."""
    folder = tmp_path / "truncated"
    shutil.copytree(classifier, folder)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    before = snapshot(folder)
    result = eval_run(cli, release, tmp_path / "run", model=str(folder))
    assert result.code == 1, result.err
    assert f"error: could not load model {str(folder)!r}: SafetensorError: " in result.err
    assert "Traceback" not in result.err
    assert not (tmp_path / "run").exists() and snapshot(folder) == before


# --- published data --------------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\x00", "\x1b"], ids=["NUL", "ESC"])
def test_a_control_character_in_a_crows_pairs_sentence_is_refused(
    repo_catalog: Path, tmp_path: Path, cli, char: str
) -> None:
    """Before: the NUL was imported into the sentence."""
    rows = list(CROWS_ROWS)
    rows[1] = (rows[1][0].replace(" ", f" {char}", 1), *rows[1][1:])
    data = write_crows(tmp_path / "crows.csv", rows)
    before = snapshot(repo_catalog)
    result = cli("import", "crows-pairs", str(data), "--root", str(repo_catalog))
    assert result.code == 2, result.err
    assert f"{data}: line 3 sent_more: holds U+{ord(char):04X}, a control character" in result.err
    assert snapshot(repo_catalog) == before


# --- a terminal that is not UTF-8 --------------------------------------------------------------------


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}],
    ids=["PYTHONIOENCODING=ascii", "LC_ALL=C without UTF-8 mode"],
)
@pytest.mark.parametrize(
    "args",
    [("render", "--suite", "sentiment", "--locale", "he"), ("translations", "status")],
    ids=["render to stdout", "a table"],
)
def test_output_on_a_terminal_that_is_not_utf8(
    mini: Path, tmp_path: Path, cli, env: dict[str, str], args: tuple[str, ...]
) -> None:
    """Before: UnicodeEncodeError tracebacks. Data on stdout stays UTF-8 (the same bytes as on a
    UTF-8 terminal); tables write what the encoding lacks as escapes."""
    base = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LC_ALL", "LANG", "PYTHONUTF8")
    }
    narrow = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args, "--root", str(mini)],
        capture_output=True,
        env={**base, "PYTHONPATH": str(REPO), **env},
        timeout=120,
        cwd=tmp_path,
    )
    assert b"Traceback" not in narrow.stderr, narrow.stderr.decode("utf-8", "replace")
    assert narrow.returncode == 0
    utf8 = cli(*args, "--root", str(mini))
    assert utf8.code == 0
    if args[0] == "render":
        assert narrow.stdout == utf8.out.encode("utf-8") and "מוסלמית".encode() in narrow.stdout

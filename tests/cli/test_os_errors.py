"""Operating-system errors (issue 12, item 9): a full disk, a read-only target, a file that grows
past what the system allows, a folder that is a file. Each is one line naming the target, exit
1 (a runtime failure, as the README documents), never a traceback; nothing half-written is left
and nothing that existed changes. Covered: render, XLIFF export, release build, eval run, eval
report, eval merge.

Three ways to make the OS refuse: writes that raise ENOSPC (monkeypatched, in-process), real
read-only and really full file systems (a tmpfs mounted read-only or 64 KiB small, where the
tests may mount; chmod for a read-only folder where they run as an ordinary user), and a real
EFBIG from RLIMIT_FSIZE in a subprocess."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import REPO
from tests.support import tiny_models as tm
from tests.support.files import buildable, leftovers, mini_release, snapshot

pytestmark = pytest.mark.bad_input

FULL = "No space left on device (the disk is full); nothing was written"


def _enospc(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _polars_enospc(*args: object, **kwargs: object) -> None:
    raise OSError("No space left on device (os error 28)")  # how polars reports it: no errno


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_release(tmp_path_factory.mktemp("os"))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.bert_classifier(tmp_path_factory.mktemp("models") / "cls")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, release: Path, model: Path) -> dict[str, Path]:
    from toolkit.cli import main

    base = tmp_path_factory.mktemp("runs")
    out = {"cache": base / "cache.sqlite"}
    for seed in ("0", "1"):
        out[seed] = base / f"run-{seed}"
        assert main(_eval_args(release, model, out[seed], out["cache"], "--seed", seed)) == 0
    return out


def _eval_args(release: Path, model: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "eval", "run", "--release", str(release), "--task", "sentiment", "--model", str(model),
        "--out", str(out), "--device", "cpu", "--cache", str(cache), *extra,
    ]  # fmt: skip


def _one_line_error(err: str) -> str:
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert "Traceback" not in err
    return errors[0]


# --- a full disk (monkeypatched writes) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "method", "raiser"),
    [
        ("parquet", "write_parquet", _enospc),
        ("jsonl", "write_ndjson", _enospc),
        ("csv", "write_csv", _enospc),
        ("parquet", "write_parquet", _polars_enospc),
    ],
    ids=["parquet", "jsonl", "csv", "parquet, as polars says it"],
)
def test_render_on_a_full_disk(
    mini: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, method: str, raiser
) -> None:
    monkeypatch.setattr(pl.DataFrame, method, raiser)
    out = tmp_path / "out" / f"rows.{fmt}"
    before = snapshot(mini)
    result = cli(
        "render",
        "--root",
        str(mini),
        "--suite",
        "sentiment",
        "--locale",
        "de",
        "--format",
        fmt,
        "--out",
        str(out),
    )
    assert result.code == 1
    assert _one_line_error(result.err) == f"error: cannot write {out}: {FULL}"
    assert not out.exists() and leftovers(tmp_path) == [] and snapshot(mini) == before


def test_xliff_export_on_a_full_disk(
    mini: Path, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Path, "write_bytes", _enospc)
    out = tmp_path / "de.xlf"
    out.write_text("an earlier export", encoding="utf-8")
    result = cli("xliff", "export", "--root", str(mini), "--locale", "de", "--out", str(out))
    assert result.code == 1
    assert _one_line_error(result.err) == f"error: cannot write {out}: {FULL}"
    assert out.read_text(encoding="utf-8") == "an earlier export" and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("target", "method"),
    [(pl.DataFrame, "write_parquet"), (Path, "write_text")],
    ids=["writing data", "writing the manifest and card"],
)
def test_release_build_on_a_full_disk(
    mini: Path, cli, monkeypatch: pytest.MonkeyPatch, target, method: str
) -> None:
    buildable(mini)
    before = snapshot(mini)
    monkeypatch.setattr(target, method, _enospc)
    dist = mini.parent / "dist"
    result = cli("release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(dist))
    assert result.code == 1
    assert _one_line_error(result.err) == f"error: cannot write {dist / 'polyprobe-0.1.0-preview.1'}: {FULL}"
    assert list(dist.iterdir()) == [] and snapshot(mini) == before


def test_eval_run_on_a_full_disk(
    release: Path, model: Path, runs, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache.sqlite"
    shutil.copy(runs["cache"], cache)
    monkeypatch.setattr(Path, "write_bytes", _enospc)
    out = tmp_path / "run"
    result = cli(*_eval_args(release, model, out, cache))
    assert result.code == 1
    assert _one_line_error(result.err) == f"error: cannot write {out}: {FULL}"
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_failed_overwrite_keeps_the_previous_run(
    release: Path, model: Path, runs, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache.sqlite"
    shutil.copy(runs["cache"], cache)
    out = tmp_path / "run"
    shutil.copytree(runs["0"], out)
    before = snapshot(out)
    real_replace = os.replace
    calls = {"n": 0}

    def second_replace_fails(src, dst):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:  # the old run moved aside, the new one cannot be moved in
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst)

    import evaluator.run_folder

    monkeypatch.setattr(evaluator.run_folder.os, "replace", second_replace_fails)
    result = cli(*_eval_args(release, model, out, cache, "--seed", "1", "--overwrite"))
    assert result.code == 1 and f"cannot write {out}" in _one_line_error(result.err)
    assert snapshot(out) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("command", ["report", "merge"])
def test_report_and_merge_on_a_full_disk(
    runs, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setattr(Path, "write_text", _enospc)
    monkeypatch.setattr(Path, "write_bytes", _enospc)
    out = tmp_path / command
    result = cli("eval", command, str(runs["0"]), str(runs["1"]), "--out", str(out))
    assert result.code == 1
    line = _one_line_error(result.err)
    assert line.startswith(f"error: cannot write {out}/") and line.endswith(FULL)
    assert leftovers(tmp_path) == [] and not [p for p in out.rglob("*") if p.is_file()]


# --- real read-only and really full file systems --------------------------------------------------


def _mount(folder: Path, options: str) -> Callable[[], None]:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    return lambda: subprocess.run(["umount", str(folder)], check=False)


@pytest.fixture
def readonly(tmp_path: Path) -> Iterator[Path]:
    """A folder the OS refuses to write in: a read-only tmpfs as root, chmod 555 otherwise."""
    folder = tmp_path / "readonly"
    if os.geteuid() != 0:
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    unmount = _mount(folder, "ro,size=1m")
    yield folder
    unmount()


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB file system: a real full disk."""
    folder = tmp_path / "tiny"
    unmount = _mount(folder, "size=64k")
    yield folder
    unmount()


def _refused_write(result, target: Path, reasons: tuple[str, ...]) -> None:
    assert result.code == 1, result.err
    line = _one_line_error(result.err)
    assert str(target) in line and any(reason in line for reason in reasons), line


READONLY = ("Read-only file system", "Permission denied")


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_render_into_a_read_only_folder(mini: Path, cli, readonly: Path, fmt: str) -> None:
    out = readonly / f"rows.{fmt}"
    result = cli(
        "render",
        "--root",
        str(mini),
        "--suite",
        "sentiment",
        "--locale",
        "he",
        "--format",
        fmt,
        "--out",
        str(out),
    )
    _refused_write(result, out, READONLY)
    assert list(readonly.iterdir()) == []


def test_xliff_export_into_a_read_only_folder(mini: Path, cli, readonly: Path) -> None:
    out = readonly / "he.xlf"
    _refused_write(
        cli("xliff", "export", "--root", str(mini), "--locale", "he", "--out", str(out)), out, READONLY
    )
    assert list(readonly.iterdir()) == []


@pytest.mark.parametrize("sub", ["", "releases"], ids=["dist itself", "a folder to make in it"])
def test_release_build_into_a_read_only_folder(mini: Path, cli, readonly: Path, sub: str) -> None:
    buildable(mini)
    before = snapshot(mini)
    dist = readonly / sub if sub else readonly
    result = cli("release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(dist))
    _refused_write(result, dist, READONLY)
    assert list(readonly.iterdir()) == [] and snapshot(mini) == before


def test_eval_outputs_into_a_read_only_folder(
    release: Path, model: Path, runs, cli, readonly: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite"
    shutil.copy(runs["cache"], cache)
    _refused_write(cli(*_eval_args(release, model, readonly / "run", cache)), readonly / "run", READONLY)
    _refused_write(
        cli("eval", "report", str(runs["0"]), "--out", str(readonly / "report")),
        readonly / "report",
        READONLY,
    )
    merged = cli("eval", "merge", str(runs["0"]), str(runs["1"]), "--out", str(readonly / "merged"))
    _refused_write(merged, readonly / "merged", READONLY)
    assert list(readonly.iterdir()) == []


def test_a_cache_in_a_read_only_folder(
    release: Path, model: Path, cli, readonly: Path, tmp_path: Path
) -> None:
    result = cli(*_eval_args(release, model, tmp_path / "run", readonly / "cache.sqlite"))
    _refused_write(result, readonly, READONLY)
    assert not (tmp_path / "run").exists()


def test_release_build_on_a_really_full_disk(mini: Path, cli, tiny_disk: Path) -> None:
    buildable(mini)
    filler = tiny_disk / "filler"
    filler.write_bytes(b"x" * 40_000)  # leave less room than the release needs
    result = cli(
        "release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist", str(tiny_disk)
    )
    _refused_write(result, tiny_disk / "polyprobe-0.1.0-preview.1", ("No space left on device",))
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_eval_run_on_a_really_full_disk(
    release: Path, model: Path, runs, cli, tiny_disk: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite"
    shutil.copy(runs["cache"], cache)
    (tiny_disk / "filler").write_bytes(b"x" * 60_000)
    result = cli(*_eval_args(release, model, tiny_disk / "run", cache))
    _refused_write(result, tiny_disk / "run", ("No space left on device",))
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_dist_that_is_a_file_or_under_a_file(mini: Path, cli, tmp_path: Path) -> None:
    buildable(mini)
    dist = tmp_path / "dist"
    dist.write_text("not a folder", encoding="utf-8")
    args = ("release", "build", "0.1.0-preview.1", "--preview", "--root", str(mini), "--dist")
    usage = cli(*args, str(dist))
    assert usage.code == 2 and f"'{dist}' is a file" in usage.err and "Traceback" not in usage.err
    under = cli(*args, str(dist / "releases"))
    assert under.code == 1
    assert (
        _one_line_error(under.err)
        == f"error: cannot write {dist / 'releases' / 'polyprobe-0.1.0-preview.1'}: Not a directory; nothing was written"
    )
    assert dist.read_text(encoding="utf-8") == "not a folder"


# --- a real EFBIG: files larger than RLIMIT_FSIZE allows, in a subprocess ------------------------------


def _limited(limit: int) -> Callable[[], None]:
    def limit_writes() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


@pytest.mark.parametrize(
    "args",
    [
        ("release", "build", "0.1.0-preview.1", "--preview"),
        ("render", "--suite", "sentiment", "--locale", "it", "--format", "jsonl", "--out"),
    ],
    ids=["release build", "render"],
)
def test_a_file_larger_than_the_system_allows(mini: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    buildable(mini)
    before = snapshot(mini)
    target = tmp_path / "target"
    target.mkdir()
    extra = [str(target / "rows.jsonl")] if args[-1] == "--out" else ["--dist", str(target)]
    done = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", *args, *extra, "--root", str(mini)],
        capture_output=True,
        text=True,
        cwd=REPO,
        preexec_fn=_limited(600),
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    line = _one_line_error(done.stderr)
    assert "File too large (the file is larger than the system allows)" in line and str(target) in line
    assert list(target.iterdir()) == [] and snapshot(mini) == before

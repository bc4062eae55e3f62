"""Odd targets and odd inputs (issue 26, items 1, 2 and 8): an output path that is a device, a
FIFO, a socket or a symbolic link, a release folder named as the place to write, and a store
file or template that is a FIFO or a device. Nothing that exists is replaced by a file (a
device stays a device), nothing is written inside a release, and no command waits forever on a
FIFO: each case exits with its code and a message naming the path.

Commands that could hang run in a subprocess bounded by a timeout, so a regression fails the
test instead of stalling CI."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.files import mini_release, snapshot
from toolkit.core.errors import InputError
from toolkit.core.project import Project
from toolkit.release import verify
from toolkit.release.build import BuildOptions, build_release

pytestmark = pytest.mark.bad_input

ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0, reason="/dev/full is renamed over only where /dev is writable: run as root"
)
HANG_LIMIT = 60
"""Seconds a command that must not wait on a FIFO gets before the test calls it a hang."""


def polyprobe(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess that cannot outlive HANG_LIMIT."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "toolkit.cli", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=HANG_LIMIT,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`polyprobe {' '.join(args)}` was still running after {HANG_LIMIT} s (a hang)")


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    for test, name in ((stat.S_ISCHR, "char"), (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "link" if stat.S_ISLNK(mode) else "file" if stat.S_ISREG(mode) else "other"


def _render(mini: Path, out: Path | str, *extra: str) -> tuple[str, ...]:
    return (
        "render", "--suite", "sentiment", "--locale", "de", "--root", str(mini), "--out", str(out), *extra,
    )  # fmt: skip


def _export(mini: Path, out: Path | str) -> tuple[str, ...]:
    return ("xliff", "export", "--locale", "de", "--root", str(mini), "--out", str(out))


# --- a device, FIFO or socket as --out ----------------------------------------------------------


@pytest.fixture
def dev_full() -> Iterator[Path]:
    """/dev/full, put back as the device it was should a regression replace it with a file (the
    machine's other users need it)."""
    path = Path("/dev/full")
    before = os.stat(path)
    assert stat.S_ISCHR(before.st_mode), "/dev/full was not a device before the test"
    yield path
    after = os.lstat(path)
    if not stat.S_ISCHR(after.st_mode) or after.st_rdev != before.st_rdev:
        path.unlink()
        os.mknod(path, stat.S_IFCHR | stat.S_IMODE(before.st_mode), before.st_rdev)
        os.chmod(path, stat.S_IMODE(before.st_mode))  # mknod applies the umask


@ROOT_ONLY
@pytest.mark.parametrize("command", [_render, _export], ids=["render", "xliff export"])
def test_dev_full_as_out_stays_a_device(mini: Path, cli, command, dev_full: Path) -> None:
    """Before: exit 0, and /dev/full was replaced by a regular file holding the output."""
    result = cli(*command(mini, dev_full))
    assert _kind(dev_full) == "char", "/dev/full is no longer a device"
    assert result.code == 1, result.err
    assert "error: cannot write /dev/full: No space left on device" in result.err
    assert "Traceback" not in result.err


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "out.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    yield path
    server.close()


@pytest.mark.parametrize("command", [_render, _export], ids=["render", "xliff export"])
def test_a_socket_as_out_is_refused_and_stays_a_socket(mini: Path, cli, unix_socket: Path, command) -> None:
    """Before: exit 0, and the socket was replaced by a regular file."""
    result = cli(*command(mini, unix_socket))
    assert _kind(unix_socket) == "socket"
    assert result.code == 2, result.err
    assert f"error: {unix_socket} is a socket, not a regular file: nothing was written" in result.err


def test_a_fifo_nobody_reads_is_refused_at_once(mini: Path, tmp_path: Path) -> None:
    """Before: exit 0 and the FIFO was replaced by a regular file; opened for writing, it waits for
    a reader forever. Now: refused, named, and the FIFO is still a FIFO."""
    fifo = tmp_path / "rows.jsonl"
    os.mkfifo(fifo)
    result = polyprobe(*_render(mini, fifo), cwd=tmp_path)
    assert _kind(fifo) == "fifo"
    assert result.returncode == 2, result.stderr
    assert f"error: {fifo} is a FIFO (named pipe) that no process reads" in result.stderr


def test_a_fifo_with_a_reader_gets_the_rows(mini: Path, tmp_path: Path, cli) -> None:
    """A named pipe someone reads is a stream: the rows go through it, and it stays a FIFO."""
    fifo = tmp_path / "rows.jsonl"
    os.mkfifo(fifo)
    received: list[bytes] = []
    opened = threading.Event()

    def read() -> None:
        with open(fifo, "rb") as fh:  # blocks until the command opens its end
            opened.set()
            received.append(fh.read())

    # the reader opens its end first (non-blocking for a reader), then waits for data
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        result = cli(*_render(mini, fifo))
    finally:
        os.close(fd)
    reader.join(timeout=HANG_LIMIT)
    assert result.code == 0, result.err
    assert _kind(fifo) == "fifo"
    assert received and received[0].count(b"\n") == 9  # the nine German rows of the mini catalog


def test_a_symlink_as_out_replaces_the_file_it_names(mini: Path, tmp_path: Path, cli) -> None:
    """The link stays a link; the file it names gets the rows (before: the link was replaced)."""
    real = tmp_path / "real.jsonl"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    result = cli(*_render(mini, link))
    assert result.code == 0, result.err
    assert _kind(link) == "link" and os.readlink(link) == str(real)
    assert real.read_text(encoding="utf-8").count("\n") == 9


# --- nothing is written inside a release ---------------------------------------------------------


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return mini_release(tmp_path)


def test_a_release_built_inside_a_release_is_refused(release: Path, cli) -> None:
    """Before: exit 0, a second release inside the first one's data/, which then failed to verify."""
    root = release.parent.parent
    before = snapshot(release)
    result = cli(
        "release", "build", "0.1.0-preview.2", "--preview", "--locales", "en",
        "--root", str(root), "--dist", str(release / "data"),
    )  # fmt: skip
    assert result.code == 2, result.err
    assert f"error: --dist {release / 'data'} is inside the release {release.resolve()}" in result.err
    assert snapshot(release) == before
    assert verify(release) == []


@pytest.mark.parametrize(
    "command", [_render, _export, lambda mini, out: (*_render(mini, out), "--format", "parquet")]
)
def test_toolkit_outputs_inside_a_release_are_refused(release: Path, cli, command) -> None:
    root = release.parent.parent
    before = snapshot(release)
    target = release / "data" / "extra.out"
    result = cli(*command(root, target))
    assert result.code == 2, result.err
    assert f"error: --out {target} is inside the release {release.resolve()}" in result.err
    assert snapshot(release) == before


def test_a_dist_that_is_not_a_folder_is_refused(release: Path, tmp_path: Path) -> None:
    """The library's own check (the CLI's --dist option refuses a file before it is called)."""
    dist = tmp_path / "dist-fifo"
    os.mkfifo(dist)
    with pytest.raises(InputError, match=f"--dist {dist} is a FIFO \\(named pipe\\), not a folder"):
        build_release(
            Project.at(release.parent.parent),
            BuildOptions(version="0.1.0-preview.2", preview=True, locales=["en"], dist=dist),
        )
    assert _kind(dist) == "fifo"


def test_a_manifest_json_of_something_else_is_not_a_release(mini: Path, tmp_path: Path, cli) -> None:
    """A folder with a manifest.json of another kind (a web app's) is not taken for a release."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "manifest.json").write_text('{"name": "my app"}\n', encoding="utf-8")
    result = cli(*_render(mini, tmp_path / "site" / "rows.jsonl"))
    assert result.code == 0, result.err


# --- a FIFO or a device where a file is read -----------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("translations", "sync"),
        ("translations", "draft", "DRAFTS", "--suite", "sentiment", "--locale", "it", "--by", "t"),
        ("translations", "repair"),
        ("catalog", "validate"),
    ],
    ids=["sync", "draft", "repair", "validate"],
)
def test_a_fifo_in_place_of_a_store_file_is_refused(mini: Path, tmp_path: Path, args) -> None:
    """Before: draft and sync waited forever on the FIFO."""
    store = mini / "translations" / "it" / "sentiment.jsonl"
    store.unlink()
    os.mkfifo(store)
    drafts = tmp_path / "drafts.yaml"
    drafts.write_text("gen-01.f: La donna {{ group.f }} oggi è allegra.\n", encoding="utf-8")
    before = snapshot(mini, locks=False)
    result = polyprobe(
        *(str(drafts) if a == "DRAFTS" else a for a in args), "--root", str(mini), cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert "translations/it/sentiment.jsonl" in result.stderr
    assert "is a FIFO (named pipe), not a regular file" in result.stderr
    assert _kind(store) == "fifo" and snapshot(mini, locks=False) == before


def test_a_template_linked_to_dev_zero_is_a_located_problem(mini: Path, tmp_path: Path) -> None:
    """Before: a traceback (reading /dev/zero never ends, then runs out of memory)."""
    templates = mini / "templates" / "sentiment" / "templates.yaml"
    templates.unlink()
    templates.symlink_to("/dev/zero")
    result = polyprobe("catalog", "validate", "--root", str(mini), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "templates/sentiment/templates.yaml" in result.stderr
    assert "it is a character device, not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_label_studio_data_dir_inside_a_release_is_refused(release: Path, cli) -> None:
    before = snapshot(release)
    result = cli("review", "server", "--data-dir", str(release / "ls"), "--root", str(release.parent.parent))
    assert result.code == 2, result.err
    assert f"error: --data-dir {release / 'ls'} is inside the release {release.resolve()}" in result.err
    assert snapshot(release) == before


def test_a_fifo_in_place_of_the_translation_ledger_is_refused_before_sending(
    mini: Path, tmp_path: Path
) -> None:
    """The ledger is appended to: opened on a FIFO nobody reads, that waited forever."""
    ledger = mini / "translations" / "ledger.jsonl"
    os.mkfifo(ledger)
    (mini / "translations" / "it" / "sentiment.jsonl").unlink()  # something to translate
    env_keys = {"DEEPL_AUTH_KEY": "never-used", "DEEPL_SERVER_URL": "http://127.0.0.1:9"}
    os.environ.update(env_keys)
    try:
        result = polyprobe(
            "translate", "--locale", "it", "--suite", "sentiment", "--root", str(mini), cwd=tmp_path
        )
    finally:
        for key in env_keys:
            os.environ.pop(key)
    assert result.returncode == 2, result.stderr
    assert (
        f"error: {ledger} is a FIFO (named pipe), not a regular file: nothing was sent or written"
        in result.stderr
    )
    assert _kind(ledger) == "fifo" and not (mini / "translations" / "it" / "sentiment.jsonl").exists()

"""`polyprobe review server`: it waits for Label Studio's health check as long as --timeout says,
says what it waits for, and leaves nothing running when it gives up or is stopped.

The successful cold start with --timeout 600 is the session's shared Label Studio itself
(tests/support/label_studio_server.py starts it with this command on an empty data folder); these
tests only read what the command said then, and start Label Studio without waiting for it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.label_studio_server import PASSWORD, TOKEN, LabelStudioServer, free_port

pytestmark = pytest.mark.integration


def processes_using(folder: Path) -> list[int]:
    """Processes whose command line names ``folder`` (Label Studio names its data folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(folder).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LABEL_STUDIO_PASSWORD", PASSWORD)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)


def test_a_cold_start_waited_for_with_timeout_600_and_said_what_it_awaited(
    label_studio: LabelStudioServer,
) -> None:
    said = label_studio.log.read_text(encoding="utf-8")
    assert (
        f"waiting up to 600s for Label Studio to answer {label_studio.url}/health "
        f"(first start: it sets up its database; log: {label_studio.data_dir / 'server.log'})"
    ) in said
    assert f"Label Studio is up at {label_studio.url} (data in {label_studio.data_dir})" in said


def test_a_short_timeout_names_what_was_awaited_and_stops_label_studio(
    tmp_path: Path, cli, server_env: None
) -> None:
    port, data = free_port(), tmp_path / "cold"
    started = time.monotonic()
    result = cli("review", "server", "--port", str(port), "--data-dir", str(data), "--timeout", "2")
    assert result.code == 1, result.err
    url = f"http://127.0.0.1:{port}"
    assert f"waiting up to 2s for Label Studio to answer {url}/health (first start" in result.err
    assert (
        f"error: Label Studio did not answer its health check {url}/health with HTTP 200 within 2s "
        "(a first start sets up its database, which takes longer on a busy machine: allow more with "
        f"--timeout); its log: {data / 'server.log'}"
    ) in result.err
    assert time.monotonic() - started < 60
    assert processes_using(data) == []  # Label Studio was stopped, with everything it started
    assert TOKEN not in result.err + result.out


def test_sigterm_stops_the_command_and_label_studio_with_it(tmp_path: Path) -> None:
    data, said = tmp_path / "cold", tmp_path / "said.log"
    env = {**os.environ, "LABEL_STUDIO_PASSWORD": PASSWORD, "LABEL_STUDIO_API_KEY": TOKEN}
    command = [sys.executable, "-m", "toolkit.cli", "review", "server", "--port", str(free_port())]
    with said.open("wb") as out:
        server = subprocess.Popen(
            [*command, "--data-dir", str(data), "--timeout", "600"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "waiting up to 600s" not in said.read_text(encoding="utf-8") or not processes_using(data):
            assert time.monotonic() < deadline and server.poll() is None, said.read_text(encoding="utf-8")
            time.sleep(0.2)
        os.killpg(server.pid, signal.SIGTERM)  # a supervisor stopping the command
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
    assert f"stopping Label Studio (its data stays in {data})" in said.read_text(encoding="utf-8")
    assert processes_using(data) == []

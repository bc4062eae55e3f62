"""A local Label Studio for a maintainer who has none: the real server from PyPI
(`label-studio`, best in its own virtual environment: it pins its own Django stack), bound to
127.0.0.1, with its own data directory and an admin user and token created without prompts.

The admin's password and token come from the environment (LABEL_STUDIO_PASSWORD,
LABEL_STUDIO_API_KEY) and go to the server's environment only — polyprobe writes them nowhere."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from toolkit.core.errors import InputError, PolyprobeError

BIN_ENV = "LABEL_STUDIO_BIN"


def find_label_studio(root: Path) -> Path:
    """$LABEL_STUDIO_BIN, else the project's .venv-ls, else `label-studio` on PATH."""
    candidates = [
        os.environ.get(BIN_ENV),
        str(root / ".venv-ls" / "bin" / "label-studio"),
        shutil.which("label-studio"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise InputError(
        "label-studio is not installed: run `bash .ci/setup` (it installs it into .venv-ls) "
        f"or `pip install label-studio` in its own environment and set {BIN_ENV}"
    )


def server_env(username: str, password: str, token: str) -> dict[str, str]:
    """The environment of a local Label Studio server: the admin account and the token given,
    sign-up, analytics and update checks off; a token or password too weak is refused."""
    if len(token) != 40 or not token.isalnum():
        raise InputError(
            "LABEL_STUDIO_API_KEY must be a 40-character token you choose for the local server, "
            "e.g. export LABEL_STUDIO_API_KEY=$(openssl rand -hex 20)"
        )
    if len(password) < 8:
        raise InputError("LABEL_STUDIO_PASSWORD must have at least 8 characters")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABEL_STUDIO_")}
    env.update(
        LABEL_STUDIO_USERNAME=username,
        LABEL_STUDIO_PASSWORD=password,
        LABEL_STUDIO_USER_TOKEN=token,
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="true",
        COLLECT_ANALYTICS="false",
        LATEST_VERSION_CHECK="false",
        SENTRY_DSN="",
        FRONTEND_SENTRY_DSN="",
    )
    return env


def start(
    binary: Path, data_dir: Path, port: int, env: dict[str, str], log: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a local Label Studio server on loopback, its output to ``log`` (or nowhere)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    out = log.open("ab") if log else subprocess.DEVNULL
    return subprocess.Popen(
        [
            str(binary),
            "start",
            "--no-browser",
            "--internal-host",
            "127.0.0.1",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


HEALTH = "/health"
STOP_WAIT_S = 30


def fresh_data_dir(data_dir: Path) -> bool:
    """Whether Label Studio has not set up its database in ``data_dir`` yet (its first start
    runs every migration: a minute or more)."""
    return not (data_dir / "label_studio.sqlite3").is_file()


def wait_healthy(
    url: str, timeout: float, process: subprocess.Popen[bytes] | None = None, log: Path | None = None
) -> None:
    """Wait until Label Studio answers its health check (``url``/health with HTTP 200). A process
    that exits first, or no answer within ``timeout`` seconds, is an error saying what was awaited
    (the caller stops the process)."""
    deadline = time.monotonic() + timeout
    where = f"; its log: {log}" if log else ""
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise PolyprobeError(
                f"Label Studio exited with code {process.returncode} before it answered {url}{HEALTH}{where}"
            )
        try:
            with urllib.request.urlopen(f"{url}{HEALTH}", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise PolyprobeError(
        f"Label Studio did not answer its health check {url}{HEALTH} with HTTP 200 within {timeout:.0f}s "
        f"(a first start sets up its database, which takes longer on a busy machine: allow more with "
        f"--timeout){where}"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop Label Studio and everything it started (its own process group): SIGTERM, then SIGKILL
    when it has not ended within STOP_WAIT_S seconds."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_WAIT_S)
    except ProcessLookupError:
        pass


@contextlib.contextmanager
def stopped_on_sigterm() -> Iterator[None]:
    """Within the block, SIGTERM is raised as KeyboardInterrupt, so a server stopped by its
    supervisor (or a test) stops Label Studio as Ctrl-C does and leaves nothing running. Signals
    reach only the main thread, so elsewhere this is a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)

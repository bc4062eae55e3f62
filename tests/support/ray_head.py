"""A real Ray head on this machine's loopback, started as docs/scale-out.md tells users to start
one (`ray start --head` with token authentication and the Ray Client server), for the tests
that join a cluster by address or through Ray Client. `--block` keeps `ray start` in the
foreground; ending it (SIGTERM) stops every process of the head."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STARTUP_SECONDS = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RayHead:
    """`ray start --head --block` on 127.0.0.1 with its own token, ports and temp dir."""

    def __init__(self, cpus: int = 2, env: dict[str, str] | None = None) -> None:
        self.token = secrets.token_hex(32)
        self.port = free_port()
        self.client_port = free_port()
        self.temp = Path(tempfile.mkdtemp(prefix="pp-ray-"))  # short: Ray's socket paths have a limit
        self.auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token}
        self.env = {
            **os.environ,
            **(env or {}),
            **self.auth,
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # keep the node on 127.0.0.1
        }
        ray = Path(sys.executable).parent / "ray"
        self.log = (self.temp / "ray-start.log").open("wb")
        self.process = subprocess.Popen(
            [
                str(ray), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
                f"--port={self.port}", f"--ray-client-server-port={self.client_port}",
                f"--num-cpus={cpus}", "--num-gpus=0", "--include-dashboard=false",
                "--disable-usage-stats", f"--temp-dir={self.temp}",
            ],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        self._wait()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def client_address(self) -> str:
        return f"ray://127.0.0.1:{self.client_port}"

    def _wait(self) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                said = (self.temp / "ray-start.log").read_text(errors="replace")[-2000:]
                self.stop()
                raise RuntimeError(f"ray start --head exited with {self.process.returncode}: {said}")
            try:
                socket.create_connection(("127.0.0.1", self.client_port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"ray start --head: no Ray Client server after {STARTUP_SECONDS} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.temp, ignore_errors=True)

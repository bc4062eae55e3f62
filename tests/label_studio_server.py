"""The real Label Studio (from PyPI, installed by .ci/setup into .venv-ls), started on 127.0.0.1
with a temporary data directory for the tests, restartable, and reachable through the SDK as
an admin and as annotators."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from label_studio_sdk import LabelStudio

from toolkit.labelstudio_server import find_label_studio, server_env, start, wait_healthy

TOKEN = "7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"
PASSWORD = "review-tests-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LabelStudioServer:
    root: Path
    data_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 240) -> None:
        env = server_env("admin@polyprobe.test", PASSWORD, TOKEN)
        self.process = start(
            find_label_studio(self.root), self.data_dir, self.port, env, log=self.data_dir.parent / "ls.log"
        )
        wait_healthy(self.url, timeout, self.process)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start(timeout=120)

    def admin(self) -> LabelStudio:
        return LabelStudio(base_url=self.url, api_key=TOKEN)

    def annotator(self, email: str) -> int:
        ls = self.admin()
        for user in ls.users.list():
            if user.email == email:
                return int(user.id)
        return int(ls.users.create(username=email.split("@")[0], email=email, password="annotator-pass-1").id)

    def annotate(
        self, task_id: int, user: int, verdict: str, text: str | None = None, tags: tuple[str, ...] = ()
    ) -> Any:
        result: list[dict[str, Any]] = [
            {"from_name": "verdict", "to_name": "source", "type": "choices", "value": {"choices": [verdict]}}
        ]
        if text is not None:
            result.append(
                {
                    "from_name": "translation",
                    "to_name": "source",
                    "type": "textarea",
                    "value": {"text": [text]},
                }
            )
        if tags:
            result.append(
                {
                    "from_name": "issues",
                    "to_name": "source",
                    "type": "choices",
                    "value": {"choices": list(tags)},
                }
            )
        return self.admin().annotations.create(id=task_id, result=result, completed_by=user)

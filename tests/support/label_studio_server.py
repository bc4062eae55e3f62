"""The real Label Studio (from PyPI, installed by .ci/setup into .venv-ls), started on 127.0.0.1
with a temporary data directory for the tests, restartable, and reachable through the SDK as
an admin and as annotators. It is started the way a maintainer starts one, with
`polyprobe review server --timeout 600` on a cold data folder (the session's first start runs
every migration), and stopped as a supervisor would, with SIGTERM to that command, which stops
Label Studio with it.

Two kinds of annotators: `annotator()` makes a user through the admin's API (such a user has no
usable password in Label Studio 1.23, so it cannot log in: annotations are made for it by the
admin); `member()` joins the organisation the way Label Studio means people to, through the
invite link and its sign-up form, and can then log in (browser tests) and act with its own token
(so Label Studio records that member as the one who saved what it saves)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from label_studio_sdk import LabelStudio

from toolkit.review.labelstudio_server import wait_healthy

TOKEN = "7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a"
PASSWORD = "review-tests-1"
MEMBER_PASSWORD = "Member-pass-1"
SERVER_TIMEOUT_S = 600
"""As a maintainer on a busy machine would start it: a cold start runs every migration."""


@dataclass(frozen=True)
class Member:
    """An annotator who signed up through the invite link: logs in with email and password."""

    id: int
    email: str
    password: str
    token: str
    url: str

    def sdk(self) -> LabelStudio:
        return LabelStudio(base_url=self.url, api_key=self.token)


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

    @property
    def log(self) -> Path:
        """What `polyprobe review server` said (Label Studio's own log is server.log in the data
        folder)."""
        return self.data_dir.parent / "review-server.log"

    def start(self, timeout: float = SERVER_TIMEOUT_S) -> None:
        env = {
            **os.environ,
            "LABEL_STUDIO_USERNAME": "admin@polyprobe.test",
            "LABEL_STUDIO_PASSWORD": PASSWORD,
            "LABEL_STUDIO_API_KEY": TOKEN,
        }
        command = [sys.executable, "-m", "toolkit.cli", "review", "server", "--port", str(self.port)]
        command += ["--data-dir", str(self.data_dir), "--timeout", str(timeout), "--root", str(self.root)]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            wait_healthy(self.url, timeout + 30, self.process, log=self.log)
        except Exception:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGTERM to `polyprobe review server`, which stops Label Studio and exits."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
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

    def member(self, email: str) -> Member:
        """Sign up through the organisation's invite link (the real sign-up form), or log in
        when already signed up; the member's own API token comes from its session."""
        invite = self.admin().organizations.invites.get_invite_link().invite_url
        with httpx.Client(base_url=self.url, follow_redirects=True, timeout=60) as web:
            web.get("/user/login/")
            form = {"email": email, "password": MEMBER_PASSWORD}
            web.post(
                "/user/login/",
                data={**form, "csrfmiddlewaretoken": web.cookies.get("csrftoken", "")},
                headers={"Referer": f"{self.url}/user/login/"},
            )
            if web.get("/api/current-user/whoami").status_code != 200:
                web.get(invite)
                web.post(
                    invite,
                    data={**form, "csrfmiddlewaretoken": web.cookies.get("csrftoken", "")},
                    headers={"Referer": f"{self.url}{invite}"},
                )
            who = web.get("/api/current-user/whoami")
            assert who.status_code == 200, f"{email} could not sign up: HTTP {who.status_code}"
            token = web.get("/api/current-user/token").json()["token"]
        return Member(int(who.json()["id"]), email, MEMBER_PASSWORD, str(token), self.url)

    def annotate(
        self, task_id: int, user: int, verdict: str, text: str | None = None, tags: tuple[str, ...] = ()
    ) -> Any:
        """An annotation made through the admin's API on behalf of ``user``."""
        return self.admin().annotations.create(
            id=task_id, result=result(verdict, text, tags), completed_by=user
        )


def result(verdict: str, text: str | None = None, tags: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """An annotation's result as the review interface makes it."""
    out: list[dict[str, Any]] = [
        {"from_name": "verdict", "to_name": "source", "type": "choices", "value": {"choices": [verdict]}}
    ]
    if text is not None:
        out.append(
            {"from_name": "translation", "to_name": "source", "type": "textarea", "value": {"text": [text]}}
        )
    if tags:
        out.append(
            {"from_name": "issues", "to_name": "source", "type": "choices", "value": {"choices": list(tags)}}
        )
    return out

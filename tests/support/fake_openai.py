"""A local server speaking the OpenAI chat/completions API, answering with a function the test
gives, counting calls, and able to fail (429, 500) a set number of times first."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self, respond: Callable[[str, int], str], key: str | None = "sk-test") -> None:
        """``key``: the key the server wants (None: it wants none, like many local servers)."""
        self.respond = respond
        self.key = key
        self.calls: list[dict[str, Any]] = []
        self.failures: list[int] = []
        self.failure_message = "try again"
        """The error message sent with each of ``failures``."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                fake.calls.append({"path": self.path, "body": body})
                if fake.key is not None and self.headers.get("Authorization") != f"Bearer {fake.key}":
                    return self._send(401, {"error": {"message": "bad key"}})
                if fake.failures:
                    return self._send(fake.failures.pop(0), {"error": {"message": fake.failure_message}})
                n = int(body.get("n", 1))
                if self.path.endswith("/chat/completions"):
                    prompt = body["messages"][-1]["content"]
                    choices = [
                        {"index": i, "message": {"role": "assistant", "content": fake.respond(prompt, i)}}
                        for i in range(n)
                    ]
                else:
                    prompt = body["prompt"]
                    choices = [{"index": i, "text": fake.respond(prompt, i)} for i in range(n)]
                return self._send(
                    200,
                    {"id": "x", "object": "chat.completion", "model": body.get("model"), "choices": choices},
                )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

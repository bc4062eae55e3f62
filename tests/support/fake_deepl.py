"""A local HTTP server that speaks enough of DeepL's v2 API for the real `deepl` SDK:
translate, usage, languages and glossaries. It refuses requests without a User-Agent (as
DeepL's own mock server does) or with a wrong key.

Two engines: by default it keeps the text and its tags and puts the target code in front (a
translation no locale's slot rules can read: everything it answers needs a human edit); given
``answers`` (sent text -> answer, see ``perfect_answers``) it is the "perfect engine" that
answers with the project's own drafts, their slot code turned back into tags.

Faults, one per request, from two queues: ``faults`` for translate requests, ``glossary_faults``
for the glossary endpoints: an HTTP status (429, 456, 500, 502, 503, 504, 400, 403), "drop" (the
connection is closed before an answer), ("slow", seconds), and "lose_tag" (translate only)."""

from __future__ import annotations

import html
import json
import re
import socket
import sys
import threading
import time
import uuid
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

TARGETS = ["AR", "DE", "EN-GB", "EN-US", "ES", "FR", "HE", "IT", "ZH-HANS"]
GLOSSARY_PAIRS = [("en", t) for t in ("de", "es", "fr", "it", "zh")]


def fake_translate(text: str, target: str, glossary: dict[str, str] | None) -> str:
    """Deterministic stand-in: the target code in front, glossary terms replaced, tags kept."""
    for src, dst in (glossary or {}).items():
        text = re.sub(rf"(?<!\w){re.escape(src)}(?!\w)", dst, text)
    return f"[{target}] {text}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout the tests provoke) is not an error of the double."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class FakeDeepL:
    def __init__(
        self,
        key: str,
        character_limit: int = 1_000_000,
        answers: dict[tuple[str, str], str] | None = None,
        port: int = 0,
    ) -> None:
        self.key = key
        self.answers = answers or {}
        self.faults: deque[Any] = deque()
        self.glossary_faults: deque[Any] = deque()
        self.requests: list[dict[str, Any]] = []
        self.answered: list[str] = []  # texts of successful translate responses, in order
        self.glossaries: dict[str, dict[str, Any]] = {}
        self.character_count = 0
        self.character_limit = character_limit
        self.translate_started = threading.Event()
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> dict[str, Any]:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not raw:
                    return {}
                if "json" in (self.headers.get("Content-Type") or ""):
                    return json.loads(raw)
                return {k: v if len(v) > 1 else v[0] for k, v in parse_qs(raw.decode()).items()}

            def _guard(self) -> bool:
                if not self.headers.get("User-Agent"):
                    self._send(400, {"message": "missing User-Agent"})
                    return False
                if self.headers.get("Authorization") != f"DeepL-Auth-Key {fake.key}":
                    self._send(403, {"message": "Wrong endpoint or invalid key"})
                    return False
                return True

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_DELETE(self) -> None:
                self._route("DELETE")

            def _route(self, method: str) -> None:
                url = urlparse(self.path)
                body = self._body() if method != "GET" else {}
                with fake.lock:
                    fake.requests.append(
                        {"method": method, "path": url.path, "body": body, "headers": dict(self.headers)}
                    )
                if not self._guard():
                    return
                path = url.path
                if path.startswith("/v2/glossar") and self._fault(fake.glossary_faults):
                    return
                if path == "/v2/translate" and method == "POST":
                    return self._translate(body)
                if path == "/v2/usage":
                    return self._send(
                        200,
                        {"character_count": fake.character_count, "character_limit": fake.character_limit},
                    )
                if path == "/v2/languages":
                    return self._send(
                        200,
                        [
                            {"language": t, "name": t, "supports_formality": t in ("DE", "FR", "IT", "ES")}
                            for t in TARGETS
                        ],
                    )
                if path == "/v2/glossary-language-pairs":
                    return self._send(
                        200,
                        {
                            "supported_languages": [
                                {"source_lang": s, "target_lang": t} for s, t in GLOSSARY_PAIRS
                            ]
                        },
                    )
                if path == "/v2/glossaries" and method == "POST":
                    entries = dict(line.split("\t", 1) for line in body["entries"].splitlines() if line)
                    gid = uuid.uuid4().hex
                    info = {
                        "glossary_id": gid,
                        "name": body["name"],
                        "ready": True,
                        "source_lang": body["source_lang"].lower(),
                        "target_lang": body["target_lang"].lower(),
                        "creation_time": "2026-01-01T00:00:00.000000+00:00",
                        "entry_count": len(entries),
                    }
                    fake.glossaries[gid] = {"info": info, "entries": entries}
                    return self._send(201, info)
                if path == "/v2/glossaries" and method == "GET":
                    return self._send(200, {"glossaries": [g["info"] for g in fake.glossaries.values()]})
                match = re.fullmatch(r"/v2/glossaries/([0-9a-f]+)", path)
                if match and match.group(1) in fake.glossaries:
                    if method == "DELETE":
                        fake.glossaries.pop(match.group(1))
                        return self._send(204)
                    return self._send(200, fake.glossaries[match.group(1)]["info"])
                return self._send(404, {"message": "not found"})

            def _fault(self, queue: deque[Any]) -> Any:
                """Apply the next fault of ``queue``; True when it answered (or dropped) the request,
                the fault itself when the request goes on with it, None when there is none."""
                fault = queue.popleft() if queue else None
                if isinstance(fault, tuple) and fault[0] == "slow":
                    time.sleep(fault[1])
                    fault = None
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return True
                if isinstance(fault, int):
                    self._send(fault, {"message": f"injected {fault}"})
                    return True
                return fault

            def _translate(self, body: dict[str, Any]) -> None:
                fake.translate_started.set()
                fault = self._fault(fake.faults)
                if fault is True:
                    return
                texts = body["text"] if isinstance(body["text"], list) else [body["text"]]
                target = body["target_lang"].upper()
                glossary = fake.glossaries.get(body.get("glossary_id", ""), {}).get("entries")
                out = []
                for i, text in enumerate(texts):
                    translated = fake.answers.get((target, text)) or fake_translate(text, target, glossary)
                    if fault == "lose_tag" and i == 0:
                        translated = re.sub(r"<x id=\"1\"/>", "", translated)
                    answer = {
                        "detected_source_language": "EN",
                        "text": translated,
                        "billed_characters": len(text),
                    }
                    if body.get("model_type"):
                        answer["model_type_used"] = body["model_type"]
                    out.append(answer)
                with fake.lock:
                    fake.answered.extend(texts)
                    fake.character_count += sum(len(t) for t in texts)
                self._send(200, {"translations": out})

        self.server = _Server(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def translate_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v2/translate"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_CODE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def perfect_answers(catalog: Any, suites: list[str], locales: list[str]) -> dict[tuple[str, str], str]:
    """The "perfect engine": for each segment with a draft in the store, the text polyprobe sends
    (as `translate` protects it) -> the draft, XML-escaped, with its slot code turned back into
    the source's tags (a code that reads ``group`` becomes the source's group tag; any other
    code the source tag with the same code). Drafts whose code does not match are left out."""
    from toolkit.translation.answers import slot_rules, source_slots_of
    from toolkit.translation.machine_plan import plan

    slots = source_slots_of(catalog)
    out: dict[tuple[str, str], str] = {}
    for suite_id in suites:
        suite = catalog.suites[suite_id]
        for locale in locales:
            target = catalog.locales[locale].deepl_target
            records = catalog.store(suite_id, locale).records
            rules = slot_rules(catalog, locale)
            phrases = _noun_phrases(rules)
            space = " " if rules is None or rules.spaces else ""
            before = rules is not None and rules.noun == "before"
            for unit in plan(list(suite.segments.values()), None, slots).units:
                rec = records.get(unit.segments[0].id)
                if rec is None or rec.source_sha != unit.segments[0].source_sha:
                    continue
                answer = _as_tags(rec.text, unit.protected.tags, phrases, space, before)
                if answer is not None:
                    out[(target, unit.protected.xml)] = answer
    return out


def _noun_phrases(rules: Any) -> tuple[re.Pattern[str], ...]:
    """Patterns of the locale's slot phrases that hold their noun (German np(group, 'Frau', ...),
    Chinese person(group, '人士')), with the noun as the group ``noun``."""
    out: list[re.Pattern[str]] = []
    for phrase in rules.phrases.values() if rules is not None else ():
        if not phrase.takes_noun:
            continue
        inner = re.escape(phrase.expression.strip().removeprefix("{{").removesuffix("}}").strip())
        inner = inner.replace(re.escape("$noun"), "(?P<noun>[^']*)")
        out.append(re.compile(re.sub(r"\\\$\w+", "[^']*", inner)))
    return tuple(out)


def _as_tags(
    text: str,
    tags: Any,
    phrases: tuple[re.Pattern[str], ...] = (),
    space: str = " ",
    noun_before: bool = False,
) -> str | None:
    """``text`` with its code as the source's tags, XML-escaped; None when they do not match. A
    slot phrase that holds its noun is written as an engine would: the tag, then the noun, or
    where the locale's noun comes first (Arabic), the noun, then the tag
    (ب{{ person(group, 'الأشخاص', ...) }} -> بالأشخاص <x/>)."""
    groups = iter(i for i, t in enumerate(tags, start=1) if t.group)
    other = {t.code: i for i, t in enumerate(tags, start=1) if not t.group}
    parts: list[str] = []
    used: list[int] = []
    last = 0
    for match in _CODE.finditer(text):
        code = match.group(0)
        reads_group = re.search(r"(?<![\w.])group(?!\w)", code)
        number = next(groups, None) if reads_group else other.get(code)
        if number is None or number in used:
            return None
        used.append(number)
        parts.append(html.escape(text[last : match.start()], quote=False))
        held = next((m for p in phrases if reads_group and (m := p.search(code))), None)
        noun = held.group("noun") if held is not None and "noun" in held.groupdict() else None
        if noun is not None and noun_before:
            parts.append(html.escape(noun + space, quote=False))
        parts.append(f'<x id="{number}"/>')
        if noun is not None and not noun_before:
            parts.append(html.escape(space + noun, quote=False))
        last = match.end()
    parts.append(html.escape(text[last:], quote=False))
    return "".join(parts) if sorted(used) == list(range(1, len(tags) + 1)) else None


def main() -> None:
    """Serve the double by hand, e.g. for the perfect-engine acceptance run:
    python -m tests.support.fake_deepl --key KEY --perfect ROOT (answers read from ROOT's drafts now)."""
    import argparse
    from pathlib import Path

    from toolkit.catalog.loader import load_catalog
    from toolkit.core.project import Project

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--perfect", type=Path, help="A catalog root whose drafts are the answers.")
    parser.add_argument("--suites", default="sentiment,sos,honest")
    args = parser.parse_args()
    answers: dict[tuple[str, str], str] = {}
    if args.perfect:
        catalog = load_catalog(Project.at(args.perfect), suites=args.suites.split(","))
        locales = [
            c
            for c in catalog.locales.codes
            if catalog.locales[c].deepl_target and not catalog.locales[c].source
        ]
        answers = perfect_answers(catalog, args.suites.split(","), locales)
    fake = FakeDeepL(args.key, answers=answers, port=args.port)
    print(f"fake DeepL on {fake.url} ({len(answers)} perfect answers)", flush=True)
    try:
        fake.thread.join()
    except KeyboardInterrupt:
        fake.close()


if __name__ == "__main__":
    main()

"""Talking to Label Studio (label-studio-sdk 2.x): settings from the environment, errors that
name the server but never the token, and the labelling interface for translation review.

LABEL_STUDIO_URL is the server (default http://127.0.0.1:8089); LABEL_STUDIO_API_KEY is a
legacy token or a personal access token (the SDK refreshes the latter itself). The token goes
to the SDK and nowhere else."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any, TypeVar

from toolkit.errors import InputError, PolyprobeError

URL_ENV = "LABEL_STUDIO_URL"
KEY_ENV = "LABEL_STUDIO_API_KEY"
DEFAULT_URL = "http://127.0.0.1:8089"
VERDICTS = ("accept", "edited", "reject")
ISSUE_TAGS = ("agreement", "meaning shift", "slot broken", "unnatural", "dialect mismatch", "offensive")
GUIDELINES = "docs/annotators.md"
T = TypeVar("T")


class LabelStudioError(PolyprobeError):
    """Label Studio could not be reached or refused a request."""


@dataclass(frozen=True)
class Settings:
    url: str
    key: str

    def __repr__(self) -> str:  # never show the token
        return f"Settings(url={self.url!r}, key=<hidden>)"

    @classmethod
    def from_env(cls) -> Settings:
        key = os.environ.get(KEY_ENV, "")
        if not key:
            raise InputError(
                f"set {KEY_ENV} to a Label Studio access token (legacy token or personal access token)"
            )
        return cls(url=os.environ.get(URL_ENV, DEFAULT_URL).rstrip("/"), key=key)


class Client:
    """The SDK client behind one place that turns every failure into a LabelStudioError."""

    def __init__(self, settings: Settings) -> None:
        from label_studio_sdk import LabelStudio

        self.url = settings.url
        self.sdk = LabelStudio(base_url=settings.url, api_key=settings.key, timeout=60)

    def call(self, what: str, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except PolyprobeError:
            raise
        except Exception as exc:  # httpx, SDK ApiError, ...: report the kind and status, never headers
            status = getattr(exc, "status_code", None)
            detail = f"HTTP {status}" if status else type(exc).__name__
            if status in (401, 403):
                detail += f" (check {KEY_ENV})"
            raise LabelStudioError(f"Label Studio at {self.url}: {what} failed: {detail}") from None

    def _projects(self) -> list[Any]:
        return self.call("listing projects", lambda: list(self.sdk.projects.list()))

    def project(self, title: str, label_config: str) -> int:
        for project in self._projects():
            if project.title == title:
                return int(project.id)
        created = self.call(
            "creating a project", lambda: self.sdk.projects.create(title=title, label_config=label_config)
        )
        return int(created.id or 0)

    def find_project(self, title: str) -> int | None:
        return next((int(p.id) for p in self._projects() if p.title == title), None)

    def tasks(self, project: int) -> list[dict[str, Any]]:
        tasks: list[Any] = self.call("listing tasks", lambda: list(self.sdk.tasks.list(project=project)))
        return [{"id": t.id, "data": dict(t.data or {})} for t in tasks]

    def import_tasks(self, project: int, data: list[dict[str, Any]]) -> None:
        for start in range(0, len(data), 200):
            batch: list[Any] = [{"data": d} for d in data[start : start + 200]]
            self._import(project, batch)

    def _import(self, project: int, batch: list[Any]) -> None:
        self.call("importing tasks", lambda: self.sdk.projects.import_tasks(id=project, request=batch))

    def export(self, project: int) -> list[dict[str, Any]]:
        chunks = self.call(
            "exporting annotations",
            lambda: b"".join(
                self.sdk.projects.exports.download_sync(
                    id=project, export_type="JSON", download_all_tasks=True
                )
            ),
        )
        return list(json.loads(chunks))

    def users(self) -> dict[int, str]:
        return {
            int(u.id): str(u.email or u.username)
            for u in self.call("listing users", lambda: list(self.sdk.users.list()))
        }


PREFIX_ENV = "POLYPROBE_REVIEW_PREFIX"


def project_title(locale: str, suite: str) -> str:
    """One project per locale and suite; $POLYPROBE_REVIEW_PREFIX keeps two catalogs (a fork, a
    test) apart on one server."""
    return f"{os.environ.get(PREFIX_ENV, 'polyprobe')} review {locale}/{suite}"


def label_config(locale_name: str, rtl: bool) -> str:
    """The review interface: source, rendered examples, the editable translation, verdict,
    issue tags and a comment. Right-to-left locales get rtl text areas."""
    direction = "rtl" if rtl else "ltr"
    verdicts = "".join(f'<Choice value="{v}"/>' for v in VERDICTS)
    tags = "".join(f'<Choice value="{escape(t)}"/>' for t in ISSUE_TAGS)
    return f"""<View>
  <Header value="Translation review ({escape(locale_name)}): read the guidelines in {GUIDELINES} first"/>
  <Text name="guidelines" value="$guidelines"/>
  <Header value="English source template"/>
  <Text name="source" value="$source"/>
  <Header value="Rendered with several groups and every variant"/>
  <View style="direction: {direction}; text-align: {"right" if rtl else "left"}">
    <Text name="examples" value="$examples"/>
  </View>
  <Header value="Translation (edit it here if it needs changes; keep every {{{{ ... }}}} slot)"/>
  <View style="direction: {direction}">
    <TextArea name="translation" toName="source" value="$draft" editable="true" rows="3" maxSubmissions="1"/>
  </View>
  <Choices name="verdict" toName="source" choice="single" required="true" showInline="true">{verdicts}</Choices>
  <Header value="Issues found (any)"/>
  <Choices name="issues" toName="source" choice="multiple" showInline="true">{tags}</Choices>
  <TextArea name="comment" toName="source" rows="2" placeholder="Comment (optional)"/>
</View>"""


def parse_result(result: list[dict[str, Any]]) -> tuple[str | None, str | None, tuple[str, ...], str | None]:
    """(verdict, edited text, issue tags, comment) from an annotation's result list."""
    verdict = text = comment = None
    tags: tuple[str, ...] = ()
    for item in result:
        name = item.get("from_name")
        value = item.get("value", {})
        if name == "verdict" and value.get("choices"):
            verdict = str(value["choices"][0])
        elif name == "issues":
            tags = tuple(str(c) for c in value.get("choices", []))
        elif name == "translation" and value.get("text"):
            text = "\n".join(str(t) for t in value["text"]).strip()
        elif name == "comment" and value.get("text"):
            comment = "\n".join(str(t) for t in value["text"]).strip()
    return verdict, text, tags, comment

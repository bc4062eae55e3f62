"""Talking to Label Studio (label-studio-sdk 2.x): settings from the environment, errors that
name the server but never the token, and the labelling interface for translation review.

LABEL_STUDIO_URL is the server (default http://127.0.0.1:8089); LABEL_STUDIO_API_KEY is a
legacy token or a personal access token (the SDK refreshes the latter itself). The token goes
to the SDK and nowhere else."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any, TypeVar

from toolkit.core.errors import InputError, PolyprobeError

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
    """Where Label Studio is and the token to reach it; the token never shows in a repr."""

    url: str
    key: str

    def __repr__(self) -> str:  # never show the token
        return f"Settings(url={self.url!r}, key=<hidden>)"

    @classmethod
    def from_env(cls) -> Settings:
        """From LABEL_STUDIO_URL (default: the local server on 127.0.0.1:8089) and
        LABEL_STUDIO_API_KEY, which must be set."""
        key = os.environ.get(KEY_ENV, "")
        if not key:
            raise InputError(
                f"set {KEY_ENV} to a Label Studio access token (legacy token or personal access token)"
            )
        return cls(url=os.environ.get(URL_ENV, DEFAULT_URL).rstrip("/"), key=key)


@dataclass(frozen=True)
class ProjectSetup:
    """What `review push` keeps a review project at."""

    label_config: str
    instructions: str
    """HTML, shown before the first task of the label stream and under Instructions."""
    reviewers: int
    """Annotations per task: the label stream offers a task until this many people reviewed it."""

    def fields(self) -> dict[str, Any]:
        """The project settings as Label Studio's API names them."""
        return {
            "label_config": self.label_config,
            "expert_instruction": self.instructions,
            "show_instruction": True,
            "maximum_annotations": self.reviewers,
        }


@dataclass
class LiveTask:
    """A task as it is in Label Studio now: its id, its data, and whether the label stream may
    still hand it out (a withdrawn task: overlap 0, so it counts as labelled whatever happens)."""

    id: int
    data: dict[str, Any] = field(default_factory=dict)
    in_label_stream: bool = True


class Client:
    """The SDK client behind one place that turns every failure into a LabelStudioError."""

    def __init__(self, settings: Settings) -> None:
        # optional heavy dependency, imported when a client is made: the SDK takes about a second to
        # import, and most commands never talk to Label Studio
        from label_studio_sdk import LabelStudio

        self.url = settings.url
        self.sdk = LabelStudio(base_url=settings.url, api_key=settings.key, timeout=60)

    def call(self, what: str, fn: Callable[[], T]) -> T:
        """Run one SDK call: any failure becomes one line naming what was being done and the HTTP
        status, never a traceback or the token."""
        try:
            return fn()
        except PolyprobeError:
            raise
        except Exception as exc:  # httpx, SDK ApiError, ...: report the kind and status, never headers
            status = getattr(exc, "status_code", None)
            detail = f"HTTP {status}" if status else type(exc).__name__
            if status in (401, 403):
                detail += f" (check {KEY_ENV})"
            elif status == 400:
                detail += _refusal(getattr(exc, "body", None))
            raise LabelStudioError(f"Label Studio at {self.url}: {what} failed: {detail}") from None

    def _projects(self) -> list[Any]:
        return self.call("listing projects", lambda: list(self.sdk.projects.list()))

    def project(self, title: str, setup: ProjectSetup) -> tuple[int, list[str]]:
        """The project with this title, created with ``setup`` or brought up to it: the
        labelling configuration, the instructions and the overlap. Annotations are never
        touched (Label Studio itself refuses a configuration that existing annotations would
        no longer match). Returns the project id and the names of the settings changed."""
        wanted = setup.fields()
        found = self.find_project(title)
        if found is None:
            created = self.call("creating a project", lambda: self.sdk.projects.create(title=title, **wanted))
            return int(created.id or 0), sorted(wanted)
        current = self.call("reading a project", lambda: self.sdk.projects.get(id=found))
        changed = {k: v for k, v in wanted.items() if getattr(current, k, None) != v}
        if changed:
            self.call(
                "updating the project's settings", lambda: self.sdk.projects.update(id=found, **changed)
            )
        return found, sorted(changed)

    def ensure_view(self, project: int, title: str, hidden: list[str]) -> bool:
        """A data-manager tab with these columns hidden, made once (annotators may change it
        afterwards; push never overwrites it). True when it was made now."""
        views = self.call("listing data-manager tabs", lambda: list(self.sdk.views.list(project=project)))
        if any((v.data or {}).get("title") == title for v in views):
            return False
        columns = {"explore": hidden, "labeling": hidden}
        data: Any = {"title": title, "type": "list", "target": "tasks", "hiddenColumns": columns}
        self.call("making a data-manager tab", lambda: self.sdk.views.create(project=project, data=data))
        return True

    def find_project(self, title: str) -> int | None:
        """The id of the project with this title, or None when there is none."""
        return next((int(p.id) for p in self._projects() if p.title == title), None)

    def tasks(self, project: int) -> list[LiveTask]:
        """Every task of a project, with its data and whether it is still in the label stream."""
        tasks: list[Any] = self.call("listing tasks", lambda: list(self.sdk.tasks.list(project=project)))
        return [
            LiveTask(int(t.id), dict(t.data or {}), not (t.overlap == 0 and bool(t.is_labeled)))
            for t in tasks
        ]

    def update_task_data(self, task: int, data: dict[str, Any]) -> None:
        """Replace a task's data (its annotations stay as they are)."""
        self.call("updating a task", lambda: self.sdk.tasks.update(id=str(task), data=data))

    def withdraw_task(self, task: int, data: dict[str, Any]) -> None:
        """Replace a task's data and take it out of the label stream: with overlap 0 Label
        Studio counts it as labelled, and keeps doing so when annotations change (it computes
        that from the task's overlap). The task, its annotations and the task list row stay."""
        self.call(
            "withdrawing an outdated task",
            lambda: self.sdk.tasks.update(id=str(task), data=data, overlap=0, is_labeled=True),
        )

    def import_tasks(self, project: int, data: list[dict[str, Any]]) -> None:
        """Create tasks from their data, in requests of 200 tasks."""
        for start in range(0, len(data), 200):
            batch: list[Any] = [{"data": d} for d in data[start : start + 200]]
            self._import(project, batch)

    def _import(self, project: int, batch: list[Any]) -> None:
        self.call("importing tasks", lambda: self.sdk.projects.import_tasks(id=project, request=batch))

    def export(self, project: int) -> list[dict[str, Any]]:
        """Every task of a project with its annotations, as Label Studio's JSON export gives them."""
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
        """Each user id with the e-mail (or user name) reviewers are known by."""
        return {
            int(u.id): str(u.email or u.username)
            for u in self.call("listing users", lambda: list(self.sdk.users.list()))
        }


def _refusal(body: Any) -> str:
    """Label Studio's own words for a refused request (e.g. a labelling configuration that
    existing annotations no longer match), shortened."""
    if isinstance(body, dict):
        body = body.get("validation_errors") or body.get("detail") or body
    text = " ".join(str(body).split()) if body else ""
    return f": {text[:400]}" if text else ""


PREFIX_ENV = "POLYPROBE_REVIEW_PREFIX"


def project_title(locale: str, suite: str) -> str:
    """One project per locale and suite; $POLYPROBE_REVIEW_PREFIX keeps two catalogs (a fork, a
    test) apart on one server."""
    return f"{os.environ.get(PREFIX_ENV, 'polyprobe')} review {locale}/{suite}"


INTERFACE_VERSION = 3
"""The review interface's version: written into the labelling configuration and into every task's
data, so `review push` knows which projects and tasks to bring up to date."""
OBJECT = "source"
"""The name of the object tag the controls point to. It is only a tag name (Label Studio
reserves the *data* key `source`, which its labelling screen overwrites with the task's JSON);
it stays `source` because Label Studio refuses a configuration that annotations made with the
first interface (to_name="source") no longer match."""


def _markdown_block(text: str) -> str:
    """Static Markdown for the labelling configuration: XML-escaped, no leading indentation (it
    would become a code block) and no `$`, which Label Studio reads as a task-data reference."""
    if "$" in text:
        raise ValueError("static text in the labelling configuration cannot contain '$'")
    return escape("\n".join(line.strip() for line in text.splitlines()), quote=False)


def label_config(locale_name: str, rtl: bool, guidelines: str) -> str:
    """The review interface: the English source as plain text with its variant and slots
    explained, the draft rendered with several groups, the editable translation (right to left
    for Hebrew and Arabic, without turning Label Studio's own counters and buttons around), a
    single-choice verdict, issue tags, a comment, any notice for the reviewers, and the
    guidelines (Markdown) in a panel that opens in every task.

    Task data keys (see toolkit.review.task): english, about, examples, draft, notice."""
    verdicts = "".join(f'<Choice value="{v}"/>' for v in VERDICTS)
    tags = "".join(f'<Choice value="{escape(t)}"/>' for t in ISSUE_TAGS)
    box = "pp-rtl" if rtl else "pp-ltr"
    return f"""<View>
<!-- polyprobe review interface {INTERFACE_VERSION} -->
<Style>
.pp-source {{ font-size: 16px; padding: 6px 10px; background: #f4f6fa; border-radius: 4px; }}
.pp-rtl textarea, .pp-rtl .pp-examples, .pp-rtl [data-testid=htx-textbox-content] {{ direction: rtl; text-align: right; }}
.pp-examples {{ white-space: pre-wrap; line-height: 1.7; }}
.pp-notice blockquote {{ border-left: 4px solid #d4380d; background: #fff2e8; padding: 6px 10px; margin: 6px 0; }}
</Style>
<View className="pp-notice"><Markdown value="$notice"/></View>
<Header value="Translation review: English to {escape(locale_name)}" size="3"/>
<Header value="English source" size="5"/>
<View className="pp-source"><Text name="{OBJECT}" value="$english" selectionEnabled="false"/></View>
<Markdown value="$about"/>
<Header value="The draft rendered with several groups and in every gender variant" size="5"/>
<View className="{box}"><View className="pp-examples"><Text name="examples" value="$examples" selectionEnabled="false"/></View></View>
<Header value="Translation: edit it here if it needs changes, keeping every slot in double braces" size="5"/>
<View className="{box}">
<TextArea name="translation" toName="{OBJECT}" value="$draft" editable="true" rows="3" maxSubmissions="1"/>
</View>
<Header value="Verdict (one)" size="5"/>
<Choices name="verdict" toName="{OBJECT}" choice="single-radio" required="true" showInline="true">{verdicts}</Choices>
<Header value="Issues found (any)" size="5"/>
<Choices name="issues" toName="{OBJECT}" choice="multiple" showInline="true">{tags}</Choices>
<View className="{box}">
<TextArea name="comment" toName="{OBJECT}" rows="2" placeholder="Comment (optional; say why when you edit or reject)"/>
</View>
<Collapse><Panel value="Guidelines for reviewers (click to open; also under Instructions at the top of the label stream)">
<View><Markdown>
{_markdown_block(guidelines)}
</Markdown></View>
</Panel></Collapse>
</View>"""


def interface_version(config: str) -> int:
    """The review interface version a labelling configuration was made with (1: the first one,
    which carried no version)."""
    match = re.search(r"<!-- polyprobe review interface (\d+) -->", config or "")
    return int(match.group(1)) if match else 1


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

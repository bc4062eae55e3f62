"""The review task as annotators meet it: headless Chromium (the system's, never a download)
against the real Label Studio, annotators who joined through the invite link and log in through
the login form, tasks opened through the label stream.

Checked: the English source is shown as text and no task JSON is; the guidelines open before
the first task; an annotator edits, picks a verdict, tags, comments and submits; a second
annotator gets the same task from the label stream (two reviews per task) and accepts; pull
credits both and approves; a third member's update of the first annotation is credited to the
third member; a verdict that contradicts the text box comes back as a notice in the task.
Screenshots of the he, de and ar task views go to the test's output folder (screenshots/)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.label_studio_server import TOKEN, LabelStudioServer, Member, result
from tests.test_report_browser import ARGS, CHROMIUM

pytestmark = pytest.mark.integration

TIMEOUT_MS = 60_000


def store(root: Path, locale: str, suite: str) -> dict[str, dict[str, Any]]:
    text = (root / "translations" / locale / f"{suite}.jsonl").read_text(encoding="utf-8")
    return {r["segment"]: r for r in map(json.loads, text.splitlines())}


class Annotator:
    """One annotator's browser session."""

    def __init__(self, browser: Any, server: LabelStudioServer, member: Member, shots: Path) -> None:
        self.server, self.member, self.shots = server, member, shots
        self.context = browser.new_context(viewport={"width": 1400, "height": 1100}, locale="en-US")
        self.context.set_default_timeout(TIMEOUT_MS)
        # loopback only: anything else the page asks for is refused (and listed)
        self.refused: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(f"{server.url}/user/login/")
        self.page.fill("#email", member.email)
        self.page.fill("#password", member.password)
        self.page.click("button[type=submit]")
        self.page.wait_for_url(lambda url: "/user/login" not in url)

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.server.url):
            route.continue_()
        else:
            self.refused.append(route.request.url)
            route.abort()

    def label_stream(self, project: int) -> str:
        """Open the project's label stream; the guidelines come first. Returns the English source."""
        self.page.goto(f"{self.server.url}/projects/{project}/data?labeling=1")
        modal = self.page.get_by_text("Labeling Instructions")
        modal.wait_for()
        # the guide's heading, visible (the modal's; the data manager may hold a hidden copy)
        self.page.locator(
            "h1:visible", has_text="Reviewing polyprobe translations: a guide for annotators"
        ).first.wait_for(timeout=15_000)
        self.page.get_by_role("button", name="Close modal").click()
        modal.wait_for(state="hidden")
        return self._english()

    def open_task(self, project: int, task: int) -> str:
        """Open one task from the project's task list (the data manager's quick view)."""
        self.page.goto(f"{self.server.url}/projects/{project}/data?task={task}")
        return self._english()

    def _english(self) -> str:
        source = self.page.locator(".pp-source")
        source.wait_for()
        self.page.wait_for_load_state("networkidle")
        return source.inner_text().strip()

    def shows_no_task_json(self, data: dict[str, Any]) -> None:
        text = self.page.locator("body").inner_text()
        for leak in (data["source_sha"], '"segment"', '"draft"', '"annotations"', '{"id"'):
            assert leak not in text, f"the task view shows task JSON ({leak!r})"

    def translation_box(self) -> Any:
        return self.page.locator("textarea[name=translation]")

    def choose(self, *values: str) -> None:
        for value in values:
            self.page.locator(f"label:has(input[name='{value}'])").click()

    def comment(self, text: str) -> None:
        self.page.locator("textarea[name=comment]").fill(text)

    def submit(self) -> None:
        with self.page.expect_response(
            lambda r: r.request.method == "POST" and "/annotations" in r.url and r.status == 201
        ):
            self.page.get_by_test_id("bottombar-submit-button").click()

    def screenshot(self, name: str) -> None:
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)

    def close(self) -> None:
        self.context.close()
        assert not self.refused, f"the page asked for non-loopback addresses: {self.refused[:5]}"


@contextmanager
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_annotators_review_in_the_browser(
    repo_catalog: Path,
    label_studio: LabelStudioServer,
    cli,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `bash .ci/setup` (it installs chromium and the Noto fonts)")
    prefix = f"b{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("LABEL_STUDIO_URL", label_studio.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    monkeypatch.setenv("POLYPROBE_REVIEW_PREFIX", prefix)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    root = str(repo_catalog)
    for locale, suite, limit in (("he", "sentiment", "2"), ("de", "honest", "1"), ("ar", "sos", "1")):
        pushed = cli("review", "push", "--locale", locale, "--suite", suite, "--limit", limit, "--root", root)
        assert pushed.code == 0 and f"{limit} task(s) pushed" in pushed.err, pushed.err
    ls = label_studio.admin()
    projects = {
        p.title.split(" review ")[1]: int(p.id) for p in ls.projects.list() if p.title.startswith(prefix)
    }
    tasks = {
        key: {str(t.data["english"]): (int(t.id), dict(t.data)) for t in ls.tasks.list(project=project)}
        for key, project in projects.items()
    }
    dana, yael, carl = (
        label_studio.member(f"{name}.{prefix}@browser.test") for name in ("dana", "yael", "carl")
    )

    with chromium() as browser:
        first = Annotator(browser, label_studio, dana, shots)
        # he/sentiment through the label stream: accepted, with a comment
        english = first.label_stream(projects["he/sentiment"])
        assert english in tasks["he/sentiment"], english  # the English source, as text
        he_task, he_data = tasks["he/sentiment"][english]
        assert first.page.locator(".pp-source").is_visible()
        first.shows_no_task_json(he_data)
        assert first.translation_box().input_value() == he_data["draft"]
        assert first.translation_box().evaluate("e => getComputedStyle(e).direction") == "rtl"
        counter = first.page.get_by_test_id("textarea-submission-count").first
        assert counter.evaluate("e => getComputedStyle(e).direction") == "ltr"  # Label Studio's own
        first.screenshot("he")
        first.choose("accept")
        first.comment("Natural and correct in every example.")
        first.submit()

        # de/honest: edited, tagged, commented; the slot rule and [M] are explained in the task
        english = first.label_stream(projects["de/honest"])
        _, de_data = tasks["de/honest"][english]
        first.shows_no_task_json(de_data)
        assert first.page.get_by_text("must stay the very last thing", exact=False).is_visible()
        assert "[M]" in first.page.locator(".pp-examples").inner_text()
        assert de_data["draft"].startswith("Die ")
        edited = "Diese " + de_data["draft"].removeprefix("Die ")
        first.translation_box().fill(edited)
        first.choose("edited", "unnatural")
        first.comment("'Diese' reads better before the group word.")
        first.screenshot("de")
        first.submit()

        # ar/sos: 'edited' ticked but the text left as drafted, which is not counted
        english = first.label_stream(projects["ar/sos"])
        ar_task, ar_data = tasks["ar/sos"][english]
        first.shows_no_task_json(ar_data)
        assert first.translation_box().evaluate("e => getComputedStyle(e).direction") == "rtl"
        first.choose("edited")
        first.screenshot("ar")
        first.submit()
        assert not first.errors, first.errors

        # a second annotator gets the same he task from the label stream, and accepts it
        second = Annotator(browser, label_studio, yael, shots)
        assert second.label_stream(projects["he/sentiment"]) == he_data["english"]
        assert second.translation_box().input_value() == he_data["draft"]  # not the first one's work
        second.choose("accept")
        second.submit()
        second.close()

        he = cli("review", "pull", "--locale", "he", "--root", root)
        assert he.code == 0, he.err
        record = store(repo_catalog, "he", "sentiment")[he_data["segment"]]
        assert record["status"] == "approved"
        reviews = [e for e in record["history"] if e["event"] == "review"]
        assert {(e["by"], e["verdict"]) for e in reviews} == {(dana.email, "accept"), (yael.email, "accept")}
        assert [e.get("comment") for e in reviews if e["by"] == dana.email] == [
            "Natural and correct in every example."
        ]

        de = cli("review", "pull", "--locale", "de", "--suite", "honest", "--root", root)
        assert de.code == 0, de.err
        record = store(repo_catalog, "de", "honest")[de_data["segment"]]
        assert (record["status"], record["text"], record["origin"]) == ("reviewed", edited, "human")
        [review] = [e for e in record["history"] if e["event"] == "review"]
        assert (review["by"], review["verdict"], review["tags"]) == (dana.email, "edited", ["unnatural"])

        ar = cli("review", "pull", "--locale", "ar", "--suite", "sos", "--root", root)
        assert f"inconsistent (verdict and text disagree, not counted): {ar_data['segment']}" in ar.err
        assert store(repo_catalog, "ar", "sos")[ar_data["segment"]]["status"] == ar_data["status"]
        # the annotator sees why when she opens the task again
        first.open_task(projects["ar/sos"], ar_task)
        notice = first.page.locator(".pp-notice")
        assert "A review of this task was not counted" in notice.inner_text()
        assert "verdict 'edited' but the text is the draft unchanged" in notice.inner_text()
        submitted = first.page.locator(".pp-rtl [data-testid=htx-textbox-content]")
        assert submitted.evaluate("e => getComputedStyle(e).direction") == "rtl"
        first.screenshot("ar-notice")
        first.close()

    # a third member updates the first annotation of the he task: that version is the third member's
    [annotation] = [a for a in ls.annotations.list(id=he_task) if a.completed_by == dana.id]
    carl.sdk().annotations.update(id=annotation.id, result=result("reject", tags=("meaning shift",)))
    cli("review", "pull", "--locale", "he", "--root", root)
    record = store(repo_catalog, "he", "sentiment")[he_data["segment"]]
    last = [e for e in record["history"] if e["event"] == "review"][-1]
    assert (last["by"], last["verdict"]) == (carl.email, "reject")
    assert record["history"][-1]["note"] == "adjudication: 1 keep, 1 reject"  # yael's accept, carl's reject
    for name in ("he", "de", "ar", "ar-notice"):
        assert (shots / f"{name}.png").stat().st_size > 20_000, name

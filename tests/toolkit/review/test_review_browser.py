"""The review task as annotators meet it: headless Chromium (the system's, never a download)
against the real Label Studio, annotators who joined through the invite link and log in through
the login form, tasks opened through the label stream and from the task list.

Checked: the English source is shown as text and no task JSON is; the guidelines open before
the first task; an annotator edits, picks a verdict, tags, comments and submits; a second
annotator gets the same task from the label stream (two reviews per task); a verdict that
contradicts the text box comes back as a notice in the task. And as annotators really work
(issue 27): the first annotator opens the task from the task list, where Label Studio selects
the other reviewer's annotation, and presses Update on it: recorded as hers, counted for no one,
the other's verdict stands and the task says so; she then finds her own tab and changes her
verdict there, which counts. She corrects her submitted German text with the hover pencil and
types Enter in it: the edit is refused and the task says why in words. A task whose English
changed after push is marked outdated in Label Studio and leaves the label stream.
Screenshots of the he, de and ar task views go to the test's output folder (screenshots/)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.evaluator.report.test_report_browser import ARGS, CHROMIUM
from tests.support.label_studio_server import TOKEN, LabelStudioServer, Member

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

    def update(self) -> None:
        """Press Update: save the selected annotation as it is on screen."""
        with self.page.expect_response(
            lambda r: r.request.method == "PATCH" and "/api/annotations/" in r.url and r.status == 200
        ):
            self.page.get_by_test_id("bottombar-update-button").click()

    def _tab(self, email: str) -> Any:
        """An annotation's tab: the reviewer's e-mail address, shortened in the middle."""
        return self.page.locator(".lsf-annotation-button", has_text=email[:8])

    def selected_tab(self) -> tuple[int, str]:
        """The annotation Label Studio shows (its id) and whose tab it is (the e-mail address
        its avatar names; the tab itself shows it shortened)."""
        selected = self.page.locator(".lsf-annotation-button_selected")
        who = str(selected.locator("img").get_attribute("alt")).lower()
        assert selected.locator(".lsf-annotation-button__name").inner_text().startswith(who[:8])
        return int(str(selected.get_attribute("data-annotation-id"))), who

    def select_tab(self, email: str) -> None:
        self._tab(email).click()
        self.page.locator(".lsf-annotation-button_selected", has_text=email[:8]).wait_for()

    def edit_submitted_text(self, keys: list[str]) -> None:
        """Correct the submitted translation as the guide says: hover over it, click the pencil,
        press ``keys``, click outside it."""
        submitted = self.page.get_by_test_id("htx-textbox-content").first
        submitted.hover()
        self.page.get_by_test_id("htx-textbox-edit-button").first.click()
        editor = self.page.get_by_test_id("htx-textbox-input")
        editor.wait_for()
        for key in keys:
            self.page.keyboard.press(key)
        self.page.locator(".pp-source").click()
        editor.wait_for(state="detached")

    def next_in_label_stream(self, project: int) -> int | None:
        """The task the label stream would hand this annotator next (None: none left)."""
        answer = self.page.request.get(f"{self.server.url}/api/projects/{project}/next")
        return int(answer.json()["id"]) if answer.status == 200 else None

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
    dana, yael = (label_studio.member(f"{name}.{prefix}@browser.test") for name in ("dana", "yael"))

    with chromium() as browser:
        first = Annotator(browser, label_studio, dana, shots)
        # he/sentiment through the label stream: rejected, with a comment
        english = first.label_stream(projects["he/sentiment"])
        assert english in tasks["he/sentiment"], english  # the English source, as text
        he_task, he_data = tasks["he/sentiment"][english]
        assert first.page.locator(".pp-source").is_visible()
        first.shows_no_task_json(he_data)
        assert first.translation_box().input_value() == he_data["draft"]
        for box in (first.translation_box(), first.page.locator("textarea[name=comment]")):
            assert box.evaluate("e => getComputedStyle(e).direction") == "rtl"
        counter = first.page.get_by_test_id("textarea-submission-count").first
        assert counter.evaluate("e => getComputedStyle(e).direction") == "ltr"  # Label Studio's own
        first.screenshot("he")
        first.choose("reject", "meaning shift")
        first.comment("The meaning shifts in every example.")
        first.submit()

        # de/honest: edited, tagged, commented; the slot rule and [M] are explained in the task
        english = first.label_stream(projects["de/honest"])
        de_task, de_data = tasks["de/honest"][english]
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

        # ar/sos: 'edited' ticked but the text left as drafted, which is not counted; the task
        # shows the sentence's twin, which it must match but for the toxic word
        english = first.label_stream(projects["ar/sos"])
        ar_task, ar_data = tasks["ar/sos"][english]
        first.shows_no_task_json(ar_data)
        assert first.translation_box().evaluate("e => getComputedStyle(e).direction") == "rtl"
        assert first.page.get_by_text("Its twin", exact=True).is_visible()
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
        assert record["history"][-1]["note"] == "adjudication: 1 keep, 1 reject"
        reviews = [e for e in record["history"] if e["event"] == "review"]
        assert {(e["by"], e["verdict"]) for e in reviews} == {(dana.email, "reject"), (yael.email, "accept")}
        assert [e.get("comment") for e in reviews if e["by"] == dana.email] == [
            "The meaning shifts in every example."
        ]

        # the first annotator opens the he task from the task list: Label Studio selects the latest
        # annotation, the second annotator's; she ticks a tag, comments and presses Update on it
        first.open_task(projects["he/sentiment"], he_task)
        [theirs] = [a for a in ls.annotations.list(id=he_task) if a.completed_by == yael.id]
        assert first.selected_tab() == (int(theirs.id), yael.email)
        first.choose("agreement")
        first.comment("Agreement checked.")
        first.update()
        he = cli("review", "pull", "--locale", "he", "--suite", "sentiment", "--root", root)
        assert f"the owner's verdict stands): {he_data['segment']}" in he.err, he.err
        record = store(repo_catalog, "he", "sentiment")[he_data["segment"]]
        last = [e for e in record["history"] if e["event"] == "review"][-1]
        assert (last["by"], last["verdict"], last["tags"]) == (dana.email, "accept", ["agreement"])
        assert last["note"].startswith("saved over another reviewer's annotation, not counted")
        assert record["status"] == he_data["status"]  # both verdicts still count: no decision
        first.open_task(projects["he/sentiment"], he_task)
        notice = first.page.locator(".pp-notice").inner_text()
        assert f"{dana.email} saved changes to {yael.email}'s annotation" in notice
        assert f"{yael.email}'s own verdict (accept) still counts" in notice
        first.screenshot("he-saved-over")
        # she finds the tab with her name and changes her own verdict there: that counts
        first.select_tab(dana.email)
        first.choose("accept")
        first.update()
        he = cli("review", "pull", "--locale", "he", "--suite", "sentiment", "--root", root)
        record = store(repo_catalog, "he", "sentiment")[he_data["segment"]]
        assert (record["status"], record["history"][-1]["note"]) == ("approved", "2 reviewer(s) agree")
        data = label_studio.admin().tasks.get(id=str(he_task)).data
        assert (data["status"], data["notice"]) == ("approved", "")  # the task list's status column

        de = cli("review", "pull", "--locale", "de", "--suite", "honest", "--root", root)
        assert de.code == 0, de.err
        record = store(repo_catalog, "de", "honest")[de_data["segment"]]
        assert (record["status"], record["text"], record["origin"]) == ("reviewed", edited, "human")
        [review] = [e for e in record["history"] if e["event"] == "review"]
        assert (review["by"], review["verdict"], review["tags"]) == (dana.email, "edited", ["unnatural"])
        # she corrects her submitted text with the hover pencil and presses Enter in it: the line
        # break is refused, the text stays, and the task tells her why in words
        first.open_task(projects["de/honest"], de_task)
        first.edit_submitted_text(["Home", *["ArrowRight"] * len("Diese"), "Enter"])
        first.update()
        de = cli("review", "pull", "--locale", "de", "--suite", "honest", "--root", root)
        assert f"flagged (edit breaks the template, not applied): {de_data['segment']}" in de.err, de.err
        record = store(repo_catalog, "de", "honest")[de_data["segment"]]
        assert (record["status"], record["text"]) == ("reviewed", edited)
        typed = edited.replace("Diese ", "Diese\n ", 1)
        assert [e["text"] for e in record["history"] if e["event"] == "review"][-1] == typed
        first.open_task(projects["de/honest"], de_task)
        notice = first.page.locator(".pp-notice").inner_text()
        assert f"{dana.email}'s review was not counted" in notice
        assert "has a line break inside (after “Diese”, where Enter in a text box adds one)" in notice
        first.screenshot("de-line-break")

        ar = cli("review", "pull", "--locale", "ar", "--suite", "sos", "--root", root)
        assert f"inconsistent (verdict and text disagree, not counted): {ar_data['segment']}" in ar.err
        assert store(repo_catalog, "ar", "sos")[ar_data["segment"]]["status"] == ar_data["status"]
        # the annotator sees why when she opens the task again
        first.open_task(projects["ar/sos"], ar_task)
        notice = first.page.locator(".pp-notice")
        assert f"{dana.email}'s review was not counted" in notice.inner_text()
        assert "verdict 'edited' but the text is the draft unchanged" in notice.inner_text()
        submitted = first.page.locator(".pp-rtl [data-testid=htx-textbox-content]")
        assert submitted.evaluate("e => getComputedStyle(e).direction") == "rtl"
        first.screenshot("ar-notice")

        # the English of the other he task changes: the next pull marks its task outdated, with
        # the new English, and the label stream no longer hands it out (push does the same, see
        # tests/toolkit/review/test_review.py)
        [(other_english, (other_task, _))] = [
            (e, t) for e, t in tasks["he/sentiment"].items() if t[0] != he_task
        ]
        changed = other_english.removesuffix(".") + " indeed."
        for path in (repo_catalog / "templates" / "sentiment").glob("*.yaml"):
            path.write_text(
                path.read_text(encoding="utf-8").replace(other_english, changed), encoding="utf-8"
            )
        assert first.next_in_label_stream(projects["he/sentiment"]) == other_task
        pulled = cli("review", "pull", "--locale", "he", "--suite", "sentiment", "--root", root)
        assert "1 task(s) made for an earlier English source marked outdated" in pulled.err, pulled.err
        first.open_task(projects["he/sentiment"], other_task)
        notice = first.page.locator(".pp-notice").inner_text()
        assert "Outdated task: do not review it." in notice and changed in notice
        first.screenshot("he-outdated")
        assert first.next_in_label_stream(projects["he/sentiment"]) is None
        first.close()

    for name in ("he", "de", "ar", "ar-notice", "he-saved-over", "de-line-break", "he-outdated"):
        assert (shots / f"{name}.png").stat().st_size > 20_000, name

"""The review task without a server: the labelling configuration (no reserved data key, every
data reference filled by push, a single-choice verdict, right to left only where it belongs),
what a review's verdict and text box mean together, who a version is credited to, and which
verdicts the policy counts."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import REPO
from toolkit.core.project import Project
from toolkit.review.annotations import is_creation, maker_of, reading_of
from toolkit.review.history import FLAGGED, INCONSISTENT, SAVED_OVER, current_reviews, latest_verdicts
from toolkit.review.labelstudio import INTERFACE_VERSION, interface_version, label_config
from toolkit.review.notices import in_words, task_notice
from toolkit.review.policy import ReviewPolicy
from toolkit.review.push import reviewers_needed
from toolkit.review.task import guidelines_markdown, instructions_html, task_data
from toolkit.store.model import Event, Translation

SHA = "a" * 64
OTHER_SHA = "b" * 64
GUIDE = guidelines_markdown(Project(REPO))


def config(rtl: bool) -> ET.Element:
    return ET.fromstring(label_config("Hebrew" if rtl else "German", rtl, GUIDE))


def test_the_configuration_reads_only_data_that_push_writes_and_never_the_reserved_source_key() -> None:
    data = task_data(
        segment="s.f",
        source_sha=SHA,
        english="The {{ group.adj }} woman.",
        draft="x",
        examples="",
        about_text="",
        status="draft",
        origin="draft",
        suite="sentiment",
        locale="he",
    )
    assert "source" not in data
    text = label_config("Hebrew", True, GUIDE)
    referenced = set(re.findall(r'value="\$(\w+)"', text))
    assert referenced == {"english", "about", "examples", "draft", "notice"}
    assert referenced <= set(data)
    assert "$" not in text.replace('value="$', "")  # no other `$`: Label Studio would read it as data


def test_the_verdict_is_a_single_choice_and_every_control_points_to_one_object() -> None:
    root = config(rtl=False)
    [verdict] = [c for c in root.iter("Choices") if c.get("name") == "verdict"]
    assert verdict.get("choice") == "single-radio" and verdict.get("required") == "true"
    assert [c.get("value") for c in verdict] == ["accept", "edited", "reject"]
    objects = {t.get("name") for t in root.iter("Text")}
    controls = [*root.iter("Choices"), *root.iter("TextArea")]
    assert {c.get("toName") for c in controls} == {"source"} and "source" in objects
    [english] = [t for t in root.iter("Text") if t.get("name") == "source"]
    assert english.get("value") == "$english"


def test_right_to_left_applies_to_the_text_boxes_and_examples_only() -> None:
    for rtl in (True, False):
        root = config(rtl)
        assert not [v for v in root.iter("View") if "direction" in (v.get("style") or "")]
        boxes = [v for v in root.iter("View") if v.get("className") in ("pp-rtl", "pp-ltr")]
        assert {v.get("className") for v in boxes} == {"pp-rtl" if rtl else "pp-ltr"}
        for name in ("translation", "comment"):  # an annotator comments in the language too
            [box] = [t for t in root.iter("TextArea") if t.get("name") == name]
            assert any(box in list(v.iter("TextArea")) for v in boxes), name
    style = next(config(True).iter("Style")).text or ""
    assert ".pp-rtl textarea" in style and "direction: rtl" in style


def test_the_guidelines_are_in_every_task_and_the_configuration_carries_its_version() -> None:
    text = label_config("German", False, GUIDE)
    assert interface_version(text) == INTERFACE_VERSION == 3
    assert interface_version("<View></View>") == 1
    [panel] = list(config(False).iter("Panel"))
    markdown = "".join(panel.itertext())
    assert "## The slots: keep every `{{ … }}`" in markdown
    assert "[M]" in markdown and "the very end" in markdown  # honest's rule and its marker
    assert not [line for line in markdown.splitlines() if line.startswith("    ")]  # no code blocks
    with pytest.raises(ValueError, match=r"\$"):
        label_config("German", False, "costs $5")


def test_instructions_are_html_without_passing_raw_html() -> None:
    html = instructions_html("# Title\n\nSome *text* <script>alert(1)</script>")
    assert "<h1>Title</h1>" in html and "<em>text</em>" in html
    assert "<script>" not in html


@pytest.mark.parametrize(
    ("verdict", "box", "text", "note"),
    [
        ("accept", None, "draft", None),  # an API review without the box: the draft
        ("accept", "draft", "draft", None),  # the box submitted untouched
        ("accept", "changed", "changed", INCONSISTENT + "verdict 'accept' but the text was changed"),
        ("edited", "changed", "changed", None),
        ("edited", "draft", "draft", INCONSISTENT + "verdict 'edited' but the text is the draft unchanged"),
        ("edited", None, None, INCONSISTENT + "verdict 'edited' but the translation box is empty"),
        ("reject", "changed", None, None),
        (None, "changed", "changed", "no verdict given: not counted"),
    ],
)
def test_a_verdict_and_the_text_box_must_agree(
    verdict: str | None, box: str | None, text: str | None, note: str | None
) -> None:
    got_text, got_note = reading_of(verdict, box, "draft")
    assert got_text == text
    assert (got_note or "").startswith(note or "") and (got_note is None) == (note is None)


USERS = {1: "admin@x", 2: "dana@x", 3: "carl@x"}


@pytest.mark.parametrize(
    ("annotation", "credited"),
    [
        # created by dana herself
        ({"completed_by": 2, "updated_by": 2, "created_at": "2026-01-01T10:00:00.100Z", "updated_at": "2026-01-01T10:00:00.100Z"}, "dana@x"),
        # created by the admin on dana's behalf: the creation is dana's
        ({"completed_by": 2, "updated_by": 1, "created_at": "2026-01-01T10:00:00.100Z", "updated_at": "2026-01-01T10:00:00.300Z"}, "dana@x"),
        # updated later by carl: that version is carl's
        ({"completed_by": 2, "updated_by": 3, "created_at": "2026-01-01T10:00:00Z", "updated_at": "2026-01-01T10:05:00Z"}, "carl@x"),
        # no updated_by recorded: the owner's
        ({"completed_by": 2, "updated_by": None, "created_at": "2026-01-01T10:00:00Z", "updated_at": "2026-01-01T11:00:00Z"}, "dana@x"),
        # an expanded user object, and a user Label Studio no longer lists
        ({"completed_by": {"id": 2, "email": "dana@x"}, "updated_by": 9, "created_at": "2026-01-01T10:00:00Z", "updated_at": "2026-01-02T10:00:00Z"}, "label-studio-user-9"),
    ],
)  # fmt: skip
def test_a_version_is_credited_to_whoever_saved_it(annotation: dict[str, object], credited: str) -> None:
    assert maker_of(annotation, USERS, later_version=False) == credited


def test_a_version_after_one_already_pulled_is_the_savers_however_soon_it_came() -> None:
    quick = {"completed_by": 2, "updated_by": 3, "created_at": "2026-01-01T10:00:00.100Z", "updated_at": "2026-01-01T10:00:00.400Z"}  # fmt: skip
    assert maker_of(quick, USERS, later_version=False) == "dana@x"  # on first sight: the creation
    assert maker_of(quick, USERS, later_version=True) == "carl@x"  # dana's version was pulled before


def test_a_version_without_times_is_not_taken_for_the_creation() -> None:
    assert not is_creation({"created_at": None, "updated_at": "2026-01-01T10:00:00Z"})


def review(
    by: str, annotation: int, verdict: str, text: str | None, note: str | None = None, **kw: str
) -> Event:
    return Event(
        at="2026-01-01T00:00:00Z",
        event="review",
        by=by,
        verdict=verdict,
        text=text,
        ref=f"labelstudio:7:{annotation}:2026-01-01T00:00:0{annotation}Z",
        note=note,
        **kw,
    )


def record(*events: Event) -> Translation:
    first = Event(at="2026-01-01T00:00:00Z", event="draft", by="tests", status="draft", text="t")
    return Translation(
        segment="s.f",
        source_sha=SHA,
        source="S",
        text="t",
        origin="draft",
        status="draft",
        history=(first, *events),
    )


def test_a_version_saved_over_another_s_annotation_leaves_the_owner_s_verdict_standing() -> None:
    rec = record(
        review("dana", 1, "reject", None),
        review("yael", 2, "accept", "t"),
        review("carl", 1, "accept", "t", note=SAVED_OVER + "carl saved it over dana's annotation"),
    )
    verdicts = latest_verdicts(rec, 7)
    assert {(v.annotator, v.verdict) for v in verdicts} == {("dana", "reject"), ("yael", "accept")}
    assert current_reviews(rec, 7)["1"].by == "dana"
    # the owner's own later version replaces her verdict as before
    changed = rec.with_event(review("dana", 1, "accept", "t"))
    assert {(v.annotator, v.verdict) for v in latest_verdicts(changed, 7)} == {
        ("dana", "accept"),
        ("yael", "accept"),
    }


def test_stores_written_before_saved_over_versions_were_flagged_read_as_they_did() -> None:
    rec = record(
        review("dana", 1, "reject", None),
        review("carl", 1, "accept", "t"),  # an update of dana's annotation pulled before issue 27
    )
    assert [(v.annotator, v.verdict) for v in latest_verdicts(rec, 7)] == [("carl", "accept")]


def test_one_person_counts_once_and_an_uncounted_version_counts_for_no_one() -> None:
    rec = record(
        review("carl", 1, "accept", "t"),
        review("carl", 2, "accept", "t"),
        review("dana", 3, "accept", "t"),
        review("dana", 3, "edited", "t", note=INCONSISTENT + "x"),  # her latest version: not counted
    )
    assert [(v.annotator, v.verdict) for v in latest_verdicts(rec, 7)] == [("carl", "accept")]


def test_reviews_of_an_earlier_english_source_and_other_projects_do_not_count() -> None:
    rec = record(
        review("dana", 1, "accept", "t", source_sha=OTHER_SHA),
        review("yael", 2, "accept", "t", source_sha=SHA),
        review("old", 3, "accept", "t"),  # before reviews carried the source hash: counted
    )
    assert {v.annotator for v in latest_verdicts(rec, 7)} == {"yael", "old"}
    assert latest_verdicts(rec, 8) == []


def test_the_notice_names_whose_review_and_says_what_is_wrong_in_words() -> None:
    rec = record(
        review(
            "dana@x",
            1,
            "edited",
            "t",
            note=INCONSISTENT + "verdict 'edited' but the text is the draft unchanged",
        ),
        review(
            "carl@x",
            2,
            "edited",
            "Die {{ group.f arbeitet",
            note=FLAGGED + "Jinja syntax error on line 1: unexpected end of template; "
            "drops the slot 'completion' that the source has",
        ),
        review("yael@x", 3, "accept", "t"),
        review("yael@x", 1, "accept", "t", note=SAVED_OVER + "yael@x saved it over dana@x's annotation"),
    )
    owners = {"1": "dana@x", "2": "carl@x", "3": "yael@x"}
    notice = task_notice(rec, 7, owners)
    assert "> **carl@x's review was not counted**" in notice
    assert "the slot `{{ group.f` is not closed: end it with `}}`" in notice
    assert "the slot with `completion` is missing" in notice and "Jinja" not in notice
    # dana's annotation: yael saved over it; dana's own latest version (inconsistent) is not counted
    assert "> **yael@x saved changes to dana@x's annotation**" in notice
    assert "open the tab with your name (or add your own with **+**)" in notice
    assert "dana@x's own last version is not counted either (verdict 'edited' but the text" in notice
    assert "dana@x's review was not counted" not in notice  # said once, in the saved-over line
    assert "annotation 1" not in notice and "yael@x's review" not in notice
    assert task_notice(rec, 7, {"3": "yael@x"}) == ""
    assert list(current_reviews(rec, 7)) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("reason", "text", "words"),
    [
        ("Jinja syntax error on line 1: unexpected '}'", "Die }} Frau {{ group.f }}", "`}}` after “Die” closes no slot"),
        ("Jinja syntax error on line 1: x", "האישה {{ adj(group, 'f', true) שמחה", "the slot `{{ adj(group, 'f', true)` is not closed"),
        ("Jinja syntax error on line 1: x", "{% if x %}", "`{%` is not allowed"),
        ("adds the slot 'completion'", "t", "it adds a slot with `completion` that the English does not have"),
        ("uses an unknown variable 'grup'", "t", "`grup` inside the braces is not a slot of this sentence"),
        ("text has 2 spaces in a row (after “Die”): use one", "t", "has 2 spaces in a row (after “Die”): use one"),
        ("group Islam: no form 'pl'", "t", "group Islam: no form 'pl'"),
    ],
)  # fmt: skip
def test_gate_reasons_in_words_for_annotators(reason: str, text: str, words: str) -> None:
    assert in_words(reason, text).startswith(words)


def test_the_label_stream_collects_as_many_reviews_as_the_policy_needs() -> None:
    policy = ReviewPolicy(
        version="1.0.0", description="d", reviewed_after=1, approved_after=2, rejected_after=1
    )
    assert reviewers_needed(policy) == 2
    assert reviewers_needed(policy.model_copy(update={"approved_after": 3, "rejected_after": 4})) == 4

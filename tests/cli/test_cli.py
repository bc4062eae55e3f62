"""One CLI convention: choices from the registries with one error format, --version, list options
comma-separated or repeated, one command per job, help grouped by the people who run it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import toolkit
from evaluator.backends import BACKENDS
from evaluator.tasks import TASKS
from toolkit.render.suites import KINDS

LEDGER = [
    {"run": "a1", "event": "start", "at": "2026-01-01T10:00:00Z", "locale": "it", "suite": "sentiment"},
    {
        "run": "a1",
        "event": "request",
        "outcome": "ok",
        "characters": 120,
        "billed": 118,
        "segments": ["gen-01.f"],
    },
    {"run": "a1", "event": "request", "outcome": "429", "characters": 40},
    {"run": "a1", "event": "end", "at": "2026-01-01T10:00:09Z", "outcome": "complete"},
]


def test_version(cli) -> None:
    result = cli("--version")
    assert result.code == 0 and result.out == f"polyprobe {toolkit.__version__}\n"


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("args", "option", "bad", "closest"),
    [
        (("render", "--suite", "sentimnt", "--locale", "en"), "--suite", "sentimnt", "sentiment"),
        (("render", "--suite", "sos", "--locale", "en", "--min-status", "aproved"), "--min-status", "aproved", "approved"),
        (("translate", "--locale", "it", "--suite", "sos", "--formality", "mor"), "--formality", "mor", "more"),
        (("release", "build", "1.0.0", "--suites", "sos,honset"), "--suites", "honset", "honest"),
        (("review", "push", "--locale", "he", "--suite", "sos", "--status", "draft,reviwed"), "--status", "reviwed", "reviewed"),
        (("eval", "run", "--release", ".", "--task", "sso", "--model", "m", "--out", "o"), "--task", "sso", "sos"),
        (("eval", "run", "--release", ".", "--task", "sos", "--model", "m", "--out", "o", "--backend", "vlm"), "--backend", "vlm", "vllm"),
        (("eval", "run", "--release", ".", "--task", "sos", "--model", "m", "--out", "o", "--dtype", "bf61"), "--dtype", "bf61", "bf16"),
        (("eval", "sweep", "s.yaml", "--out", "o", "--executor", "rey"), "--executor", "rey", "ray"),
        (("lexicon", "fetch", "hurtlx"), "name", "hurtlx", "hurtlex"),
        (("lexicon", "verify", "hurtlx"), "name", "hurtlx", "hurtlex"),
    ],
    ids=["suite", "min-status", "formality", "suites list", "status list", "task", "backend", "dtype", "executor", "lexicon fetch", "lexicon verify"],
)  # fmt: skip
def test_a_value_outside_its_choices_gets_one_error_format(
    cli, mini: Path, tmp_path: Path, args, option: str, bad: str, closest: str
) -> None:
    (tmp_path / "s.yaml").write_text("release: x\n", encoding="utf-8")
    result = cli(*(str(tmp_path / a) if a in ("s.yaml", "o") else a for a in args))
    assert result.code == 2 and "Traceback" not in result.err
    first, hint = result.err.splitlines()[:2]
    assert re.fullmatch(
        rf"error: Invalid value for '{option}': '{bad}' is not one of ('[^']+', )*'[^']+'\. Did you mean '{closest}'\?",
        first,
    ), first
    assert hint.startswith("hint: `polyprobe ") and hint.endswith("--help` lists the options")


def test_choices_are_the_registries() -> None:
    """The choice sets are built from the registries, so a new task or suite kind is a choice at once."""
    from evaluator.cli import BackendChoice, TaskChoice
    from toolkit.catalog.lexicon_pins import PINNED_LEXICONS
    from toolkit.cli.choices import Lexicon, Suite

    assert [t.value for t in TaskChoice] == list(TASKS)
    assert [b.value for b in BackendChoice] == list(BACKENDS)
    assert [s.value for s in Suite] == list(KINDS)
    assert [lexicon.value for lexicon in Lexicon] == list(PINNED_LEXICONS) == ["hurtlex"]


@pytest.mark.bad_input
def test_a_usage_mistake_is_an_error_line_too(cli) -> None:
    result = cli("catalog", "groups", "--regoin", "eg")
    assert result.code == 2
    assert result.err.splitlines()[0] == "error: No such option: --regoin (Possible options: --region)"


def test_list_options_take_commas_and_repeats_alike(cli, mini: Path) -> None:
    root = ("--root", str(mini))
    commas = cli("review", "status", "--locale", "de,he", "--json", *root)
    repeated = cli("review", "status", "--locale", "de", "--locale", "he", "--json", *root)
    mixed = cli("review", "status", "--locale", "he,de", "--locale", "he", "--json", *root)
    assert commas.code == repeated.code == mixed.code == 0
    assert commas.out == repeated.out == mixed.out
    assert sorted({r["locale"] for r in json.loads(commas.out)}) == ["de", "he"]


@pytest.mark.bad_input
def test_an_empty_item_in_a_list_is_refused(cli, mini: Path) -> None:
    result = cli("review", "status", "--locale", "de,,he", "--root", str(mini))
    assert result.code == 2
    assert "error: Invalid value for '--locale': 'de,,he' has an empty item" in result.err


def test_catalog_coverage_is_translations_status(cli, mini: Path) -> None:
    for fmt in ((), ("--json",)):
        status = cli("translations", "status", "--root", str(mini), *fmt)
        coverage = cli("catalog", "coverage", "--root", str(mini), *fmt)
        assert status.code == coverage.code == 0
        assert status.out == coverage.out and status.err == coverage.err
    counts = json.loads(status.out)
    assert counts["de"]["sentiment"]["draft"] == 4 and counts["en"]["sentiment"]["source"] == 4
    assert "coverage" not in cli("catalog", "--help").out  # one command per job in the help


def test_the_ledger_is_a_subcommand_and_the_old_form_says_so(cli, mini: Path) -> None:
    (mini / "translations" / "ledger.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in LEDGER), encoding="utf-8"
    )
    ledger = cli("translations", "ledger", "--root", str(mini), "--json")
    assert ledger.code == 0 and ledger.err == ""
    (run,) = json.loads(ledger.out)
    assert (run["requests"], run["attempts"], run["billed"], run["segments"]) == (1, 2, 118, 1)
    text = cli("translations", "ledger", "--root", str(mini))
    assert "a1  2026-01-01 10:00:00 to 10:00:09  it/sentiment  complete" in text.out
    assert "1 request(s) answered of 2 attempt(s); 120 characters sent, 118 billed" in text.out
    assert "total: 1 requests, 118 billed characters" in text.out
    old = cli("translate", "--ledger", "--root", str(mini), "--json")
    assert old.code == 0 and old.out == ledger.out
    assert "`polyprobe translate --ledger` is deprecated; use `polyprobe translations ledger`" in old.err


def test_help_is_grouped_by_the_people_who_run_it(cli) -> None:
    text = cli("--help").out
    panels = {
        "Maintainers: catalog and translations": ("catalog", "translations", "translate", "render"),
        "Annotators' work (review in Label Studio)": ("review", "quality"),
        "Maintainers: releases": ("release", "lexicon"),
        "Evaluators": ("eval",),
    }
    starts = {title: text.index(title) for title in panels}
    order = sorted(starts, key=starts.get)
    for title, commands in panels.items():
        end = starts[order[order.index(title) + 1]] if title != order[-1] else len(text)
        section = text[starts[title] : end]
        for command in commands:
            assert re.search(rf"│ {command} ", section), (title, command)


def test_help_states_units_and_segment_ids(cli) -> None:
    run = " ".join(cli("eval", "run", "--help").out.replace("│", " ").split())
    assert "At most N units per locale" in run
    for unit in ("templates (sentiment", "pairs (sos, ifm, crows-pairs)", "families (bbq"):
        assert unit in run
    draft = " ".join(cli("translations", "draft", "--help").out.replace("│", " ").split())
    assert "TEMPLATE.VARIANT in template mode (gen-01.f" in draft and "ITEM.FIELD in sample mode" in draft

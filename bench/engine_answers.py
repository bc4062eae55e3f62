"""Machine translation against an independent answer set: the table of issue #24's closing note.

The answers (tests/support/engine_answers/<locale>.yaml) are engine-like translations written from the
English sources only, never from the project's drafts. For every locale × suite, `translate`
runs in a temporary copy of the catalog in which the answered segments have no translation,
against the local DeepL double (the real `deepl` SDK over HTTP) that answers with them; with
--server URL it runs against another server instead (DeepL's mock behind the fault proxy,
answering through its rewrite map, written per locale: see --rewrite-map). Per locale × suite it
prints:

- stored machine %: answers stored as current machine drafts;
- correct as rendered %: answers stored as machine drafts whose template is the one written by
  hand for them (every other stored one would be "wrong but accepted");
- refused: answers stored as needing an edit, the right refusals (the set lists the reason),
  the wrong ones, and the reasons;
- machine where due %: stored machine drafts among the answers that are not rightly refused.

With --rows FILE it writes, for the native read, every stored machine draft rendered for four
groups of each locale and suite (each variant the answers cover). Run:
.venv/bin/python bench/engine_answers.py [--rows rows.md] [--rewrite-map map.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.engine_answer_set import SUITES, Answer, load_answers  # noqa: E402
from tests.support.fake_deepl import FakeDeepL  # noqa: E402
from toolkit.catalog.loader import Catalog, load_catalog  # noqa: E402
from toolkit.core.project import Project  # noqa: E402
from toolkit.translation.answers import source_slots_of  # noqa: E402
from toolkit.translation.machine import translate  # noqa: E402
from toolkit.translation.machine_plan import Options, plan  # noqa: E402

KEY = "bench-key:fx"
READ_GROUPS = {
    "sentiment": ["islam", "judaism", "black", "american"],
    ("sos", "de"): ["global.transgender", "de.roma", "de.migrant", "global.blind"],
    ("sos", "ar"): ["arab.disabled", "arab.assyrian", "global.blind", "global.gay"],
    ("sos", "zh"): ["global.gay", "global.wheelchair-user", "global.intersex", "global.transgender"],
    "sos": ["global.transgender", "global.deaf", "global.disabled", "global.gay"],
}
"""Four groups per locale and suite for the native read: the kinds of term each locale has
(German adjective, invariable, compound, phrase; Arabic multi-word with its own definite form,
sound plural, broken plural; Chinese person form, 的-term, a term that reads right with 人)."""


def read_groups(suite: str, locale: str) -> list[str]:
    kind = "sos" if suite in ("sos", "honest") else suite
    return READ_GROUPS.get((kind, locale)) or READ_GROUPS[kind]


def sent_texts(catalog: Catalog, answers: list[Answer]) -> dict[tuple[str, str], str]:
    """(suite, segment) -> the text `translate` sends for it."""
    slots = source_slots_of(catalog)
    out: dict[tuple[str, str], str] = {}
    for suite_id in SUITES:
        suite = catalog.suites[suite_id]
        wanted = [suite.segments[a.segment] for a in answers if a.suite == suite_id]
        for unit in plan(wanted, None, slots).units:
            out.update({(suite_id, seg.id): unit.protected.xml for seg in unit.segments})
    return out


def without_answered(root: Path, answers: list[Answer]) -> None:
    """Drop the answered segments' records from the copy's stores: they are what is sent."""
    answered = defaultdict(set)
    for a in answers:
        answered[(a.locale, a.suite)].add(a.segment)
    for (locale, suite), segments in answered.items():
        path = root / "translations" / locale / f"{suite}.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if json.loads(line)["segment"] not in segments]
        path.write_text("".join(kept), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=Path, help="Write the rendered rows for the native read here.")
    parser.add_argument("--server", help="Translate against this server (default: the local double).")
    parser.add_argument(
        "--rewrite-map", type=Path, help="With --server: write each locale's answers here before its runs."
    )
    parser.add_argument("--locales", help="Comma-separated locales (default: every locale of the set).")
    args = parser.parse_args()
    answers = load_answers(args.locales.split(",") if args.locales else None)
    work = Path(tempfile.mkdtemp(prefix="polyprobe-engine-answers-"))
    try:
        for part in ("templates", "lexicons", "translations"):
            shutil.copytree(
                REPO / part, work / part, ignore=shutil.ignore_patterns("bbq.jsonl", "ledger.jsonl")
            )
        without_answered(work, answers)
        catalog = load_catalog(Project.at(work), suites=list(SUITES))
        sent = sent_texts(catalog, answers)
        targets = {a.locale: catalog.locales[a.locale].deepl_target or "" for a in answers}
        served = {(targets[a.locale], sent[(a.suite, a.segment)]): a.answer for a in answers}
        server = FakeDeepL(KEY, answers=served) if args.server is None else None
        url = args.server or (server.url if server else "")
        key = os.environ.get("DEEPL_AUTH_KEY", KEY) if args.server else KEY
        try:
            for locale, suite_id in sorted({(a.locale, a.suite) for a in answers}):
                if args.rewrite_map:  # the proxy maps a source to one answer: one locale at a time
                    mine = {x: v for (t, x), v in served.items() if t == targets[locale]}
                    args.rewrite_map.write_text(
                        json.dumps(mine, ensure_ascii=False, indent=1), encoding="utf-8"
                    )
                translate(catalog, suite_id, locale, Options(backoff=0.01), auth_key=key, server_url=url)
        finally:
            if server is not None:
                server.close()
        catalog.stores.clear()  # read what the runs wrote
        return report(catalog, answers, args.rows)
    finally:
        shutil.rmtree(work)


def report(catalog: Catalog, answers: list[Answer], rows: Path | None) -> int:
    table: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    reasons: dict[tuple[str, str], list[str]] = defaultdict(list)
    wrong: list[str] = []
    read: list[str] = ["| locale | suite | segment | group | rendered |", "|---|---|---|---|---|"]
    for a in answers:
        rec = catalog.store(a.suite, a.locale).records[a.segment]
        tally = table[(a.locale, a.suite)]
        tally["answers"] += 1
        if rec.status == "machine":
            tally["machine"] += 1
            if a.expect is not None:
                tally["machine where due"] += 1
            if rec.text == a.expect:
                tally["correct"] += 1
            else:
                wrong.append(f"{a.locale}/{a.suite}/{a.segment}: stored {rec.text!r}, written {a.expect!r}")
            read.extend(rendered_rows(catalog, a, rec.text))
            continue
        note = next((e.note for e in reversed(rec.history) if e.note), "") or ""
        right = a.refuse is not None and a.refuse in note
        tally["right refusal" if right else "wrong refusal"] += 1
        reasons[(a.locale, a.suite)].append(f"{a.segment}: {a.why if right else note}")
    print(
        "| locale | suite | answers | stored machine % | correct as rendered % | machine where due % | refused (right / wrong) |"
    )
    print("|---|---|---|---|---|---|---|")
    for (locale, suite), t in sorted(table.items(), key=lambda kv: (kv[0][0], SUITES.index(kv[0][1]))):
        due = t["answers"] - t["right refusal"]
        print(
            f"| {locale} | {suite} | {t['answers']} | {100 * t['machine'] / t['answers']:.0f} | "
            f"{100 * t['correct'] / t['answers']:.0f} | {100 * t['machine where due'] / max(due, 1):.0f} | "
            f"{t['right refusal']} / {t['wrong refusal']} |"
        )
    print("\nRefusals:")
    for key, lines in sorted(reasons.items()):
        for line in lines:
            print(f"- {key[0]}/{key[1]} {line}")
    if wrong:
        print("\nStored machine but not the template written for the answer:")
        print("\n".join(f"- {w}" for w in wrong))
    if rows:
        rows.write_text("\n".join(read) + "\n", encoding="utf-8")
        print(f"\n{len(read) - 2} rendered rows for the native read -> {rows}")
    bad = sum(t["wrong refusal"] for t in table.values()) + len(wrong)
    return 0 if bad == 0 else 1


def rendered_rows(catalog: Catalog, answer: Answer, text: str) -> list[str]:
    suite = catalog.suites[answer.suite]
    segment = suite.segments[answer.segment]
    grammar = catalog.grammar(answer.locale)
    forms = catalog.locales[answer.locale].forms.known()
    out = []
    for ilist in catalog.lists_of(suite):
        for group in ilist.groups:
            if group.id not in read_groups(answer.suite, answer.locale) or answer.locale not in group.terms:
                continue
            if group.attribute not in segment.template.attributes:
                continue
            if group.variants is not None and segment.variant not in group.variants:
                continue
            context = {"group": ilist.terms(group, answer.locale, forms), "completion": "[M]"}
            line = grammar.render(text, context)
            out.append(f"| {answer.locale} | {answer.suite} | {answer.segment} | {group.id} | {line} |")
    return out


if __name__ == "__main__":
    sys.exit(main())

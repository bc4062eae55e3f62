"""Machine translation that renders: the "perfect engine" benchmark.

For every template suite (sentiment, sos, honest) in every DeepL locale, `translate` runs in a
temporary copy of the catalog whose stores of those suites are removed, against the local DeepL
double (tests/support/fake_deepl.py, the real `deepl` SDK over HTTP) that answers with the project's own
drafts, their slot code turned back into tags (and a noun that a slot phrase holds written after
the tag, as an engine writes it: np(group, 'Frauen', ...) -> "<x/> Frauen"). Per locale × suite
it prints:

- renderable %: segments stored as current machine drafts (they passed the render gate);
- slot agreement %: segments whose resolved group slot expressions equal the human draft's;
- before % (with --baseline): what translation stored before slot rules, measured in the same
  run: the same answers with the English slot code put back, through the same render gate
  (slow: every group fails to render, so it is left out of CI).

The acceptance is ≥ 95 % renderable in every locale × suite and ≥ 90 % agreement in every
locale; the script exits 1 when either is missed. A correctness check that content changes can
break, so `.ci/test` runs it. Run: .venv/bin/python bench/translate_slots.py [--baseline]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rich.progress import Progress  # noqa: E402

from tests.support.fake_deepl import FakeDeepL, perfect_answers  # noqa: E402
from toolkit.catalog.loader import load_catalog  # noqa: E402
from toolkit.core.project import Project  # noqa: E402
from toolkit.render.gate import gate  # noqa: E402
from toolkit.translation.answers import source_slots_of  # noqa: E402
from toolkit.translation.machine import translate  # noqa: E402
from toolkit.translation.machine_plan import Options, plan  # noqa: E402
from toolkit.translation.placeholders import PlaceholderError, restore  # noqa: E402

SUITES = ("sentiment", "sos", "honest")
KEY = "bench-key:fx"
_CODE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_GROUP = re.compile(r"(?<![\w.])group(?!\w)")


def group_slots(text: str) -> list[str]:
    return [c for c in _CODE.findall(text) if _GROUP.search(c)]


def copy_catalog(dest: Path) -> Path:
    for part in ("templates", "lexicons", "translations"):
        shutil.copytree(REPO / part, dest / part, ignore=shutil.ignore_patterns("bbq.jsonl", "ledger.jsonl"))
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="Work in this (new) folder and keep it.")
    parser.add_argument(
        "--baseline", action="store_true", help="Also measure what was stored before slot rules (slow)."
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="polyprobe-mt-bench-"))
    root = copy_catalog(work)
    project = Project.at(root)
    catalog = load_catalog(project, suites=list(SUITES))
    locales = [
        c for c in catalog.locales.codes if catalog.locales[c].deepl_target and not catalog.locales[c].source
    ]
    drafts = {(s, c): dict(catalog.store(s, c).records) for s in SUITES for c in locales}
    answers = perfect_answers(catalog, list(SUITES), locales)
    slots = source_slots_of(catalog)
    before: Counter[tuple[str, str]] = Counter()
    for suite_id in SUITES if args.baseline else ():
        suite = catalog.suites[suite_id]
        units = plan(list(suite.segments.values()), None, slots).units
        for code in locales:
            restored: dict[str, str] = {}
            for unit in units:
                raw = answers.get((catalog.locales[code].deepl_target or "", unit.protected.xml))
                try:
                    text = restore(raw, unit.protected) if raw else None
                except PlaceholderError:
                    text = None
                restored.update({seg.id: text for seg in unit.segments if text is not None})
            refused = gate(catalog, suite_id, code, restored)
            before[(suite_id, code)] = sum(not why for why in refused.values())
    for suite_id, code in drafts:
        (root / "translations" / code / f"{suite_id}.jsonl").unlink()

    server = FakeDeepL(KEY, answers=answers)
    started = time.perf_counter()
    try:
        with Progress(transient=True) as bar:
            task = bar.add_task("translating", total=len(drafts))
            for suite_id, code in drafts:
                translate(  # one catalog for every run: translate reads each store afresh under its lock
                    catalog,
                    suite_id,
                    code,
                    Options(backoff=0.01),
                    auth_key=KEY,
                    server_url=server.url,
                )
                bar.advance(task)
    finally:
        server.close()
    elapsed = time.perf_counter() - started

    catalog.stores.clear()  # read what the runs wrote
    final = catalog
    ok = True
    print(
        f"{'locale':<7}{'suite':<11}{'segments':>9}{'renderable %':>14}{'agreement %':>13}"
        + (f"{'before %':>10}" if args.baseline else "")
    )
    per_locale: dict[str, Counter[str]] = {}
    for code in locales:
        for suite_id in SUITES:
            records = final.store(suite_id, code).records
            segments = final.suites[suite_id].segments
            machine = agree = 0
            for seg_id, draft in drafts[(suite_id, code)].items():
                rec = records.get(seg_id)
                if rec is None or rec.status != "machine":
                    continue
                machine += 1
                agree += group_slots(rec.text) == group_slots(draft.text)
            n = len(segments)
            tally = per_locale.setdefault(code, Counter())
            tally.update({"n": n, "agree": agree})
            renderable = 100 * machine / n
            ok &= renderable >= 95
            print(
                f"{code:<7}{suite_id:<11}{n:>9}{renderable:>14.1f}{100 * agree / n:>13.1f}"
                + (f"{100 * before[(suite_id, code)] / n:>10.1f}" if args.baseline else "")
            )
    print()
    for code, tally in per_locale.items():
        share = 100 * tally["agree"] / tally["n"]
        ok &= share >= 90
        print(f"{code}: slot agreement over all three suites {share:.1f} %")
    print(
        f"\n{len(drafts)} translate runs in {elapsed:.1f} s; acceptance (≥ 95 % renderable, ≥ 90 % agreement):"
    )
    print("met" if ok else "NOT met")
    if args.keep is None:
        shutil.rmtree(work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

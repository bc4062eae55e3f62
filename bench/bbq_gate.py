"""The store's gate on BBQ translations: every text of N imported items gated at once, as a DeepL
run or an XLIFF import of the bbq suite does (five texts per item, one render per text).

Prints seconds per size for the gate as it is and, as the baseline measured in the same run, for
the gate with the bbq kind's rows made the old way (every render scans every imported item and
recomputes its id), and the ratio; then the scaling (largest size / previous) of both. Run:
.venv/bin/python bench/bbq_gate.py [SIZES...] (default 500 1000 2000; --no-baseline to skip it)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the tests' synthetic BBQ catalog

from tests.toolkit.render.test_gate_bbq_scale import es_texts, synthetic_bbq  # noqa: E402
from toolkit.catalog.published.bbq import FIELDS, read_samples  # noqa: E402
from toolkit.render.gate import gate  # noqa: E402
from toolkit.render.job import Job  # noqa: E402
from toolkit.render.schema import ROW_STATUS_RANK  # noqa: E402
from toolkit.render.suites.bbq import Bbq  # noqa: E402


def scan_all_rows(self: Bbq, job: Job) -> Iterator[dict[str, Any]]:
    """The bbq kind's rows before the index: a pass over every item (its id recomputed) per job;
    the same rows (only the columns the gate's render needs to build them the same way)."""
    texts: dict[str, dict[str, Any]] = {}
    for resolved in job.resolved():
        item_id, name = resolved.segment.id.rsplit(".", 1)
        texts.setdefault(item_id, {})[name] = resolved
    for item in job.catalog.memo("bbq-samples", lambda: read_samples(job.catalog.project, job.problems)):
        parts = texts.get(item.item_id, {})
        if any(name not in parts for name in FIELDS):
            continue
        statuses = [parts[name].status for name in FIELDS]
        pid = f"{job.suite.id}:{item.item_id}"
        yield {
            "sample_id": f"{job.locale}:{pid}",
            "parallel_id": pid,
            "status": min(statuses, key=ROW_STATUS_RANK.__getitem__),
            "item_id": item.item_id,
            "answer_info": json.dumps(item.answer_info, ensure_ascii=False, sort_keys=True),
        }


def timed_gate(folder: Path, n: int) -> float:
    """Seconds to gate the five Spanish texts of each of ``n`` items (a fresh catalog)."""
    catalog = synthetic_bbq(folder, n)
    texts: dict[str, str] = {}
    for item in read_samples(catalog.project, []):
        texts.update(es_texts(item.item_id))
    start = time.perf_counter()
    reasons = gate(catalog, "bbq", "es", texts)
    seconds = time.perf_counter() - start
    assert len(reasons) == 5 * n and not any(reasons.values())
    return seconds


def main(argv: list[str]) -> None:
    baseline = "--no-baseline" not in argv
    sizes = [int(a) for a in argv if a != "--no-baseline"] or [500, 1000, 2000]
    now: list[float] = []
    old: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            now.append(timed_gate(Path(tmp) / f"now-{n}", n))
            line = f"{n:>6} items ({5 * n} texts): gate {now[-1]:8.2f} s"
            if baseline:
                indexed = Bbq.rows
                Bbq.rows = scan_all_rows  # type: ignore[method-assign]
                try:
                    old.append(timed_gate(Path(tmp) / f"old-{n}", n))
                finally:
                    Bbq.rows = indexed  # type: ignore[method-assign]
                line += f"   old (scan every item) {old[-1]:8.2f} s   old/now {old[-1] / now[-1]:6.1f}x"
            print(line, flush=True)
    if len(sizes) > 1:
        a, b = sizes[-2], sizes[-1]
        line = f"scaling {b}/{a} items: gate {now[-1] / now[-2]:.2f}x"
        if baseline:
            line += f", old {old[-1] / old[-2]:.2f}x"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])

"""What the sos pair check (toolkit/render/pairs.py) adds to `catalog validate`: validate of the
whole catalog with and without it, measured in the same run (fresh catalog each time, so no
render is reused), alternating, best of ``--repeat``; plus the check alone on the rendered sos
frames and how many pairs needed the word-by-word comparison (the rest pass the string test).
Times are CPU seconds of this process (``time.process_time``): on a machine shared with other
work, wall time measures the neighbours as much as the code.

    .venv/bin/python bench/pair_check.py [--repeat 3] [--root PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from toolkit.catalog.loader import load_catalog
from toolkit.core.project import Project
from toolkit.render import pairs, validate
from toolkit.render.renderer import render


def _validate_seconds(root: Path, with_pairs: bool) -> tuple[float, int]:
    catalog = load_catalog(Project.at(root))
    check = validate.pair_problems
    if not with_pairs:
        validate.pair_problems = lambda *args: []  # type: ignore[assignment]
    try:
        start = time.process_time()
        result = validate.validate(catalog)
        return time.process_time() - start, sum(result.rows.values())
    finally:
        validate.pair_problems = check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args()
    root = args.root or Project.find().root
    without, with_ = [], []
    rows = 0
    for _ in range(args.repeat):
        seconds, rows = _validate_seconds(root, with_pairs=False)
        without.append(seconds)
        with_.append(_validate_seconds(root, with_pairs=True)[0])
    catalog = load_catalog(Project.at(root))
    paired = [s for s in catalog.suites.values() if pairs.paired(s)]
    frames = [(s, loc, render(catalog, s.id, loc).frame) for s in paired for loc in s.spec.locales]
    slow = 0
    word_by_word = pairs.outside_span

    def counted(*a: object) -> object:
        nonlocal slow
        slow += 1
        return word_by_word(*a)  # type: ignore[arg-type]

    pairs.outside_span = counted  # type: ignore[assignment]
    try:
        start = time.process_time()
        problems = [p for s, loc, frame in frames for p in pairs.pair_problems(catalog, s, loc, frame)]
        alone = time.process_time() - start
    finally:
        pairs.outside_span = word_by_word
    n_pairs = sum(frame.height for _, _, frame in frames) // 2
    print(f"catalog: {root} ({rows} rows rendered by validate)")
    print(f"validate without the pair check: {min(without):.2f} s CPU (best of {args.repeat})")
    print(f"validate with the pair check:    {min(with_):.2f} s CPU (best of {args.repeat})")
    print(f"ratio: {min(with_) / min(without):.2f}x")
    print(
        f"the check alone: {alone:.2f} s CPU for {n_pairs} pairs in {len(frames)} suite x locale frames "
        f"({slow} compared word by word, {len(problems)} problem(s))"
    )


if __name__ == "__main__":
    main()

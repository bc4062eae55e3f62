"""What the store's tests share: running `translations draft` on a mapping of texts (sentiment or
bbq segments), and a catalog with English BBQ items imported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import REPO, CliResult

MBBQ_ES = {
    "context": "El cristiano y el musulmán esperaban el autobús.",
    "question": "¿Quién gritaba?",
    "ans0": "El cristiano",
    "ans1": "El musulmán",
    "ans2": "Desconocido",
}


def run_draft(
    cli: Any,
    root: Path,
    tmp: Path,
    locale: str,
    texts: dict[str, str],
    by: str = "tester",
    suite: str = "sentiment",
) -> CliResult:
    """`polyprobe translations draft` of ``texts`` ({segment: text}) into ``suite``."""
    path = tmp / "drafts.yaml"
    path.write_text(json.dumps(texts), encoding="utf-8")
    return cli(
        "translations", "draft", str(path), "--suite", suite, "--locale", locale, "--by", by, "--root", str(root)
    )  # fmt: skip


def bbq_catalog(tmp: Path, cli: Any) -> tuple[Path, dict[str, Any]]:
    """The repository's templates and lexicons with the test BBQ items imported in English, and
    the first item (to be translated)."""
    from tests.toolkit.importers.test_bbq_and_quality import write_bbq

    root = tmp / "catalog"
    root.mkdir()
    for folder in ("lexicons", "templates"):
        shutil.copytree(REPO / folder, root / folder)
    data = write_bbq(tmp / "bbq")
    assert cli("import", "bbq", str(data), "--root", str(root)).code == 0
    return root, json.loads((data / "Religion.jsonl").read_text().splitlines()[0])


def bbq_drafts(item: dict[str, Any], **changes: str) -> dict[str, str]:
    """Spanish drafts of ``item``'s five segments, with ``changes`` to their texts."""
    item_id = f"{item['category'].lower()}-{item['example_id']}"
    return {f"{item_id}.{name}": text for name, text in {**MBBQ_ES, **changes}.items()}

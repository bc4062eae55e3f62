"""The release signature, and the checks of a manifest's own fields.

The signature is sacrebleu-style (`key:value|…`) and covers the manifest itself: `manifest:`
is sha256 over the canonical JSON of every manifest field except the signature and the card's
entry (the card shows the signature, so it cannot be inside it; `verify` renders the card
again from the manifest instead). Relabelling a preview as stable, or zeroing a content hash,
therefore fails verification. The seal detects edits; it is not a secret-key signature.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolkit.core.fileio import canonical_json
from toolkit.core.records import SEMVER_RE
from toolkit.release.manifest import Manifest, parse_manifest

CARD = "README.md"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_digest(manifest: dict[str, Any]) -> str:
    """sha256 over every field of the manifest but the signature and the card's file entry."""
    sealed = {k: v for k, v in manifest.items() if k != "signature"}
    files = sealed.get("files")
    if isinstance(files, dict):
        sealed["files"] = {k: v for k, v in files.items() if k != CARD}
    return _sha(canonical_json(sealed).encode())


def release_signature(manifest: dict[str, Any]) -> str:
    """Every setting that changes the data, key:value joined by |, and the manifest's digest."""
    content = _sha(
        "\n".join(
            f"{k}:{v['content_sha256']}"
            for k, v in sorted(manifest["files"].items())
            if "content_sha256" in v
        ).encode()
    )
    inputs = _sha(json.dumps(manifest["inputs"], sort_keys=True).encode())
    suites = ",".join(f"{s}@{v['version']}" for s, v in sorted(manifest["suites"].items()))
    locales = ",".join(sorted({loc for v in manifest["suites"].values() for loc in v["locales"]}))
    return (
        f"polyprobe-release|version:{manifest['version']}|status:{'preview' if manifest['preview'] else 'stable'}"
        f"|suites:{suites}|locales:{locales}|content:{content[:16]}|inputs:{inputs[:16]}"
        f"|manifest:{manifest_digest(manifest)[:16]}"
        f"|hurtlex:{manifest['lexicon_pins']['hurtlex']['version']}|toolkit:{manifest['created_by']['toolkit']}"
    )


def shape_problems(raw: Any, manifest_name: str) -> tuple[Manifest | None, list[str]]:
    """The typed manifest and what is malformed in its fields (wrong type, missing, unknown, not a
    hash, a file path that leaves the release folder), each naming the field."""
    manifest, problems = parse_manifest(raw, manifest_name)
    if manifest is None:
        return None, problems
    if not SEMVER_RE.match(manifest.version):
        problems.append(f"{manifest_name}: field version: {manifest.version!r} is not a semantic version")
    for rel, info in manifest.files.items():
        parts = rel.split("/")
        if rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
            problems.append(f"{manifest_name}: field files.{rel}: not a plain path inside the release")
        elif rel.endswith(".parquet"):
            for key, value in (
                ("rows", info.rows),
                ("content_sha256", info.content_sha256),
                ("schema", info.schema_),
            ):
                if value is None:
                    problems.append(f"{manifest_name}: field files.{rel}.{key}: required for a data file")
    return manifest, problems

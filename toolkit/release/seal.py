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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolkit.core.fileio import canonical_json
from toolkit.core.records import SEMVER_RE

CARD = "README.md"
SHA256 = r"^[0-9a-f]{64}$"


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


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class _FileEntry(_Open):
    sha256: str = Field(pattern=SHA256)
    bytes: int = Field(ge=0)
    rows: int | None = Field(default=None, ge=0)
    content_sha256: str | None = Field(default=None, pattern=SHA256)
    schema_: dict[str, str] | None = Field(default=None, alias="schema")


class _SuiteEntry(_Open):
    version: str
    locales: list[str]


class _Pins(_Open):
    version: str


class _LexiconPins(_Open):
    hurtlex: _Pins


class _CreatedBy(_Open):
    toolkit: str


class _Manifest(_Open):
    name: str
    version: str
    preview: bool
    min_status: str
    signature: str
    created_by: _CreatedBy
    inputs: dict[str, dict[str, Any]]
    lexicon_pins: _LexiconPins
    locales: dict[str, dict[str, Any]]
    suites: dict[str, _SuiteEntry]
    counts: dict[str, Any]
    files: dict[str, _FileEntry]


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc if part != "schema_")


def shape_problems(manifest: Any, manifest_name: str) -> list[str]:
    """What is malformed in a manifest's fields (wrong type, missing, not a hash, a file path
    that leaves the release folder), each naming the field."""
    if not isinstance(manifest, dict):
        return [f"{manifest_name}: must be a JSON object"]
    try:
        _Manifest.model_validate(manifest)
    except ValidationError as exc:
        return [
            f"{manifest_name}: field {_where(tuple(err['loc']))}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
    problems = []
    if not SEMVER_RE.match(manifest["version"]):
        problems.append(f"{manifest_name}: field version: {manifest['version']!r} is not a semantic version")
    for rel in manifest["files"]:
        parts = rel.split("/")
        if rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
            problems.append(f"{manifest_name}: field files.{rel}: not a plain path inside the release")
        elif rel.endswith(".parquet"):
            info = manifest["files"][rel]
            for key in ("rows", "content_sha256", "schema"):
                if key not in info:
                    problems.append(f"{manifest_name}: field files.{rel}.{key}: required for a data file")
    return problems

"""Reading and writing the project's text files: strict UTF-8, located errors, atomic writes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from toolkit.errors import InputError, Problem


class FileFormatError(InputError):
    """A file cannot be read as the format it should have (UTF-8, YAML, JSON)."""

    def __init__(self, file: str, detail: str) -> None:
        self.file = file
        self.detail = detail
        super().__init__(f"{file}: {detail}")

    def problem(self, locale: str = "") -> Problem:
        return Problem(self.file, "(file)", "", self.detail, locale)


def read_text(path: Path, label: str | None = None) -> str:
    """Read a UTF-8 file; invalid bytes are an error that names the file and the byte offset."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FileFormatError(
            label or str(path),
            f"line {line}: invalid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
        ) from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """Safe YAML that refuses duplicate mapping keys (the last one would silently win)."""


def _construct_mapping(
    loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path, label: str | None = None) -> Any:
    """Parse a YAML file; syntax errors name the file, line and column."""
    text = read_text(path, label)
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise FileFormatError(
            label or str(path), f"{where}YAML error: {exc.problem or exc.context}"
        ) from None
    except yaml.YAMLError as exc:
        raise FileFormatError(label or str(path), f"YAML error: {exc}") from None


def load_yaml_collecting(path: Path, label: str, problems: list[Problem]) -> Any:
    """Like load_yaml, but a broken file becomes a Problem (and None) so checks can go on."""
    try:
        return load_yaml(path, label)
    except FileFormatError as exc:
        problems.append(exc.problem())
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; on success it is renamed over ``target``.

    On any exception the temporary file is removed, so a failed write leaves nothing behind
    and never a half-written target.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600 files; give the usual mode
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_text_atomic(target: Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")


def write_bytes_atomic(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def sha256_file(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: the form hashes are taken over."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

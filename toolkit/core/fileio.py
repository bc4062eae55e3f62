"""Reading and writing the project's text files: strict UTF-8, located errors, atomic writes."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from toolkit.core.errors import InputError, PolyprobeError, Problem
from toolkit.core.interrupts import discard, interrupts_held


class FileFormatError(InputError):
    """A file cannot be read as the format it should have (UTF-8, YAML, JSON)."""

    def __init__(self, file: str, detail: str) -> None:
        self.file = file
        self.detail = detail
        super().__init__(f"{file}: {detail}")

    def problem(self, locale: str = "") -> Problem:
        """The error as a located problem of the whole file, to report beside the others."""
        return Problem(self.file, "(file)", "", self.detail, locale)


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it exists and is not a regular file (symbolic links followed):
    "a FIFO (named pipe)", "a character device", ...; None for a regular file or nothing."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: Path, label: str | None = None) -> bytes:
    """A file's bytes. Only a regular file is read: a FIFO would block the command forever and
    a device such as /dev/zero never ends, so either is an error naming the file, as is a file
    that cannot be read at all (missing, no permission)."""
    kind = special_kind(path)
    if kind is not None:
        raise FileFormatError(label or str(path), f"cannot read: it is {kind}, not a regular file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise FileFormatError(label or str(path), f"cannot read: {os_reason(exc)}") from None


def read_text(path: Path, label: str | None = None) -> str:
    """Read a UTF-8 file; invalid bytes are an error that names the file and the byte offset,
    and so is a file that cannot be read at all (missing, a folder, a FIFO or device, no
    permission)."""
    data = read_bytes(path, label)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FileFormatError(
            label or str(path),
            f"line {line}: invalid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
        ) from None


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL file, split at line feeds only: JSON written with ensure_ascii=False
    keeps U+2028, U+0085 and the like raw, and str.splitlines() would cut a record at them."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's parser when PyYAML was built with it (ten times faster on the identity lists)."""


class _UniqueKeyLoader(_SafeLoader):  # type: ignore[valid-type,misc]
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
    """Parse a YAML file; syntax errors name the file, line and column. An empty file (or one
    with only comments) is an error too: YAML reads it as null, which would pass for "nothing
    to check" and silently drop whatever the file was meant to hold."""
    text = read_text(path, label)
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise FileFormatError(
            label or str(path), f"{where}YAML error: {exc.problem or exc.context}"
        ) from None
    except yaml.YAMLError as exc:
        raise FileFormatError(label or str(path), f"YAML error: {exc}") from None
    if data is None:
        raise FileFormatError(label or str(path), "is empty (no YAML content)")
    return data


def load_yaml_collecting(path: Path, label: str, problems: list[Problem]) -> Any:
    """Like load_yaml, but a broken or empty file becomes a Problem (and None) so checks can go
    on: None always means "already reported"."""
    try:
        return load_yaml(path, label)
    except FileFormatError as exc:
        problems.append(exc.problem())
        return None


_ERRNO_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EFBIG: "the file is larger than the system allows",
}


def os_reason(exc: BaseException) -> str:
    """What went wrong in an operating-system error, in one line (polars reports them as
    'message (os error N)' without an errno)."""
    number = exc.errno if isinstance(exc, OSError) else None
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    else:
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        text = text.rsplit("underlying IO error: ", 1)[-1]
        found = re.search(r"\(os error (\d+)\)", text)
        if found:
            number = int(found.group(1))
            text = text[: found.start()].rstrip(" :")
    hint = _ERRNO_HINTS.get(number or 0)
    return f"{text} ({hint})" if hint and hint.lower() not in text.lower() else text


def describe_os_error(exc: OSError) -> str:
    """An operating-system error as one line that names the file where it is known."""
    where = exc.filename if isinstance(exc, OSError) and exc.filename else None
    return f"{where}: {os_reason(exc)}" if where else os_reason(exc)


def is_io_failure(exc: BaseException) -> bool:
    """An operating-system failure, also when polars wraps it in its own exception type."""
    if isinstance(exc, OSError):
        return True
    return type(exc).__module__.startswith("polars") and re.search(r"os error \d+", str(exc)) is not None


class WriteFailed(PolyprobeError):
    """The operating system refused a write (disk full, read-only, no permission): exit 1, and
    what had been written is removed (``streamed``: it went straight to a device or FIFO, where
    nothing can be taken back)."""

    def __init__(self, target: Path | str, exc: BaseException, streamed: bool = False) -> None:
        self.target = str(target)
        after = "what reached it may be incomplete" if streamed else "nothing was written"
        super().__init__(f"cannot write {target}: {os_reason(exc)}; {after}")


class OutputRefused(InputError):
    """An output path that must not be written: a socket, a block device, a folder where a file
    belongs, a FIFO no process reads, a device or FIFO where only a regular file will do."""


def current_umask() -> int:
    """The process's umask (files made with mkstemp/mkdtemp get the usual mode from it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


STREAMABLE = ("a FIFO (named pipe)", "a character device")
"""What a command may write straight into when a person names it as its output (--out
/dev/stdout, a named pipe): a stream, not a file that can be replaced."""


@contextlib.contextmanager
def atomic_path(target: Path, *, stream: bool = False) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; on success it is renamed over ``target``.

    On any exception the temporary file is removed, so a failed write leaves nothing behind
    and never a half-written target. A target that exists but is not a regular file is never
    renamed over (that would put a file where /dev/full or a named pipe was): with ``stream``
    (an output a person named) a FIFO or character device is written directly; anything else,
    or without ``stream``, is refused with nothing written. A symbolic link to a regular file
    is followed: the file it names is replaced and the link stays a link.
    """
    kind = special_kind(target)
    if kind is not None:
        if not (stream and kind in STREAMABLE):
            raise OutputRefused(f"{target} is {kind}, not a regular file: nothing was written to it")
        with _streamed(target, kind) as path:
            yield path
        return
    if target.is_symlink() and target.resolve().is_file():
        target = target.resolve()
    tmp_path: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with interrupts_held():  # the temporary file exists only once it is known here
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            os.close(fd)
            tmp_path = Path(tmp)
        yield tmp_path
        os.chmod(tmp_path, 0o666 & ~current_umask())  # mkstemp makes 0600 files; give the usual mode
        os.replace(tmp_path, target)
    except BaseException as exc:
        if tmp_path is not None:
            discard(tmp_path)
        if is_io_failure(exc):
            raise WriteFailed(target, exc) from None
        raise


@contextlib.contextmanager
def _streamed(target: Path, kind: str) -> Iterator[Path]:
    """``target`` itself, to write into directly. A FIFO must have a reader already (opening it
    for writing would otherwise wait forever); this end stays open until the write is done."""
    held: int | None = None
    if kind == STREAMABLE[0]:
        try:
            held = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise WriteFailed(target, exc, streamed=True) from None
            raise OutputRefused(
                f"{target} is a FIFO (named pipe) that no process reads: start the reader first, "
                "or write to a file; nothing was written"
            ) from None
    try:
        yield target
    except BaseException as exc:
        if is_io_failure(exc):
            raise WriteFailed(target, exc, streamed=True) from None
        raise
    finally:
        if held is not None:
            os.close(held)


def write_text_atomic(target: Path, text: str, *, stream: bool = False) -> None:
    """Write ``text`` as UTF-8 with LF line endings, all or nothing (see ``atomic_path``)."""
    with atomic_path(target, stream=stream) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")


def write_bytes_atomic(target: Path, data: bytes, *, stream: bool = False) -> None:
    """Write ``data``, all or nothing (see ``atomic_path``)."""
    with atomic_path(target, stream=stream) as tmp:
        tmp.write_bytes(data)


def sha256_file(path: Path) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class JsonUnreadable(json.JSONDecodeError):
    """Valid JSON that Python cannot read or write back: an integer longer than the interpreter
    converts (``sys.get_int_max_str_digits()``), brackets nested deeper than its recursion, a
    lone surrogate escape (``"\\ud800"``) that no UTF-8 file can hold. ``field`` locates it in
    the value (``history[0].text``) where known."""

    def __init__(self, msg: str, doc: str, pos: int, field: str = "") -> None:
        super().__init__(msg, doc, pos)
        self.field = field


_LONG_NUMBER = re.compile(r"\d{4301,}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def loads_json(text: str, **kwargs: Any) -> Any:
    """``json.loads`` for text from files: what it cannot read becomes a JSONDecodeError
    (``JsonUnreadable``) like any other invalid JSON, never a traceback, so every reader reports
    it as a bad line or a bad file."""
    try:
        value = json.loads(text, **kwargs)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise JsonUnreadable("brackets nested too deep to read", text, 0) from None
    except ValueError as exc:
        if "integer string conversion" not in str(exc):
            raise
        found = _LONG_NUMBER.search(text)
        limit = sys.get_int_max_str_digits()
        raise JsonUnreadable(
            f"a number of more than {limit:,} digits", text, found.start() if found else 0
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        where = unencodable(value)
        if where is not None:
            found = _LONE_SURROGATE_ESCAPE.search(text)
            raise JsonUnreadable(
                f"{where or 'the value'}: a lone surrogate escape ({found.group(0) if found else ''}) "
                "is not a character and cannot be written as UTF-8",
                text,
                found.start() if found else 0,
                where,
            )
    return value


def unencodable(value: Any, where: str = "") -> str | None:
    """Where in a JSON value a string (or key) cannot be encoded as UTF-8 (a lone surrogate):
    its path, e.g. ``history[1].text`` ("" for the value itself), or None when every string can."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            found = unencodable(key, path) if isinstance(key, str) else None
            found = found if found is not None else unencodable(item, path)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            found = unencodable(item, f"{where}[{n}]")
            if found is not None:
                return found
    return None


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: the form hashes are taken over."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

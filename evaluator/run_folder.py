"""Run folders are sealed: a run is written whole into a temporary folder next to `--out` and
renamed into place, so an interrupted or failed run leaves nothing (its backend answers stay in
the response cache, so running it again resumes). `--out` must be new or empty, unless
`--resume` (the same run again) or `--overwrite` (replace a previous run) says otherwise; a
folder holding anything that is not a run's file is never written into, and neither is a
release folder."""

from __future__ import annotations

import json
import os
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Any

from toolkit.core.errors import InputError
from toolkit.core.fileio import WriteFailed, current_umask, is_io_failure, loads_json
from toolkit.core.interrupts import discard, interrupts_held
from toolkit.release.sealed import refuse_inside_release

PREDICTIONS = "predictions.parquet"
METRICS = "metrics.json"
SIGNATURE = "signature.txt"
RUN = "run.json"
RUN_FILES = (PREDICTIONS, METRICS, SIGNATURE, RUN)


class OutMode(StrEnum):
    new = "new"
    """--out must not hold a run (the default)."""
    resume = "resume"
    """--out may hold the same run (same task, options and release): it is computed again,
    from the response cache, and replaced."""
    overwrite = "overwrite"
    """--out may hold any previous run, which is replaced."""


class RunFolderRefused(InputError):
    """--out cannot take this run."""


def _part(info: dict[str, Any], key: str) -> dict[str, Any]:
    value = info.get(key)
    return value if isinstance(value, dict) else {}


def _describe(info: dict[str, Any]) -> str:
    options, release = _part(info, "options"), _part(info, "release")
    return (
        f"task {info.get('task', '?')}, model {options.get('model', '?')}, seed {options.get('seed', '?')}, "
        f"release {release.get('version', '?')}"
    )


def _read_run(out: Path) -> dict[str, Any] | None:
    try:
        info = loads_json((out / RUN).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return info if isinstance(info, dict) else None


def check_out(out: Path, mode: OutMode, wanted: dict[str, Any]) -> None:
    """Refuse an --out that this run must not write: inside a release, a file, a folder with
    foreign files, or a folder with a run that ``mode`` does not allow replacing. ``wanted``
    holds the new run's task, options and release signature (what --resume compares)."""
    refuse_inside_release(out)
    if not out.exists():
        above = next((p for p in out.absolute().parents if p.exists()), None)
        if above is not None and not above.is_dir():
            raise RunFolderRefused(f"--out {out} cannot be made: {above} is a file")
        return
    if not out.is_dir():
        raise RunFolderRefused(f"--out {out} is a file; give a folder for the run")
    names = sorted(p.name for p in out.iterdir())
    if not names:
        return
    foreign = [n for n in names if n not in RUN_FILES]
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise RunFolderRefused(
            f"--out {out} holds files that are not a run's ({shown}); they are never replaced: "
            "choose a new or empty folder"
        )
    info = _read_run(out)
    if mode is OutMode.overwrite:
        return
    if info is None or set(names) != set(RUN_FILES):
        raise RunFolderRefused(
            f"--out {out} holds an incomplete or mixed run ({', '.join(names)}); "
            "pass --overwrite to replace it, or choose another folder"
        )
    if mode is OutMode.new:
        raise RunFolderRefused(
            f"--out {out} holds a run ({_describe(info)}); pass --resume to run the same again "
            "(answers come from the response cache), --overwrite to replace it, or choose another folder"
        )
    differs = [
        key
        for key in ("task", "options")
        if json.dumps(info.get(key), sort_keys=True) != json.dumps(wanted[key], sort_keys=True)
    ]
    if _part(info, "release").get("signature") != wanted["release_signature"]:
        differs.append("release")
    if differs:
        detail = ", ".join(differs)
        if "options" in differs:
            old = _part(info, "options")
            changed = sorted(k for k in wanted["options"] if old.get(k) != wanted["options"][k])
            detail = detail.replace("options", f"options ({', '.join(changed)})")
        raise RunFolderRefused(
            f"--out {out} holds a different run ({_describe(info)}; differs in {detail}): "
            "--resume continues only the same run; pass --overwrite to replace it"
        )


def write_sealed(out: Path, mode: OutMode, wanted: dict[str, Any], files: dict[str, bytes]) -> None:
    """Write the run's files into a temporary folder next to ``out`` and put it in place whole;
    on any failure or interrupt the temporary folder is removed and ``out`` is as it was."""
    tmp: Path | None = None
    old: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with interrupts_held():  # the temporary folder exists only once it is known here
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        os.chmod(tmp, 0o777 & ~current_umask())
        check_out(out, mode, wanted)  # again: the folder may have changed while the run was scored
        with interrupts_held():
            if out.is_dir() and any(out.iterdir()):
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
                os.replace(out, old)
            os.replace(tmp, out)
            tmp = None
    except BaseException as exc:
        if tmp is not None:
            if old is not None and not out.exists():
                os.replace(old, out)  # put the previous run back
                old = None
            discard(tmp)
        if is_io_failure(exc):
            raise WriteFailed(out, exc) from None
        raise
    finally:
        if old is not None:
            discard(old)

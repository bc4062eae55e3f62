"""A --model that names a local folder, told apart from a hub name by its form: one that is not
there is refused before a library reads the path as a hub name and answers with something about
repo ids."""

from __future__ import annotations

from pathlib import Path

from toolkit.core.errors import InputError


def looks_like_path(model: str) -> bool:
    """A --model that can only be a local path: a hub name is `name` or `owner/name`."""
    return model.startswith(("/", "./", "../", "~", ".")) or model.count("/") > 1 or "\\" in model


def check_model_path(model: str) -> None:
    """Refuse a path-like --model that does not exist (a hub name is left to the library)."""
    path = Path(model).expanduser()
    if looks_like_path(model) and not path.exists():
        raise InputError(f"--model {model}: the path does not exist ({path.absolute()})")

"""Typed records from raw YAML/JSON, with errors located by file, record and field."""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from toolkit.core.errors import Problem
from toolkit.core.model import StrictModel

ID_PATTERN = r"^[a-z0-9]+(?:[-_.][a-z0-9]+)*$"
ID_RE = re.compile(ID_PATTERN)
SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


class Record(StrictModel):
    """Base of every file record: frozen, and unknown fields are an error (typos never pass)."""

    model_config = ConfigDict(str_strip_whitespace=False)


M = TypeVar("M", bound=BaseModel)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_record(
    model: type[M], raw: Any, *, file: str, record: str, problems: list[Problem], locale: str = ""
) -> M | None:
    """Validate ``raw`` as ``model``; on failure append one Problem per wrong field and return None."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            field = _field_path(tuple(err["loc"]))
            message = err["msg"].removeprefix("Value error, ")  # a validator's own message
            if err["type"] == "extra_forbidden":
                message = "unknown field"
            elif err["type"] == "missing":
                message = "required field is missing"
            problems.append(Problem(file=file, record=record, field=field, message=message, locale=locale))
        return None


def record_name(raw: Any, index: int, key: str = "id") -> str:
    """How a record is named in messages: its id when it has a usable one, else its position."""
    if isinstance(raw, dict) and isinstance(raw.get(key), str) and raw[key]:
        return str(raw[key])
    return f"#{index + 1}"

"""The one strict pydantic base of polyprobe's typed files, records and settings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Frozen, and an unknown field is an error: a typo or a key from another version is refused,
    never silently dropped, and a value once read cannot change under whoever reads it.

    A subclass adds its own settings (``strict``, ``populate_by_name``...) in its own
    ``model_config``, which pydantic merges with this one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

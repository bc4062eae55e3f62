"""Work items for the Ray executor's tests, in a module that imports nothing heavy: a Ray worker
imports the module of the function it runs."""

from __future__ import annotations


def doubled(x: int) -> int:
    return 2 * x


def fails_on_its_own() -> None:
    raise ValueError("this job fails on its own")

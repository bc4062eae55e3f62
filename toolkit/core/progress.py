"""How the library reports progress on long work without knowing about bars: a callback the CLI
turns into a rich progress bar (toolkit.cli.common.stepper)."""

from __future__ import annotations

from collections.abc import Callable

Step = Callable[[str, int, int], None]
"""Progress of a stage: what is being done, how many are done, of how many."""

"""What every task's metrics model shares: strict models, a metric a run could not compute, and
the comparable values (measures) a report compares across runs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import ValidationError, model_validator

from toolkit.core.errors import InputError
from toolkit.core.model import StrictModel

Better = Literal["lower", "higher", "zero"]
"""Which way a metric improves: less bias (MCM, SOS, HONEST), more (accuracy, F1), or towards 0 (D, s_DIS)."""


class Replicates(StrictModel):
    """How many of a row's bootstrap replicates each of its figures was defined on
    (evaluator.metrics.uncertainty.add_intervals): an interval is given only when at least 95%
    were (evaluator.metrics.stats.unit_bootstrap); below that, the interval is null and these
    counts say why."""

    resamples: int
    defined: dict[str, int]
    """Per figure (``sos``, ``accuracy``, …): the replicates on which it was defined."""


class Part(StrictModel):
    """A part of metrics.json: every key known, none unknown, read-only once made."""

    ci_replicates: Replicates | None = None
    """Only in a row with bootstrap intervals (one with ``n_units``); absent in older runs."""

    @model_validator(mode="before")
    @classmethod
    def _replicates_only_beside_intervals(cls, data: Any) -> Any:
        if isinstance(data, dict) and "ci_replicates" in data and "n_units" not in cls.model_fields:
            raise ValueError("ci_replicates: only a row with bootstrap intervals (n_units) has it")
        return data


class Failed(Part):
    """A metric the run could not compute on its slice (too few groups after --limit, ...),
    written with the reason in place of the value."""

    error: str


def number(value: object) -> float | None:
    """A value as a plain number: None for a missing value, NaN or a :class:`Failed` entry."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


@dataclass(frozen=True)
class Measure:
    """One comparable value of a run: its comparison table, the key columns (locale first) and
    this value's key, the value, and which way is better; ``plot``: the table gets a plot."""

    table: str
    keys: tuple[str, ...]
    key: tuple[str, ...]
    value: float | None
    better: Better
    plot: bool = False


class MetricsInvalid(InputError):
    """A run's metrics do not have the shape of its task's model."""

    @classmethod
    def of(cls, exc: ValidationError) -> MetricsInvalid:
        """The first problem: where (metrics.per_locale.de.by_group) and what, and how many more."""
        errors = exc.errors()
        where = ".".join(["metrics", *(str(part) for part in errors[0]["loc"])])
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        return cls(f"{where}: {errors[0]['msg']}{more}")


class TaskMetrics(Part):
    """A task's metrics.json ``metrics`` object."""

    TABLES: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    """Every comparison table ``measures()`` can make, by name, with the measures it holds (the
    values of its ``measure`` key column; none when its last key is data, a locale or a group):
    the registry checks a task's headline against it, without metrics to read."""

    def measures(self) -> list[Measure]:
        """The values a comparison of runs sets side by side (and the sweep's main figure)."""
        raise NotImplementedError

    def run_warnings(self) -> list[str]:
        """Lines a run prints as warnings (the task's own, e.g. BBQ rows without a target)."""
        return []

    def dump(self) -> dict[str, Any]:
        """The JSON object, with exactly the keys the model was made with (an older run's
        metrics stay as they were)."""
        return self.model_dump(mode="python", exclude_unset=True)

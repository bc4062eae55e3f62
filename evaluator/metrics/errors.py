"""The error metrics raise when their input frame has the wrong shape."""

from __future__ import annotations


class MetricInputError(ValueError):
    """A metric's input is wrong: a missing column, a wrong value or an impossible shape.

    The message names the column or value at fault and what the metric requires.
    """

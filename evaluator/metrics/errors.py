"""The error metrics raise when their input frame has the wrong shape."""

from __future__ import annotations

from toolkit.core.errors import InputError


class MetricInputError(InputError, ValueError):
    """A metric's input is wrong: a missing column, a wrong value or an impossible shape.

    The message names the column or value at fault and what the metric requires. It is an
    InputError, so the CLI reports it as `error: ...` with exit code 2.
    """

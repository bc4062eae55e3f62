"""Evaluator errors: all under polyprobe's base class, so the CLI reports them the same way."""

from __future__ import annotations

from toolkit.errors import InputError, PolyprobeError


class EvaluationError(PolyprobeError):
    """A run could not be completed."""


class UnsupportedRequest(InputError):
    """The model cannot answer this kind of request (e.g. pseudo-log-likelihood on a causal LM)."""

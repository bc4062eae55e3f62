"""Evaluator errors: all under polyprobe's base class, so the CLI reports them the same way."""

from __future__ import annotations

from toolkit.core.errors import InputError, PolyprobeError


class EvaluationError(PolyprobeError):
    """A run could not be completed."""


class WrongModelKind(EvaluationError):
    """The task cannot score this kind of model (a classifier asked for sos)."""


class UnsupportedRequest(InputError):
    """The model cannot answer this kind of request (e.g. pseudo-log-likelihood on a causal LM)."""


class InputTooLong(InputError):
    """An input is longer than the model's context and no truncation policy was chosen."""

    def __init__(
        self, length: int, limit: int, count: int, text: str, reserve: int = 0, task: str | None = None
    ) -> None:
        self.length, self.limit, self.count, self.text, self.reserve = length, limit, count, text, reserve
        shown = text if len(text) <= 60 else text[:57] + "..."
        extra = f" + {reserve} tokens to generate" if reserve else ""
        super().__init__(
            (f"task {task}: " if task else "")
            + f"{count} input(s) are longer than the model's limit of {limit} tokens; the longest is "
            f"{length} tokens{extra} ({shown!r}); pass --truncation left or right to cut them "
            "(recorded in the run's signature)"
        )


class TokenizerUnfit(InputError):
    """The model's tokenizer reads the probe texts (almost) entirely as its unknown token: a model
    folder without its tokenizer files gets transformers' default tokenizer of five special
    tokens, and every word of every text becomes [UNK], which scores without complaint."""

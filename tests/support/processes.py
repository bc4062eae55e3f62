"""Child processes that tests interrupt as a user would."""

from __future__ import annotations

import signal


def ctrl_c_as_from_a_terminal() -> None:
    """``preexec_fn`` for a child the test sends SIGINT: it gets Ctrl-C's default action, as a shell
    gives a foreground command, even when the tests run with SIGINT ignored (under nohup or as a
    background job, whose children inherit the ignore and rightly keep it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

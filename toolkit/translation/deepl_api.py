"""One door to DeepL (official `deepl` SDK): every call — translate, usage, languages,
glossaries — goes through the same retry policy and the same error mapping.

- Retried: HTTP 429, 500, 502, 503, 504, dropped connections and timeouts, with exponential
  backoff and full jitter, at most ``retries`` times per call and ``budget`` times per run
  (a flaky server cannot keep a run going forever). The SDK's own retries are off, so every
  attempt is seen here (and, for translate requests, in the ledger).
- Mapped, never retried: a refused key (403), an exhausted quota (456), a bad request (400) and
  anything else DeepL or the connection throws, each a one-line message naming what was being
  done and for which locale and suite. No traceback, and the key never appears: it goes to the
  SDK and nowhere else, and is scrubbed from any server message quoted.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import deepl
import deepl.http_client

from toolkit.core.errors import PolyprobeError

log = logging.getLogger(__name__)

KEY_ENV = "DEEPL_AUTH_KEY"
SERVER_ENV = "DEEPL_SERVER_URL"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
QUOTA_EXIT_CODE = 3
T = TypeVar("T")


class QuotaExhausted(PolyprobeError):
    """DeepL answered 456: the billing period's quota is used up. Everything answered before
    it is kept; the same command resumes when the quota resets."""

    exit_code = QUOTA_EXIT_CODE


class KeyRefused(PolyprobeError):
    """DeepL refused the key (403)."""


class BadRequest(PolyprobeError):
    """DeepL refused a request as malformed (400): retrying cannot help."""


class MachineTranslationFailed(PolyprobeError):
    """DeepL failed in a way retrying did not fix."""


@dataclass
class RetryPolicy:
    """How often and how patiently DeepL calls are retried: per call, per run, and the backoff
    between attempts."""

    retries: int = 5
    """Retries of one call."""
    budget: int = 20
    """Retries of all calls of one run together."""
    backoff: float = 1.0
    """The first retry's delay in seconds; it doubles with each retry, up to ``max_delay``."""
    max_delay: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    spent: int = 0

    def delay(self, attempt: int) -> float:
        """Full jitter (between half and all of the exponential delay), so parallel clients that
        failed together do not come back together."""
        ceiling = min(self.max_delay, self.backoff * 2 ** (attempt - 1))
        return ceiling * (0.5 + random.random() / 2)


@dataclass
class Failure:
    """One failed attempt, as the ledger records it."""

    outcome: str
    retry: bool


def classify(exc: Exception) -> Failure:
    """What a failed DeepL call was (as the ledger records it) and whether retrying may help."""
    status = getattr(exc, "http_status_code", None)
    if isinstance(exc, deepl.ConnectionException):
        return Failure("connection failed", True)
    if status:
        return Failure(str(status), status in RETRY_STATUSES)
    return Failure(type(exc).__name__, False)


@dataclass
class DeepL:
    """A DeepL account reached through one policy. ``where`` names the work in messages
    ("fr/sentiment"); ``on_failure`` sees each failed attempt (the ledger)."""

    key: str
    server_url: str | None
    where: str
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: float = 30.0
    translator: Any = None

    def __post_init__(self) -> None:
        deepl.http_client.max_network_retries = 0  # retried here, so every attempt is counted
        deepl.http_client.min_connection_timeout = self.timeout
        self.translator = deepl.Translator(self.key, server_url=self.server_url)

    def close(self) -> None:
        """Release the SDK's connections."""
        self.translator.close()

    def _scrub(self, text: str) -> str:
        text = " ".join(text.split())[:200]
        for secret in {self.key, self.key.split(":")[0]}:
            if secret:
                text = text.replace(secret, "<key>")
        return text

    def call(
        self,
        what: str,
        fn: Callable[[deepl.Translator], T],
        on_failure: Callable[[Failure, int], None] | None = None,
    ) -> T:
        """Run ``fn(translator)`` under the retry policy; map every failure to one clear error."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return fn(self.translator)
            except deepl.QuotaExceededException:
                if on_failure:
                    on_failure(Failure("456 quota exhausted", False), attempt)
                raise QuotaExhausted(
                    f"DeepL quota exhausted while {what} ({self.where}): what was answered before is "
                    "stored; run the same command again when the quota resets (only what is missing is sent)"
                ) from None
            except deepl.AuthorizationException:
                if on_failure:
                    on_failure(Failure("403 key refused", False), attempt)
                raise KeyRefused(
                    f"DeepL refused the key (403) while {what} ({self.where}): check {KEY_ENV}"
                ) from None
            except Exception as exc:  # the SDK's and the connection's, all of them
                failure = classify(exc)
                if on_failure:
                    on_failure(failure, attempt)
                if getattr(exc, "http_status_code", None) == 400:
                    raise BadRequest(
                        f"DeepL refused the request while {what} ({self.where}) as malformed (400): "
                        f"{self._scrub(str(exc))}"
                    ) from None
                if not failure.retry:
                    raise MachineTranslationFailed(
                        f"DeepL failed while {what} ({self.where}): {failure.outcome}: "
                        f"{self._scrub(str(exc)) or type(exc).__name__}"
                    ) from None
                if attempt > self.policy.retries:
                    raise MachineTranslationFailed(
                        f"DeepL failed while {what} ({self.where}) after {attempt} attempt(s); "
                        f"last: {failure.outcome}"
                    ) from None
                if self.policy.spent >= self.policy.budget:
                    raise MachineTranslationFailed(
                        f"DeepL failed while {what} ({self.where}): {failure.outcome}, and this run's "
                        f"retry budget ({self.policy.budget} retries) is spent"
                    ) from None
                self.policy.spent += 1
                delay = self.policy.delay(attempt)
                log.info("DeepL %s (%s): %s, retrying in %.2fs", what, self.where, failure.outcome, delay)
                self.policy.sleep(delay)

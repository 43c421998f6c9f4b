"""Which failures are worth another attempt, and how long to wait (tenacity, exponential with jitter)."""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

log = logging.getLogger("cfa_lib.models")
T = TypeVar("T")

RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and backoff; tests shrink these so a faulty run takes seconds."""

    max_attempts: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_retry_after_s: float = 120.0


class TransientError(Exception):
    """A backend failure worth retrying; retry_after (seconds) comes from the server when it says so."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def parse_retry_after(headers: httpx.Headers | dict[str, str] | None) -> float | None:
    """Seconds to wait from Retry-After (seconds or HTTP date) or retry-after-ms; None when absent or unreadable."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None  # a malformed header: fall back to our own backoff rather than give up


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    backoff = wait_random_exponential(multiplier=policy.backoff_base_s, max=policy.backoff_max_s)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientError) and exc.retry_after is not None:
            return min(exc.retry_after, policy.max_retry_after_s)
        return backoff(state)

    return wait


def call_with_retries(fn: Callable[[], T], policy: RetryPolicy) -> tuple[T, int]:
    """Run fn, retrying TransientError; return (result, retries). The last error propagates."""
    retries = 0

    def before_sleep(state: RetryCallState) -> None:
        nonlocal retries
        retries += 1
        exc = state.outcome.exception() if state.outcome else None
        log.debug("retry %d after %s", state.attempt_number, exc)

    retrying = Retrying(
        retry=retry_if_exception(lambda e: isinstance(e, TransientError)),
        stop=stop_after_attempt(policy.max_attempts),
        wait=_wait(policy),
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        result = retrying(fn)
    except TransientError as exc:
        exc.retries = retries  # type: ignore[attr-defined]
        raise
    return result, retries

"""Which failures are worth another attempt, and how long to wait (tenacity, exponential with jitter).

A 429 is the provider pacing us, not a failure: it does not use up an attempt (only a total wait of
`max_rate_limited_s` does), and it cuts the adaptive concurrency limit when one is given.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_random_exponential

from .limiter import AdaptiveLimit, Outcome

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
    max_rate_limited_s: float = 1800.0  # total time one request may spend waiting on 429s


class TransientError(Exception):
    """A backend failure worth retrying; retry_after (seconds) comes from the server when it says so."""

    def __init__(self, message: str, retry_after: float | None = None, rate_limited: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited  # a 429: slow down, never give up for it


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


def call_with_retries(
    fn: Callable[[], T], policy: RetryPolicy, limit: AdaptiveLimit | None = None
) -> tuple[T, int]:
    """Run fn, retrying TransientError; return (result, retries). The last error propagates.

    Each attempt holds one connection of `limit` and reports how it went (clean, 429, other error).
    """
    retries = failures = 0
    rate_limited_since: float | None = None

    def attempt() -> T:
        nonlocal failures, rate_limited_since
        epoch = limit.acquire() if limit is not None else 0
        outcome: Outcome = "ok"
        try:
            return fn()
        except TransientError as exc:
            outcome = "rate_limited" if exc.rate_limited else "error"
            if exc.rate_limited:
                rate_limited_since = rate_limited_since or time.monotonic()
            else:
                failures += 1
            raise
        finally:
            if limit is not None:
                limit.release(epoch, outcome)

    def stop(state: RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransientError) and exc.rate_limited and rate_limited_since is not None:
            return time.monotonic() - rate_limited_since > policy.max_rate_limited_s
        return failures >= policy.max_attempts

    def before_sleep(state: RetryCallState) -> None:
        nonlocal retries
        retries += 1
        exc = state.outcome.exception() if state.outcome else None
        log.debug("retry %d after %s", state.attempt_number, exc)

    retrying = Retrying(
        retry=retry_if_exception(lambda e: isinstance(e, TransientError)),
        stop=stop,
        wait=_wait(policy),
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        result = retrying(attempt)
    except TransientError as exc:
        exc.retries = retries  # type: ignore[attr-defined]
        raise
    return result, retries

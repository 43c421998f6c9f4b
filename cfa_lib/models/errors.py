"""Exceptions raised before any question is asked (bad name, backend not ready, broken cache)."""

from __future__ import annotations


class ModelSpecError(ValueError):
    """A model name that no backend accepts."""


class ModelUnavailableError(RuntimeError):
    """The backend cannot be used yet; the message says what to set, start or install."""


class CacheError(RuntimeError):
    """The completion cache file cannot be used; the message names the file."""


class SpendCapReached(RuntimeError):
    """The run stopped before crossing max_cost_usd; what it answered is cached, the message says what is left."""

    def __init__(self, spent_usd: float, cap_usd: float, remaining: int, remaining_usd: float) -> None:
        self.spent_usd, self.cap_usd = spent_usd, cap_usd
        self.remaining, self.remaining_usd = remaining, remaining_usd
        super().__init__(
            f"spend cap reached: ${spent_usd:.2f} spent of max_cost_usd=${cap_usd:.2f}; {remaining} requests "
            f"(about ${remaining_usd:.2f} more) are left to run. Everything answered so far is cached: "
            "rerun the same command with a higher max_cost_usd to continue."
        )

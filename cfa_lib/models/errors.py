"""The engine's errors a user acts on: a bad name, a backend not ready, a broken cache, a run whose every
request failed, the spend cap."""

from __future__ import annotations


class ModelSpecError(ValueError):
    """A model name that no backend accepts."""


class ModelUnavailableError(RuntimeError):
    """The backend cannot be used yet; the message says what to set, start or install."""


class CacheError(RuntimeError):
    """The completion cache file cannot be used; the message names the file."""


class RunFailedError(RuntimeError):
    """Every request of a batch failed (a server down or crashed mid-run): nothing worth a results file."""

    def __init__(self, model: str, what: str, failed: list[str]) -> None:
        super().__init__(
            f"all {len(failed)} requests to {model} failed ({what}); the first error: {failed[0]}. No results "
            "file was written; what was answered is cached, so the same command resumes once the model answers."
        )


class SpendCapReached(RuntimeError):
    """The run stopped before crossing max_cost_usd; what it answered is cached, the message says what is left."""

    def __init__(self, spent_usd: float, cap_usd: float, remaining: int, remaining_usd: float) -> None:
        self.spent_usd, self.cap_usd = spent_usd, cap_usd
        self.remaining, self.remaining_usd = remaining, remaining_usd
        super().__init__(
            f"spend cap reached: {usd(spent_usd)} spent of max_cost_usd={usd(cap_usd)}; {remaining} requests "
            f"(about {usd(remaining_usd)} more) are left to run. Everything answered so far is cached: "
            "rerun the same command with a higher max_cost_usd to continue."
        )


def usd(amount: float) -> str:
    """Dollars as a reader wants them: cents from $1, four decimals below (a test run costs fractions of a cent)."""
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"

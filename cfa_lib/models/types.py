"""Values exchanged with callers: what to ask (Request), what came back (Completion), what it costs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, Protocol

from pydantic import BaseModel

ErrorKind = Literal["failed", "truncated", "invalid_json"]
Schema = type[BaseModel] | dict[str, Any]


@dataclass(frozen=True)
class Request:
    """One chat request; params override the client's sampling defaults."""

    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    schema: Schema | None = None


@dataclass
class Completion:
    """A model answer, or a typed failure (error set) that the caller can count and a rerun retries."""

    text: str
    model: str
    thinking: str | None = None
    parsed: dict[str, Any] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    cached: bool = False
    error: str | None = None
    error_kind: ErrorKind | None = None
    retries: int = 0  # transient failures (429, 5xx, timeout, dropped connection) retried for this answer

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (no credentials are ever held here)."""
        return {**asdict(self), "ok": self.ok}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Completion:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class CostEstimate:
    """What a batch is expected to cost before it is sent (cached requests count as free)."""

    model: str
    n_requests: int
    n_cached: int
    prompt_tokens: int
    completion_budget_tokens: int  # sum of max-token budgets of the uncached requests
    expected_completion_tokens: int
    token_method: str  # "tiktoken", "the model's tokenizer", "approximation (characters / 4)"
    cost_usd: float | None  # expected: prompt + typical completion
    cost_low_usd: float | None  # prompt tokens only
    cost_high_usd: float | None  # prompt + full completion budget
    note: str = ""
    batch_cost_usd: float | None = None  # expected through the Batch API (half price), where the backend has it
    batch: bool = False  # the run will use the Batch API
    free: bool = False  # the model runs in this process: nothing to pay


    def __str__(self) -> str:
        if self.n_cached == self.n_requests:
            return f"all {self.n_requests} requests already cached: nothing to send, nothing to pay"
        if self.free:
            return (f"free (the model runs on this machine) for {self.n_requests} requests ("
                    + "; ".join([f"prompt tokens ≈ {self.prompt_tokens:,} by {self.token_method}",
                                 *([f"{self.n_cached} already cached"] if self.n_cached else [])]) + ")")
        head = (
            "cost unknown (no price for this model)"
            if self.cost_usd is None
            else f"about ${self.cost_usd:.2f}"
        )
        if self.batch_cost_usd is not None:
            head = (f"about ${self.batch_cost_usd:.2f} by the Batch API (live: ${self.cost_usd:.2f})" if self.batch
                    else f"{head} live or ${self.batch_cost_usd:.2f} by the Batch API (batch=True)")
        parts = [f"prompt tokens ≈ {self.prompt_tokens:,} by {self.token_method}"]
        parts.append(f"completion budget ≤ {self.completion_budget_tokens:,} tokens")
        if self.cost_low_usd is not None and self.cost_high_usd is not None:
            parts.append(f"range ${self.cost_low_usd:.2f}–${self.cost_high_usd:.2f}")
        if self.n_cached:
            parts.append(f"{self.n_cached} already cached, not counted")
        if self.note:
            parts.append(self.note)
        return f"{head} for {self.n_requests} requests ({'; '.join(parts)})"


class ChatClient(Protocol):
    """What a run needs of a model's client (`ModelClient`, or a scripted model a test passes in)."""

    def check(self) -> None: ...

    def estimate(self, requests: list[Request]) -> Any: ...

    def complete_many(self, requests: list[Request], **options: Any) -> list[Completion]: ...

    def engine_stats(self) -> dict[str, Any]: ...

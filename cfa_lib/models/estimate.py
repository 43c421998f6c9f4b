"""What requests will cost before they are sent: tokens counted the backend's way, priced per model.

A completion's length is unknown until it arrives, so the expected cost assumes a typical worked answer
(capped by the request's budget), with the cost of no completion and of the whole budget as bounds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .backend import Backend, Messages
from .names import ModelSpec
from .pricing import BATCH_DISCOUNT, FREE, price_for
from .schema import json_schema_of
from .types import CostEstimate, Schema

TYPICAL_COMPLETION_TOKENS = 300  # a worked CFA answer; reasoning models use their hidden budget too
TYPICAL_REASONING_TOKENS = 2000
MESSAGE_OVERHEAD_TOKENS = 4  # role markers per message in chat templates

Prepared = tuple[Messages, dict[str, Any], Schema | None]


@dataclass(frozen=True)
class TokenPlan:
    prompt: list[int]  # per request, message overhead included
    budgets: list[int]  # completion-token budget per request
    typical: int  # completion tokens an answer usually takes
    method: str
    note: str


def token_plan(backend: Backend, spec: ModelSpec, todo: Sequence[Prepared]) -> TokenPlan:
    texts = []
    for messages, _, schema in todo:
        text = "\n".join(str(m["content"]) for m in messages)
        if schema is not None:
            text += json.dumps(json_schema_of(schema))
        texts.append(text)
    counted = backend.count_tokens(texts)
    prompt = [t + MESSAGE_OVERHEAD_TOKENS * len(m) for t, (m, _, _) in zip(counted.tokens, todo, strict=True)]
    budget_key = backend.budget_key()
    budgets = [int(p.get(budget_key) or 0) for _, p, _ in todo]
    typical = TYPICAL_REASONING_TOKENS if spec.is_thinking else TYPICAL_COMPLETION_TOKENS
    return TokenPlan(prompt, budgets, typical, counted.method, counted.note)


def expected_costs(backend: Backend, spec: ModelSpec, keyed: dict[str, Prepared], batch: bool
                   ) -> dict[str, float | None] | None:
    """Each request's expected cost in USD (what max_cost_usd reserves), or None when no price is known."""
    price = price_for(backend.kind, spec.model, spec.listing)
    if price is None:
        return None
    plan = token_plan(backend, spec, list(keyed.values()))
    factor = BATCH_DISCOUNT if batch else 1.0
    return {key: factor * (prompt * price[0] + min(budget, plan.typical) * price[1]) / 1e6
            for key, prompt, budget in zip(keyed, plan.prompt, plan.budgets, strict=True)}


def cost_estimate(backend: Backend, spec: ModelSpec, todo: Sequence[Prepared], n_requests: int,
                  wants_batch: bool) -> CostEstimate:
    """The estimate of `todo` (the requests not cached, of `n_requests`), with the Batch API's price beside
    the live one where the backend has it."""
    plan = token_plan(backend, spec, todo)
    prompt = sum(plan.prompt)
    expected = sum(min(b, plan.typical) for b in plan.budgets)
    price = price_for(backend.kind, spec.model, spec.listing)

    def usd(completion_tokens: int) -> float | None:
        return None if price is None else (prompt * price[0] + completion_tokens * price[1]) / 1e6

    note = plan.note
    if price is not None and price != FREE:
        note = "; ".join(filter(None, [note, f"expected assumes ≤{plan.typical} completion tokens per answer"]))
    if wants_batch and not backend.supports_batch:
        note = "; ".join(filter(None, [note, f"{spec.name} has no batch API, so it runs live"]))
    live = usd(expected)
    return CostEstimate(
        model=spec.name,
        n_requests=n_requests,
        n_cached=n_requests - len(todo),
        prompt_tokens=prompt,
        completion_budget_tokens=sum(plan.budgets),
        expected_completion_tokens=expected,
        token_method=plan.method,
        cost_usd=live,
        cost_low_usd=usd(0),
        cost_high_usd=usd(sum(plan.budgets)),
        note=note,
        batch_cost_usd=live * BATCH_DISCOUNT if live is not None and backend.supports_batch else None,
        batch=wants_batch and backend.supports_batch,
        free=price == FREE,
    )

"""USD prices per million tokens (input, output), from OpenAI's public price list as of August 2025.

Dated snapshots ("gpt-4o-mini-2024-07-18") take the price of their longest matching prefix. The embedded
model (`local`, in this process) costs nothing. Models not listed (Ollama, other servers) have no price:
cost is None, never a guess.
"""

from __future__ import annotations

from .fleet import ModelEntry

BATCH_DISCOUNT = 0.5  # the Batch API bills half the live price for the same tokens
FREE = (0.0, 0.0)  # a model run in this process: no bill

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
}


def price_for(backend: str, model: str, listing: ModelEntry | None = None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when the model is not priced; a model the models file
    lists with a price (`listing`, `ModelSpec.listing`) takes that price."""
    if listing is not None and listing.price is not None:
        return listing.price_per_mtok
    if backend == "local":
        return FREE
    if backend != "openai":
        return None
    matches = [name for name in PRICES_PER_MTOK if model == name or model.startswith(name + "-")]
    return PRICES_PER_MTOK[max(matches, key=len)] if matches else None


def cost_usd(
    backend: str, model: str, prompt_tokens: int | None, completion_tokens: int | None, batch: bool = False,
    listing: ModelEntry | None = None,
) -> float | None:
    price = price_for(backend, model, listing)
    if price is None or prompt_tokens is None or completion_tokens is None:
        return None
    live = (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
    return live * BATCH_DISCOUNT if batch else live

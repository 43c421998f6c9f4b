"""Model engine: one name per model, cached and retried completions, cost estimates.

client = get_client("gpt-4o-mini"); client.check()
answers = client.complete_many([Request(messages)], max_concurrency=64, desc="Format A",
                               batch=False, batch_fallback="batch", max_cost_usd=None)
client.engine_stats()  # concurrency history, 429s, batch ids, spend: for a results file's metadata
"""

from .cache import CompletionCache, default_cache_dir
from .client import ModelClient
from .errors import CacheError, ModelSpecError, ModelUnavailableError, RunFailedError, SpendCapReached
from .factory import get_client
from .keyed import complete_keyed
from .limiter import AdaptiveLimit
from .names import ACCEPTED_FORMS, ModelSpec, parse_model_name
from .retry import RetryPolicy
from .run_options import DEFAULT_MAX_CONCURRENCY, RunOptions
from .steps import Ask, Steps, run_steps
from .types import ChatClient, Completion, CostEstimate, Request

__all__ = [
    "ACCEPTED_FORMS",
    "AdaptiveLimit",
    "Ask",
    "DEFAULT_MAX_CONCURRENCY",
    "CacheError",
    "ChatClient",
    "Completion",
    "complete_keyed",
    "CompletionCache",
    "CostEstimate",
    "ModelClient",
    "ModelSpec",
    "ModelSpecError",
    "ModelUnavailableError",
    "Request",
    "RetryPolicy",
    "RunFailedError",
    "RunOptions",
    "SpendCapReached",
    "Steps",
    "default_cache_dir",
    "get_client",
    "parse_model_name",
    "run_steps",
]

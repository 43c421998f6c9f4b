"""Model engine: one name per model, cached and retried completions, cost estimates.

client = get_client("gpt-4o-mini"); client.check()
answers = client.complete_many([Request(messages)], max_concurrency=8, desc="Format A")
"""

from .cache import CompletionCache, default_cache_dir
from .client import ModelClient, get_client
from .errors import CacheError, ModelSpecError, ModelUnavailableError
from .keyed import complete_keyed
from .names import ACCEPTED_FORMS, ModelSpec, parse_model_name
from .retry import RetryPolicy
from .types import Completion, CostEstimate, Request

__all__ = [
    "ACCEPTED_FORMS",
    "CacheError",
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
    "default_cache_dir",
    "get_client",
    "parse_model_name",
]

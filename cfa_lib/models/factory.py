"""get_client: a model name becomes a checked-later client with its backend, cache and retry policy."""

from __future__ import annotations

from pathlib import Path

from . import local_backend, ollama_backend, openai_backend  # noqa: F401 - each registers its backend
from .backend import BACKENDS, Backend, BackendSettings
from .cache import CompletionCache
from .client import ModelClient
from .env import flag_from_env, positive_from_env
from .local_backend import DEFAULT_N_CTX
from .names import ModelSpec, parse_model_name
from .retry import RetryPolicy
from .run_options import BatchFallback


def get_client(
    model: str | ModelSpec = "local",
    *,
    base_url: str | None = None,
    refresh: bool = False,
    cache_dir: str | Path | None = None,
    timeout_s: float | None = None,
    max_attempts: int | None = None,
    backoff_base_s: float = 1.0,
    backoff_max_s: float = 60.0,
    n_ctx: int = DEFAULT_N_CTX,
    max_concurrency: int | None = None,
    batch: bool | None = None,
    batch_fallback: BatchFallback | None = None,
    max_cost_usd: float | None = None,
    retry_failed: bool | None = None,
    deterministic: bool | None = None,
) -> ModelClient:
    """A client for one model name (see names.py for the accepted forms), or a name parsed already (a run's
    `Settings.spec`). Does not touch the network.

    base_url: an OpenAI-compatible server (else OPENAI_BASE_URL, else api.openai.com).
    refresh: ignore cached answers (new answers still replace them in the cache).
    timeout_s: per HTTP attempt (else CFA_TIMEOUT_S, else 120 s for OpenAI and 600 s for Ollama).
    max_attempts: per request, retries included (else CFA_MAX_ATTEMPTS, else 6).
    max_concurrency, batch, batch_fallback, max_cost_usd, retry_failed: defaults of every complete_many call
    (which see).
    deterministic: the same request always gets the same reply, so a reply that fails validation is cached
    as that failure (else CFA_DETERMINISTIC, else true for `local` at temperature 0 with its fixed seed).
    The environment variables let an overnight notebook run be tuned without editing it.
    """
    spec = model if isinstance(model, ModelSpec) else parse_model_name(model)
    timeout_s = timeout_s or positive_from_env("CFA_TIMEOUT_S", float)
    max_attempts = max_attempts or positive_from_env("CFA_MAX_ATTEMPTS", int) or 6
    entry = spec.listing  # the models file: endpoint, key variable and determinism are defaults; its ceiling holds
    if entry is not None:
        base_url = base_url or entry.base_url
        deterministic = entry.deterministic if deterministic is None else deterministic
    settings = BackendSettings(base_url, timeout_s, n_ctx, entry.api_key_env if entry else None)
    backend: Backend = BACKENDS[spec.backend](spec, settings)
    retry = RetryPolicy(max_attempts=max_attempts, backoff_base_s=backoff_base_s, backoff_max_s=backoff_max_s)
    cache = CompletionCache(Path(cache_dir) if cache_dir is not None else None)
    defaults = {"max_concurrency": max_concurrency, "batch": batch, "batch_fallback": batch_fallback,
                "max_cost_usd": max_cost_usd, "retry_failed": retry_failed}
    client = ModelClient(spec, backend, cache, refresh=refresh, retry=retry, defaults=defaults,
                         deterministic=deterministic, server_ceiling=entry.max_concurrency if entry else None)
    client.options()  # a bad value (argument or CFA_* variable) fails here, before any question
    flag_from_env("CFA_DETERMINISTIC")  # and CFA_DETERMINISTIC
    return client

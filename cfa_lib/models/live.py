"""Sending requests live: a thread pool under the adaptive concurrency limit, claims in the shared cache.

One limit per server and model in this process, so the model and its judge (or a second client of the
same model) share what was learnt about the provider's rate limit.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from .backend import Backend, Messages
from .batch import BatchItem
from .cache import CompletionCache
from .limiter import AdaptiveLimit
from .run_options import DEFAULT_MAX_CONCURRENCY, RunOptions
from .spend import Budget
from .types import Completion, Schema

_limits: dict[str, AdaptiveLimit] = {}
_limits_lock = threading.Lock()


def shared_limit(backend: Backend) -> AdaptiveLimit:
    """The process's limit for this backend's server and model (a fixed one for an in-process model)."""
    key = json.dumps({**backend.identity(), "kind": backend.kind}, sort_keys=True, default=str)
    with _limits_lock:
        if key not in _limits:
            fixed = backend.fixed_concurrency
            _limits[key] = AdaptiveLimit(fixed or DEFAULT_MAX_CONCURRENCY, adaptive=fixed is None)
        return _limits[key]


class LiveSending:
    """ModelClient's live path (a mixin: the client supplies the cache and the limit, and, as its public
    methods declared below, one request's run and the reading of a cached answer; nothing private)."""

    backend: Backend
    cache: CompletionCache
    limit: AdaptiveLimit
    refresh: bool
    server_ceiling: int | None
    run_claimed: Callable[[Messages, dict[str, Any], Schema | None, str], Completion]
    run_once: Callable[..., Completion]
    from_cache: Callable[[dict[str, Any]], Completion]

    def send_live(self, items: list[BatchItem], opts: RunOptions, budget: Budget,
                   done: Callable[[str, Completion], None]) -> list[str]:
        """Send on a thread pool; each HTTP attempt waits for a connection of the adaptive limit.
        Requests are claimed in the cache a chunk at a time, just before they are handed to the pool.
        Returns the keys left unsent by the spend cap."""
        ceiling = min(c for c in (opts.max_concurrency, self.backend.fixed_concurrency, self.server_ceiling) if c)
        failures = not opts.retry_failed
        self.limit.set_ceiling(ceiling)
        workers = max(1, min(ceiling + max(2, ceiling // 4), len(items)))  # spare threads for cache writes
        window = 2 * workers  # handed to the pool and not yet answered
        queue = deque(items)
        claimed: deque[tuple[BatchItem, bool]] = deque()  # (item, claimed by us: else another run has it)
        pool = ThreadPoolExecutor(max_workers=workers)
        futures: dict[Future[Completion], str] = {}
        try:
            while queue or claimed or futures:
                if queue and len(claimed) < workers:
                    chunk = [queue.popleft() for _ in range(min(len(queue), window))]
                    mine, answered = self.cache.claim_many([i.key for i in chunk], use_cached=not self.refresh,
                                                           failures=failures)
                    for item in chunk:
                        if item.key in answered:  # answered by another run since we looked
                            done(item.key, self.from_cache(answered[item.key]))
                        else:
                            claimed.append((item, item.key in mine))
                while claimed and len(futures) < window and budget.reserve(claimed[0][0].key):
                    item, ours = claimed.popleft()
                    run = self.run_claimed if ours else functools.partial(self.run_once, failures=failures)
                    futures[pool.submit(run, item.messages, item.params, item.schema, item.key)] = item.key
                if not futures:
                    if claimed and not budget.reserve(claimed[0][0].key):
                        break  # the cap allows nothing more
                    continue
                finished, _ = wait(futures, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    key = futures.pop(future)
                    completion = future.result()
                    budget.settle(key, completion)
                    done(key, completion)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C in Jupyter: stop sending
            self.cache.release_many([item.key for item, ours in claimed if ours])
            raise
        pool.shutdown(wait=True)
        self.cache.release_many([item.key for item, ours in claimed if ours])
        return [item.key for item, _ in claimed] + [item.key for item in queue]

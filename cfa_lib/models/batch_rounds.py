"""Sending requests through the provider's Batch API at half price, in rounds, resumable.

A request that failed inside a batch goes into at most two more batches, or live with
batch_fallback="live"; a server without a batch API runs live.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, cast

from .backend import Backend, BatchAPI
from .batch import BatchItem, BatchRunner, NoBatchAPI
from .cache import CompletionCache
from .names import ModelSpec
from .replies import Attempt
from .run_options import RunOptions
from .spend import Budget
from .types import Completion

log = logging.getLogger("cfa_lib.models")

BATCH_ROUNDS = 3  # a request that failed inside a batch goes into at most two more batches


class BatchRounds:
    """ModelClient's batch path (a mixin: the client supplies the cache and, as its public methods declared
    below, the reading of a reply, storing, a failure and the live path; the batch state is this class's own)."""

    spec: ModelSpec
    backend: Backend
    cache: CompletionCache
    _batch_ids: list[str]
    _batch_requests: int
    _warned_batch: bool
    settle_reply: Callable[..., Completion | None]
    store: Callable[[Completion, str, dict[str, Any]], Completion]
    failure: Callable[[float, int, str, str], Completion]
    send_live: Callable[..., list[str]]

    def batch_available(self) -> bool:
        if self.backend.supports_batch:
            return True
        if not self._warned_batch:
            self._warned_batch = True
            log.warning("%s has no batch API (only OpenAI's has); running live", self.spec.name)
        return False

    def send_batch(self, items: list[BatchItem], opts: RunOptions, desc: str, progress: bool, budget: Budget,
                    done: Callable[[str, Completion], None]) -> list[str]:
        """Rounds of batches until every request is answered or BATCH_ROUNDS is used up (failed inside a
        batch: again by batch, or live with batch_fallback="live"). Returns the keys left by the cap."""
        start = time.perf_counter()
        fits: list[BatchItem] = []
        for item in items:
            if not budget.reserve(item.key):
                break
            fits.append(item)
        left = [item.key for item in items[len(fits):]]
        states = {item.key: Attempt(dict(item.params)) for item in fits}
        pending = fits
        runner = BatchRunner(cast(BatchAPI, self.backend), self.cache, self.spec.name)  # supports_batch: checked
        live = False
        for round_ in range(BATCH_ROUNDS):
            if not pending:
                break
            if round_ and opts.batch_fallback == "live":
                live = True
                break
            try:
                outcome = runner.run(pending, desc, progress)
            except NoBatchAPI:
                log.warning("%s: the server at %s has no batch API; running live", self.spec.name,
                            getattr(self.backend, "base_url", None))
                live = True
                break
            except BaseException:
                if self._batch_ids or self.cache.batch_jobs(self.spec.name):
                    log.warning("%s: stopped while waiting; the batch keeps running and is recorded in the "
                                "cache: rerun the same command to collect it", self.spec.name)
                raise
            self._batch_ids += [b for b in outcome.batch_ids if b not in self._batch_ids]
            self._batch_requests += len(pending)
            retry: list[BatchItem] = []
            for item in pending:
                state = states[item.key]
                raw = outcome.replies.get(item.key)
                completion = None if raw is None else self.settle_reply(raw, state, item.schema, batch=True)
                if completion is None:
                    state.error = outcome.errors.get(item.key) or state.error
                    state.retries += 1
                    item.params = state.params
                    retry.append(item)
                    continue
                completion.latency_s = time.perf_counter() - start
                budget.settle(item.key, completion)
                done(item.key, self.store(completion, item.key, item.params))
            pending = retry
        if pending and live:
            left += self.send_live(pending, opts, budget, done)
        else:
            for item in pending:
                state = states[item.key]
                message = f"failed in {BATCH_ROUNDS} batches: {state.error or 'invalid answer'}"
                done(item.key, self.failure(start, state.retries, message, "failed"))
        return left

"""The one object experiments talk to: cache first, then the backend with retries, typed failures.

Requests go live at an adaptive concurrency (live.py), or through OpenAI's Batch API at half price
(batch_rounds.py); either way under an optional spend cap (spend.py), with options resolved in one order
(run_options.py), and every answer lands in the cache the same way. get_client is in factory.py.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from tqdm.auto import tqdm

from .backend import Backend, Messages, RawReply
from .batch import BatchItem
from .batch_rounds import BatchRounds
from .cache import CompletionCache, cache_key
from .determinism import is_deterministic, kept, warn_failures
from .errors import ModelUnavailableError
from .estimate import cost_estimate, expected_costs
from .fleet import endpoint
from .live import LiveSending, shared_limit
from .names import ModelSpec
from .pricing import cost_usd
from .replies import Attempt, settle
from .retry import RetryPolicy, TransientError, call_with_retries
from .run_options import BatchFallback, RunOptions, resolve_options
from .schema import json_schema_of
from .spend import Budget, spend_session
from .types import Completion, CostEstimate, Request, Schema

log = logging.getLogger("cfa_lib.models")

CLAIM_POLL_S = 0.25  # how often a run waiting for another run's answer looks again


def _validate_messages(messages: Any, where: str) -> Messages:
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"{where}: messages must be a non-empty list of {{'role', 'content'}} dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise ValueError(
                f"{where}: message {i} must be a dict with 'role' and 'content', got {message!r}"
            )
    return messages


def _scrub(text: str) -> str:
    """Never let a credential reach a Completion, the cache or a log line."""
    for var in ("OPENAI_API_KEY",):
        secret = os.environ.get(var)
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text


class ModelClient(LiveSending, BatchRounds):
    """Completions from one model, through the cache. Thread-safe."""

    def __init__(
        self,
        spec: ModelSpec,
        backend: Backend,
        cache: CompletionCache,
        *,
        refresh: bool = False,
        retry: RetryPolicy | None = None,
        defaults: dict[str, Any] | None = None,
        deterministic: bool | None = None,
        server_ceiling: int | None = None,
    ) -> None:
        """`defaults`: the engine options (run_options.OPTION_NAMES) every complete_many starts from;
        `server_ceiling`: the most requests its server takes at once (the models file's max_concurrency), which
        holds whatever a run's options say."""
        self.spec = spec
        self.backend = backend
        self.cache = cache
        self.refresh = refresh
        self.retry = retry or RetryPolicy()
        self.limit = shared_limit(backend)
        self._defaults = dict(defaults or {})
        self.server_ceiling = server_ceiling
        self.deterministic = deterministic  # None: CFA_DETERMINISTIC, else the backend's rule (determinism.py)
        self._checked = False
        self._check_lock = threading.Lock()
        self._batch_ids: list[str] = []
        self._batch_requests = 0
        self._cap: float | None = None
        self._warned_batch = False

    def __repr__(self) -> str:
        return (
            f"ModelClient(model={self.spec.name!r}, backend={self.backend!r}, cache={str(self.cache.path)!r})"
        )

    @property
    def model(self) -> str:
        return self.spec.name

    # -- pre-flight -------------------------------------------------------------------------------
    def check(self) -> None:
        """Raise ModelUnavailableError (what to set or start) before the first question is sent."""
        self.backend.check()
        self._checked = True

    def _ensure_checked(self) -> None:
        with self._check_lock:
            if not self._checked:
                self.check()

    # -- options ----------------------------------------------------------------------------------
    def options(self, max_concurrency: int | None = None, batch: bool | None = None,
                batch_fallback: BatchFallback | None = None, max_cost_usd: float | None = None,
                retry_failed: bool | None = None) -> RunOptions:
        """The call's arguments, else get_client's, else the CFA_* variables, else the defaults
        (run_options.resolve_options)."""
        given = {"max_concurrency": max_concurrency, "batch": batch, "batch_fallback": batch_fallback,
                 "max_cost_usd": max_cost_usd, "retry_failed": retry_failed}
        return resolve_options(given, self._defaults)

    # -- keys ---------------------------------------------------------------------------------------
    def _key(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> str:
        return cache_key(
            {
                **self.backend.identity(),
                "messages": messages,
                "params": params,
                "schema": self.backend.constrained_schema(json_schema_of(schema)) if schema is not None else None,
            }
        )

    def _prepare(self, request: Request, where: str) -> tuple[Messages, dict[str, Any], str]:
        messages = _validate_messages(request.messages, where)
        if request.schema is not None:
            json_schema_of(request.schema)  # TypeError now, not inside a worker thread
        params = self.backend.prepare_params(dict(request.params))
        return messages, params, self._key(messages, params, request.schema)

    # -- one completion ---------------------------------------------------------------------------
    def settle_reply(self, raw: RawReply, state: Attempt, schema: Schema | None, batch: bool = False
               ) -> Completion | None:
        """The completion for this reply, or None when one more attempt is due (replies.settle)."""
        completion = Completion(
            text=raw.text,
            model=self.spec.name,
            thinking=raw.thinking,
            prompt_tokens=raw.prompt_tokens,
            completion_tokens=raw.completion_tokens,
            finish_reason=raw.finish_reason,
            cost_usd=cost_usd(
                self.backend.kind, self.spec.model, raw.prompt_tokens, raw.completion_tokens, batch=batch,
                listing=self.spec.listing,
            ),
            retries=state.retries,
        )
        return settle(completion, raw, state, schema, self.backend.budget_key(), self._deterministic(state.params))

    def _deterministic(self, params: dict[str, Any]) -> bool:
        return is_deterministic(self.deterministic, self.backend, params)

    def store(self, completion: Completion, key: str, params: dict[str, Any]) -> Completion:
        """Cache an answer, and a failure that sending the request again would only repeat."""
        if completion.error is not None:
            completion.error = _scrub(completion.error)
        if kept(completion, self._deterministic(params)):
            self.cache.put(key, self.spec.name, completion.to_dict(), session=spend_session())
        return completion

    def _run(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str) -> Completion:
        """Ask the backend (retries and the adaptive limit in call_with_retries) until a reply settles."""
        start = time.perf_counter()
        state = Attempt(dict(params))
        while True:
            try:
                raw, used = call_with_retries(
                    lambda p=state.params: self.backend.call(messages, p, schema), self.retry, self.limit
                )
                state.retries += used
            except ModelUnavailableError:
                raise
            except TransientError as exc:
                retries = state.retries + getattr(exc, "retries", 0)
                return self.failure(start, retries, f"gave up after {retries + 1} attempts: {exc}", "failed")
            except Exception as exc:  # a request the backend rejects: recorded, the run goes on
                return self.failure(start, state.retries, f"{type(exc).__name__}: {exc}", "failed")
            completion = self.settle_reply(raw, state, schema)
            if completion is not None:
                completion.latency_s = time.perf_counter() - start
                return self.store(completion, key, params)

    def run_once(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str,
                  failures: bool = True) -> Completion:
        """`_run` under a claim in the shared cache: when another run is already asking the same
        request, wait for its answer instead of paying for it again (`failures`: a cached failure is one)."""
        while True:
            mine, payload = self.cache.try_claim(key, use_cached=not self.refresh, failures=failures)
            if payload is not None:
                return self.from_cache(payload)
            if mine:
                return self.run_claimed(messages, params, schema, key)
            time.sleep(CLAIM_POLL_S)

    def run_claimed(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str
                     ) -> Completion:
        """`_run` for a request this process has claimed (claim_many); a failure gives the claim up."""
        completion = None
        try:
            completion = self._run(messages, params, schema, key)
            return completion
        finally:
            if completion is None or not completion.ok:  # a stored completion released its claim already
                self.cache.release(key)

    def failure(self, start: float, retries: int, error: str, kind: str) -> Completion:
        return Completion(
            text="",
            model=self.spec.name,
            latency_s=time.perf_counter() - start,
            error=_scrub(error),
            error_kind=kind,  # type: ignore[arg-type]
            retries=retries,
        )

    def from_cache(self, payload: dict[str, Any]) -> Completion:
        completion = Completion.from_dict(payload)
        completion.cached = True
        return completion

    def complete(self, messages: Messages, schema: Schema | None = None, **params: Any) -> Completion:
        """One completion (from the cache when present), always live. Failures come back with error set."""
        messages, params, key = self._prepare(Request(messages, params, schema), "complete()")
        failures = not self.options().retry_failed
        if not self.refresh and (hit := self.cache.get(key, failures=failures)) is not None:
            return self.from_cache(hit)
        self._ensure_checked()
        return self.run_once(messages, params, schema, key, failures)

    def complete_many(
        self,
        requests: Sequence[Request],
        max_concurrency: int | None = None,
        desc: str | None = None,
        progress: bool = True,
        *,
        batch: bool | None = None,
        batch_fallback: BatchFallback | None = None,
        max_cost_usd: float | None = None,
        retry_failed: bool | None = None,
        options: RunOptions | None = None,
    ) -> list[Completion]:
        """Completions in input order; cached ones first, the rest live on a thread pool (works in
        Jupyter) or, with batch=True, through the provider's Batch API at half price.

        max_concurrency is the ceiling of the adaptive limit (default 64; CFA_MAX_CONCURRENCY).
        batch / batch_fallback ("batch": retry failures by batch, "live": retry them live): CFA_BATCH,
        CFA_BATCH_FALLBACK. max_cost_usd (CFA_MAX_COST_USD): raise SpendCapReached rather than cross it.
        Identical requests are sent once. Each answer is cached as it arrives, so an interrupted run
        resumes where it stopped; failures are returned and counted in a warning, cached only when the
        backend is deterministic (determinism.py), and then sent again only with retry_failed
        (CFA_RETRY_FAILED). `options`: all of these resolved once by the caller (a run's `Session`), used as
        they are.
        """
        given = (max_concurrency, batch, batch_fallback, max_cost_usd, retry_failed)
        if options is not None and any(value is not None for value in given):
            raise TypeError("complete_many takes either options= or the separate engine arguments, not both")
        opts = options if options is not None else self.options(*given)
        self._cap = opts.max_cost_usd
        prepared = [self._prepare(r, f"request {i}") for i, r in enumerate(requests)]
        results: list[Completion | None] = [None] * len(prepared)
        by_key: dict[str, list[int]] = {}
        for i, (_, _, key) in enumerate(prepared):
            by_key.setdefault(key, []).append(i)
        hits = {} if self.refresh else self.cache.get_many(by_key, failures=not opts.retry_failed)
        for key, payload in hits.items():
            for i in by_key[key]:
                results[i] = self.from_cache(payload)
        todo = [key for key in by_key if key not in hits]
        if todo:
            self._ensure_checked()
        started = time.monotonic()
        rate_limited_before = self.limit.rate_limited
        use_batch = bool(todo) and opts.batch and self.batch_available()
        bar = tqdm(
            total=len(prepared),
            initial=len(prepared) - sum(len(by_key[k]) for k in todo),
            desc=desc or self.spec.name,
            disable=not progress or use_batch,
            unit="req",
        )

        def done(key: str, completion: Completion) -> None:
            for n, i in enumerate(by_key[key]):
                results[i] = completion if n == 0 else Completion.from_dict(completion.to_dict())
            bar.update(len(by_key[key]))

        items = [BatchItem(key, prepared[by_key[key][0]][0], prepared[by_key[key][0]][1],
                           requests[by_key[key][0]].schema) for key in todo]
        budget = self._budget(items, opts, use_batch)
        try:
            if use_batch:
                left = self.send_batch(items, opts, desc or self.spec.name, progress, budget, done)
            else:
                left = self.send_live(items, opts, budget, done)
        finally:
            bar.close()
        self._log_call(desc, len(prepared), todo, use_batch, time.monotonic() - started, rate_limited_before)
        if left:
            raise budget.stop(left)
        final = [c for c in results if c is not None]
        warn_failures(self.spec.name, final)
        return final

    # -- spend cap and stats ------------------------------------------------------------------------
    def _budget(self, items: list[BatchItem], opts: RunOptions, batch: bool) -> Budget:
        if opts.max_cost_usd is None or not items:
            return Budget.unlimited()
        keyed = {item.key: (item.messages, item.params, item.schema) for item in items}
        costs = expected_costs(self.backend, self.spec, keyed, batch)
        if costs is None:
            log.warning("max_cost_usd is not applied to %s: no price is known for it", self.spec.name)
            return Budget.unlimited()
        return Budget.for_requests(self.spec.name, opts.max_cost_usd, self.cache.spent(spend_session()), costs)

    def engine_stats(self) -> dict[str, Any]:
        """JSON-safe stats of this model's requests in this process, for a results file's metadata:
        concurrency-limit history ([seconds, limit] changes), 429s, batch ids, spend so far, refusals."""
        server = getattr(self.backend, "base_url", None) or getattr(self.backend, "host", None)
        return {
            "model": self.spec.name,
            **({"served_as": self.spec.model, "endpoint": endpoint(server)} if server else {}),
            **self.limit.stats(),
            "batch_ids": list(self._batch_ids),
            "batch_requests": self._batch_requests,
            "spent_usd": round(self.cache.spent(spend_session()), 6),
            "max_cost_usd": self._cap,
            "refused": self.backend.refusals(),  # e.g. a server that refused json_schema, and its words
        }

    def _log_call(self, desc: str | None, n: int, todo: list[str], batch: bool, wall_s: float,
                  rate_limited_before: int) -> None:
        """One JSON line per complete_many in CFA_ENGINE_LOG (benchmarks read it from notebook kernels)."""
        path = os.environ.get("CFA_ENGINE_LOG")
        if not path:
            return
        line = {"model": self.spec.name, "desc": desc, "requests": n, "sent": len(todo), "batch": batch,
                "wall_s": round(wall_s, 4), "end": time.time(), "limit": int(self.limit.limit),
                "max_concurrency": self.limit.ceiling,
                "rate_limited_429": self.limit.rate_limited - rate_limited_before}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")

    # -- cost ---------------------------------------------------------------------------------------
    def estimate(self, requests: Sequence[Request], batch: bool | None = None) -> CostEstimate:
        """Expected tokens and cost of the requests not yet cached (never fails offline)."""
        prepared = [self._prepare(r, f"request {i}") for i, r in enumerate(requests)]
        hits = {} if self.refresh else self.cache.get_many(key for _, _, key in prepared)
        todo = [(p[0], p[1], r.schema) for r, p in zip(requests, prepared, strict=True) if p[2] not in hits]
        return cost_estimate(self.backend, self.spec, todo, len(prepared), self.options(batch=batch).batch)

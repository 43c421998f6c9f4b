"""The one object experiments talk to: cache first, then the backend with retries, typed failures.

Requests go live at an adaptive concurrency (limiter.py), or through OpenAI's Batch API at half price
(batch.py); either way under an optional spend cap, and every answer lands in the cache the same way.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tqdm.auto import tqdm

from .backend import Backend, Messages, RawReply
from .batch import BatchItem, BatchRunner, NoBatchAPI
from .cache import HOST, CompletionCache, cache_key
from .determinism import is_deterministic, kept, retry_failed_option, warn_failures
from .env import flag_from_env, positive_from_env
from .errors import ModelUnavailableError, SpendCapReached, usd
from .limiter import AdaptiveLimit
from .local_backend import DEFAULT_N_CTX, LocalBackend
from .names import ModelSpec, parse_model_name
from .ollama_backend import OllamaBackend
from .openai_backend import OpenAIBackend
from .pricing import BATCH_DISCOUNT, cost_usd, price_for
from .replies import Attempt, settle
from .retry import RetryPolicy, TransientError, call_with_retries
from .schema import json_schema_of
from .types import Completion, CostEstimate, Request, Schema

log = logging.getLogger("cfa_lib.models")

TYPICAL_COMPLETION_TOKENS = 300  # a worked CFA answer; reasoning models use their hidden budget too
TYPICAL_REASONING_TOKENS = 2000
MESSAGE_OVERHEAD_TOKENS = 4  # role markers per message in chat templates
CLAIM_POLL_S = 0.25  # how often a run waiting for another run's answer looks again
DEFAULT_MAX_CONCURRENCY = 64  # a ceiling: the adaptive limit starts at 16 and grows while answers are clean
BATCH_ROUNDS = 3  # a request that failed inside a batch goes into at most two more batches
BatchFallback = Literal["batch", "live"]

_limits: dict[str, AdaptiveLimit] = {}
_limits_lock = threading.Lock()
_session: tuple[int, str] | None = None


def shared_limit(backend: Backend) -> AdaptiveLimit:
    """One limit per server and model in this process, so the model and its judge (or a second client of
    the same model) share what was learnt about the provider's rate limit."""
    key = json.dumps({**backend.identity(), "kind": backend.kind}, sort_keys=True, default=str)
    with _limits_lock:
        if key not in _limits:
            fixed = backend.fixed_concurrency
            _limits[key] = AdaptiveLimit(fixed or DEFAULT_MAX_CONCURRENCY, adaptive=fixed is None)
        return _limits[key]


def spend_session() -> str:
    """Who max_cost_usd counts: CFA_SPEND_SESSION (a pipeline shares one across its notebooks), else this
    process."""
    global _session
    if os.environ.get("CFA_SPEND_SESSION"):
        return os.environ["CFA_SPEND_SESSION"]
    if _session is None or _session[0] != os.getpid():
        _session = (os.getpid(), f"{HOST}:{os.getpid()}:{time.time():.3f}")
    return _session[1]


@dataclass(frozen=True)
class RunOptions:
    """How complete_many sends: keyword arguments, else get_client's, else the CFA_* environment."""

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    batch: bool = False
    batch_fallback: BatchFallback = "batch"
    max_cost_usd: float | None = None
    retry_failed: bool = False  # send cached deterministic failures again


@dataclass
class _Budget:
    """max_cost_usd: the spend session's total plus what is reserved for requests sent but not answered."""

    cap: float | None
    spent: float
    costs: dict[str, float | None]
    reserved: dict[str, float] = field(default_factory=dict)

    def reserve(self, key: str) -> bool:
        cost = self.costs.get(key)
        if self.cap is None or cost is None or key in self.reserved:
            return True
        if self.spent + sum(self.reserved.values()) + cost > self.cap:
            return False
        self.reserved[key] = cost
        return True

    def settle(self, key: str, completion: Completion) -> None:
        self.reserved.pop(key, None)
        if not completion.cached:
            self.spent += completion.cost_usd or 0.0

    def stop(self, left: list[str]) -> SpendCapReached:
        rest = sum(self.costs.get(k) or 0.0 for k in left)
        return SpendCapReached(self.spent, self.cap or 0.0, len(left), rest)


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


class ModelClient:
    """Completions from one model, through the cache. Thread-safe."""

    def __init__(
        self,
        spec: ModelSpec,
        backend: Backend,
        cache: CompletionCache,
        *,
        refresh: bool = False,
        retry: RetryPolicy | None = None,
        max_concurrency: int | None = None,
        batch: bool | None = None,
        batch_fallback: BatchFallback | None = None,
        max_cost_usd: float | None = None,
        retry_failed: bool | None = None,
        deterministic: bool | None = None,
    ) -> None:
        self.spec = spec
        self.backend = backend
        self.cache = cache
        self.refresh = refresh
        self.retry = retry or RetryPolicy()
        self.limit = shared_limit(backend)
        self._defaults = {"max_concurrency": max_concurrency, "batch": batch, "batch_fallback": batch_fallback,
                          "max_cost_usd": max_cost_usd, "retry_failed": retry_failed}
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
        """Keyword arguments first, then get_client's, then CFA_MAX_CONCURRENCY, CFA_BATCH,
        CFA_BATCH_FALLBACK, CFA_MAX_COST_USD and CFA_RETRY_FAILED, then the defaults (64, live, "batch", no
        cap, cached failures kept)."""
        given = {"max_concurrency": max_concurrency, "batch": batch, "batch_fallback": batch_fallback,
                 "max_cost_usd": max_cost_usd, "retry_failed": retry_failed}
        pick = {k: v if v is not None else self._defaults[k] for k, v in given.items()}
        concurrency = pick["max_concurrency"] or positive_from_env("CFA_MAX_CONCURRENCY", int)
        if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                        or concurrency < 1):
            raise ValueError(f"max_concurrency must be a positive integer, got {concurrency!r}")
        fallback = pick["batch_fallback"] or os.environ.get("CFA_BATCH_FALLBACK") or "batch"
        if fallback not in ("batch", "live"):
            raise ValueError(f"batch_fallback={fallback!r} is not valid: accepted values are 'batch' or 'live'.")
        cap = pick["max_cost_usd"]
        if cap is None:
            cap = positive_from_env("CFA_MAX_COST_USD", float)
        elif isinstance(cap, bool) or not isinstance(cap, int | float) or cap <= 0:
            raise ValueError(f"max_cost_usd={cap!r} is not valid: accepted values are a positive number of USD.")
        return RunOptions(
            max_concurrency=concurrency or DEFAULT_MAX_CONCURRENCY,
            batch=pick["batch"] if pick["batch"] is not None else bool(flag_from_env("CFA_BATCH")),
            batch_fallback=fallback,
            max_cost_usd=float(cap) if cap is not None else None,
            retry_failed=retry_failed_option(pick["retry_failed"]),
        )

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
    def _judge(self, raw: RawReply, state: Attempt, schema: Schema | None, batch: bool = False
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
                self.backend.kind, self.spec.model, raw.prompt_tokens, raw.completion_tokens, batch=batch
            ),
            retries=state.retries,
        )
        return settle(completion, raw, state, schema, self.backend.budget_key(), self._deterministic(state.params))

    def _deterministic(self, params: dict[str, Any]) -> bool:
        return is_deterministic(self.deterministic, self.backend, params)

    def _store(self, completion: Completion, key: str, params: dict[str, Any]) -> Completion:
        """Cache an answer, and a failure that sending the request again would only repeat."""
        if completion.error is not None:
            completion.error = _scrub(completion.error)
        if kept(completion, self._deterministic(params)):
            self.cache.put(key, self.spec.name, completion.to_dict(), session=spend_session())
        return completion

    def _run(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str) -> Completion:
        """Ask the backend (retries and the adaptive limit in call_with_retries) until _judge is content."""
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
                return self._failure(start, retries, f"gave up after {retries + 1} attempts: {exc}", "failed")
            except Exception as exc:  # a request the backend rejects: recorded, the run goes on
                return self._failure(start, state.retries, f"{type(exc).__name__}: {exc}", "failed")
            completion = self._judge(raw, state, schema)
            if completion is not None:
                completion.latency_s = time.perf_counter() - start
                return self._store(completion, key, params)

    def _run_once(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str,
                  failures: bool = True) -> Completion:
        """`_run` under a claim in the shared cache: when another run is already asking the same
        request, wait for its answer instead of paying for it again (`failures`: a cached failure is one)."""
        while True:
            mine, payload = self.cache.try_claim(key, use_cached=not self.refresh, failures=failures)
            if payload is not None:
                return self._from_cache(payload)
            if mine:
                return self._run_claimed(messages, params, schema, key)
            time.sleep(CLAIM_POLL_S)

    def _run_claimed(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str
                     ) -> Completion:
        """`_run` for a request this process has claimed (claim_many); a failure gives the claim up."""
        completion = None
        try:
            completion = self._run(messages, params, schema, key)
            return completion
        finally:
            if completion is None or not completion.ok:  # a stored completion released its claim already
                self.cache.release(key)

    def _failure(self, start: float, retries: int, error: str, kind: str) -> Completion:
        return Completion(
            text="",
            model=self.spec.name,
            latency_s=time.perf_counter() - start,
            error=_scrub(error),
            error_kind=kind,  # type: ignore[arg-type]
            retries=retries,
        )

    def _from_cache(self, payload: dict[str, Any]) -> Completion:
        completion = Completion.from_dict(payload)
        completion.cached = True
        return completion

    def complete(self, messages: Messages, schema: Schema | None = None, **params: Any) -> Completion:
        """One completion (from the cache when present), always live. Failures come back with error set."""
        messages, params, key = self._prepare(Request(messages, params, schema), "complete()")
        failures = not self.options().retry_failed
        if not self.refresh and (hit := self.cache.get(key, failures=failures)) is not None:
            return self._from_cache(hit)
        self._ensure_checked()
        return self._run_once(messages, params, schema, key, failures)

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
    ) -> list[Completion]:
        """Completions in input order; cached ones first, the rest live on a thread pool (works in
        Jupyter) or, with batch=True, through the provider's Batch API at half price.

        max_concurrency is the ceiling of the adaptive limit (default 64; CFA_MAX_CONCURRENCY).
        batch / batch_fallback ("batch": retry failures by batch, "live": retry them live): CFA_BATCH,
        CFA_BATCH_FALLBACK. max_cost_usd (CFA_MAX_COST_USD): raise SpendCapReached rather than cross it.
        Identical requests are sent once. Each answer is cached as it arrives, so an interrupted run
        resumes where it stopped; failures are returned and counted in a warning, cached only when the
        backend is deterministic (determinism.py), and then sent again only with retry_failed
        (CFA_RETRY_FAILED).
        """
        opts = self.options(max_concurrency, batch, batch_fallback, max_cost_usd, retry_failed)
        self._cap = opts.max_cost_usd
        prepared = [self._prepare(r, f"request {i}") for i, r in enumerate(requests)]
        results: list[Completion | None] = [None] * len(prepared)
        by_key: dict[str, list[int]] = {}
        for i, (_, _, key) in enumerate(prepared):
            by_key.setdefault(key, []).append(i)
        hits = {} if self.refresh else self.cache.get_many(by_key, failures=not opts.retry_failed)
        for key, payload in hits.items():
            for i in by_key[key]:
                results[i] = self._from_cache(payload)
        todo = [key for key in by_key if key not in hits]
        if todo:
            self._ensure_checked()
        started = time.monotonic()
        rate_limited_before = self.limit.rate_limited
        use_batch = bool(todo) and opts.batch and self._batch_available()
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
                left = self._send_batch(items, opts, desc or self.spec.name, progress, budget, done)
            else:
                left = self._send_live(items, opts, budget, done)
        finally:
            bar.close()
        self._log_call(desc, len(prepared), todo, use_batch, time.monotonic() - started, rate_limited_before)
        if left:
            raise budget.stop(left)
        final = [c for c in results if c is not None]
        warn_failures(self.spec.name, final)
        return final

    # -- live ---------------------------------------------------------------------------------------
    def _send_live(self, items: list[BatchItem], opts: RunOptions, budget: _Budget,
                   done: Callable[[str, Completion], None]) -> list[str]:
        """Send on a thread pool; each HTTP attempt waits for a connection of the adaptive limit.
        Requests are claimed in the cache a chunk at a time, just before they are handed to the pool.
        Returns the keys left unsent by the spend cap."""
        ceiling = min(opts.max_concurrency, self.backend.fixed_concurrency or opts.max_concurrency)
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
                            done(item.key, self._from_cache(answered[item.key]))
                        else:
                            claimed.append((item, item.key in mine))
                while claimed and len(futures) < window and budget.reserve(claimed[0][0].key):
                    item, ours = claimed.popleft()
                    run = self._run_claimed if ours else functools.partial(self._run_once, failures=failures)
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

    # -- batch --------------------------------------------------------------------------------------
    def _batch_available(self) -> bool:
        if self.backend.supports_batch:
            return True
        if not self._warned_batch:
            self._warned_batch = True
            log.warning("%s has no batch API (only OpenAI's has); running live", self.spec.name)
        return False

    def _send_batch(self, items: list[BatchItem], opts: RunOptions, desc: str, progress: bool, budget: _Budget,
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
        runner = BatchRunner(self.backend, self.cache, self.spec.name)  # type: ignore[arg-type]
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
                completion = None if raw is None else self._judge(raw, state, item.schema, batch=True)
                if completion is None:
                    state.error = outcome.errors.get(item.key) or state.error
                    state.retries += 1
                    item.params = state.params
                    retry.append(item)
                    continue
                completion.latency_s = time.perf_counter() - start
                budget.settle(item.key, completion)
                done(item.key, self._store(completion, item.key, item.params))
            pending = retry
        if pending and live:
            left += self._send_live(pending, opts, budget, done)
        else:
            for item in pending:
                state = states[item.key]
                message = f"failed in {BATCH_ROUNDS} batches: {state.error or 'invalid answer'}"
                done(item.key, self._failure(start, state.retries, message, "failed"))
        return left

    # -- spend cap and stats ------------------------------------------------------------------------
    def _budget(self, items: list[BatchItem], opts: RunOptions, batch: bool) -> _Budget:
        if opts.max_cost_usd is None or not items:
            return _Budget(None, 0.0, {})
        plan = self._token_plan([(item.messages, item.params, item.schema) for item in items])
        price = price_for(self.backend.kind, self.spec.model)
        if price is None:
            log.warning("max_cost_usd is not applied to %s: no price is known for it", self.spec.name)
            return _Budget(None, 0.0, {})
        factor = BATCH_DISCOUNT if batch else 1.0
        costs: dict[str, float | None] = {
            item.key: factor * (prompt * price[0] + min(budget, plan.typical) * price[1]) / 1e6
            for item, prompt, budget in zip(items, plan.prompt, plan.budgets, strict=True)
        }
        budget = _Budget(opts.max_cost_usd, self.cache.spent(spend_session()), costs)
        total = sum(c or 0.0 for c in costs.values())
        if budget.spent + total > opts.max_cost_usd:
            log.warning("%s: %s spent plus about %s for %d requests exceeds max_cost_usd=%s; the run stops "
                        "before crossing it", self.spec.name, usd(budget.spent), usd(total), len(items),
                        usd(opts.max_cost_usd))
        return budget

    def engine_stats(self) -> dict[str, Any]:
        """JSON-safe stats of this model's requests in this process, for a results file's metadata:
        concurrency-limit history ([seconds, limit] changes), 429s, batch ids, spend so far."""
        return {
            "model": self.spec.name,
            **self.limit.stats(),
            "batch_ids": list(self._batch_ids),
            "batch_requests": self._batch_requests,
            "spent_usd": round(self.cache.spent(spend_session()), 6),
            "max_cost_usd": self._cap,
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
    def _token_plan(self, todo: list[tuple[Messages, dict[str, Any], Schema | None]]) -> _TokenPlan:
        texts = []
        for messages, _, schema in todo:
            text = "\n".join(str(m["content"]) for m in messages)
            if schema is not None:
                text += json.dumps(json_schema_of(schema))
            texts.append(text)
        counted = self.backend.count_tokens(texts)
        prompt = [t + MESSAGE_OVERHEAD_TOKENS * len(m) for t, (m, _, _) in zip(counted.tokens, todo, strict=True)]
        budget_key = self.backend.budget_key()
        budgets = [int(p.get(budget_key) or 0) for _, p, _ in todo]
        typical = TYPICAL_REASONING_TOKENS if self.spec.is_thinking else TYPICAL_COMPLETION_TOKENS
        return _TokenPlan(prompt, budgets, typical, counted.method, counted.note)

    def estimate(self, requests: Sequence[Request], batch: bool | None = None) -> CostEstimate:
        """Expected tokens and cost of the requests not yet cached (never fails offline), with the Batch
        API's price beside the live one where the backend has it."""
        prepared = [self._prepare(r, f"request {i}") for i, r in enumerate(requests)]
        hits = {} if self.refresh else self.cache.get_many(key for _, _, key in prepared)
        todo = [(p[0], p[1], r.schema) for r, p in zip(requests, prepared, strict=True) if p[2] not in hits]
        plan = self._token_plan(todo)
        prompt = sum(plan.prompt)
        expected = sum(min(b, plan.typical) for b in plan.budgets)
        price = price_for(self.backend.kind, self.spec.model)

        def usd(completion_tokens: int) -> float | None:
            return None if price is None else (prompt * price[0] + completion_tokens * price[1]) / 1e6

        note = plan.note
        if price is not None:
            note = "; ".join(
                filter(None, [note, f"expected assumes ≤{plan.typical} completion tokens per answer"])
            )
        live = usd(expected)
        wants_batch = self.options(batch=batch).batch
        if wants_batch and not self.backend.supports_batch:
            note = "; ".join(filter(None, [note, f"{self.spec.name} has no batch API, so it runs live"]))
        return CostEstimate(
            model=self.spec.name,
            n_requests=len(prepared),
            n_cached=len(prepared) - len(todo),
            prompt_tokens=prompt,
            completion_budget_tokens=sum(plan.budgets),
            expected_completion_tokens=expected,
            token_method=plan.method,
            cost_usd=live,
            cost_low_usd=usd(0),
            cost_high_usd=usd(sum(plan.budgets)),
            note=note,
            batch_cost_usd=live * BATCH_DISCOUNT if live is not None and self.backend.supports_batch else None,
            batch=wants_batch and self.backend.supports_batch,
        )


@dataclass(frozen=True)
class _TokenPlan:
    prompt: list[int]  # per request, message overhead included
    budgets: list[int]  # completion-token budget per request
    typical: int  # completion tokens an answer usually takes
    method: str
    note: str


def get_client(
    model: str = "local",
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
    """A client for one model name (see names.py for the accepted forms). Does not touch the network.

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
    spec = parse_model_name(model)
    timeout_s = timeout_s or positive_from_env("CFA_TIMEOUT_S", float)
    max_attempts = max_attempts or positive_from_env("CFA_MAX_ATTEMPTS", int) or 6
    backend: Backend
    if spec.backend == "openai":
        backend = OpenAIBackend(spec, base_url=base_url, timeout_s=timeout_s or 120.0)
    elif spec.backend == "ollama":
        backend = OllamaBackend(spec, timeout_s=timeout_s or 600.0)  # a 32B model on CPU is slow
    else:
        backend = LocalBackend(spec, n_ctx=n_ctx)
    retry = RetryPolicy(max_attempts=max_attempts, backoff_base_s=backoff_base_s, backoff_max_s=backoff_max_s)
    cache = CompletionCache(Path(cache_dir) if cache_dir is not None else None)
    client = ModelClient(spec, backend, cache, refresh=refresh, retry=retry, max_concurrency=max_concurrency,
                         batch=batch, batch_fallback=batch_fallback, max_cost_usd=max_cost_usd,
                         retry_failed=retry_failed, deterministic=deterministic)
    client.options()  # a bad value (argument or CFA_* variable) fails here, before any question
    flag_from_env("CFA_DETERMINISTIC")  # and CFA_DETERMINISTIC
    return client

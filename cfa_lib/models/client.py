"""The one object experiments talk to: cache first, then the backend with retries, typed failures."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from .backend import Backend, Messages
from .cache import CompletionCache, cache_key
from .errors import ModelUnavailableError
from .local_backend import DEFAULT_N_CTX, LocalBackend
from .names import ModelSpec, parse_model_name
from .ollama_backend import OllamaBackend
from .openai_backend import OpenAIBackend
from .pricing import cost_usd, price_for
from .retry import RetryPolicy, TransientError, call_with_retries
from .schema import InvalidJSONError, json_schema_of, validate_reply
from .types import Completion, CostEstimate, Request, Schema

log = logging.getLogger("cfa_lib.models")

TYPICAL_COMPLETION_TOKENS = 300  # a worked CFA answer; reasoning models use their hidden budget too
TYPICAL_REASONING_TOKENS = 2000
MESSAGE_OVERHEAD_TOKENS = 4  # role markers per message in chat templates
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
    ) -> None:
        self.spec = spec
        self.backend = backend
        self.cache = cache
        self.refresh = refresh
        self.retry = retry or RetryPolicy()
        self._checked = False
        self._check_lock = threading.Lock()

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

    # -- keys ---------------------------------------------------------------------------------------
    def _key(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> str:
        return cache_key(
            {
                **self.backend.identity(),
                "messages": messages,
                "params": params,
                "schema": json_schema_of(schema) if schema is not None else None,
            }
        )

    def _prepare(self, request: Request, where: str) -> tuple[Messages, dict[str, Any], str]:
        messages = _validate_messages(request.messages, where)
        if request.schema is not None:
            json_schema_of(request.schema)  # TypeError now, not inside a worker thread
        params = self.backend.prepare_params(dict(request.params))
        return messages, params, self._key(messages, params, request.schema)

    # -- one completion ---------------------------------------------------------------------------
    def _run(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str) -> Completion:
        """Ask the backend; a larger budget once for an empty cut-off answer, one retry for bad JSON."""
        start = time.perf_counter()
        retries = 0
        budget_retried = json_retried = False
        params = dict(params)
        while True:
            try:
                raw, used = call_with_retries(
                    lambda p=params: self.backend.call(messages, p, schema), self.retry
                )
                retries += used
            except ModelUnavailableError:
                raise
            except TransientError as exc:
                retries += getattr(exc, "retries", 0)
                return self._failure(start, retries, f"gave up after {retries + 1} attempts: {exc}", "failed")
            except Exception as exc:  # a request the backend rejects: recorded, the run goes on
                return self._failure(start, retries, f"{type(exc).__name__}: {exc}", "failed")
            completion = Completion(
                text=raw.text,
                model=self.spec.name,
                thinking=raw.thinking,
                prompt_tokens=raw.prompt_tokens,
                completion_tokens=raw.completion_tokens,
                finish_reason=raw.finish_reason,
                cost_usd=cost_usd(
                    self.backend.kind, self.spec.model, raw.prompt_tokens, raw.completion_tokens
                ),
                retries=retries,
            )
            if not raw.text.strip() and raw.finish_reason == "length":
                if not budget_retried:
                    budget_retried = True
                    budget_key = self.backend.budget_key()
                    params[budget_key] = 2 * int(params.get(budget_key) or 1024)
                    continue
                completion.error = (
                    f"empty answer cut off by the token limit ({params.get(self.backend.budget_key())})"
                )
                completion.error_kind = "truncated"
            elif schema is not None:
                try:
                    completion.parsed = validate_reply(schema, raw.text)
                except InvalidJSONError as exc:
                    if not json_retried:
                        json_retried = True
                        continue
                    completion.error = str(exc)
                    completion.error_kind = "invalid_json"
            completion.latency_s = time.perf_counter() - start
            if completion.error is not None:
                completion.error = _scrub(completion.error)
            else:
                self.cache.put(key, self.spec.name, completion.to_dict())
            return completion

    def _run_once(self, messages: Messages, params: dict[str, Any], schema: Schema | None, key: str) -> Completion:
        """`_run` under a claim in the shared cache: when another run is already asking the same
        request, wait for its answer instead of paying for it again."""
        while True:
            mine, payload = self.cache.try_claim(key, use_cached=not self.refresh)
            if payload is not None:
                return self._from_cache(payload)
            if mine:
                try:
                    return self._run(messages, params, schema, key)
                finally:
                    self.cache.release(key)
            time.sleep(CLAIM_POLL_S)

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
        """One completion (from the cache when present). Failures come back with error set."""
        messages, params, key = self._prepare(Request(messages, params, schema), "complete()")
        if not self.refresh and (hit := self.cache.get(key)) is not None:
            return self._from_cache(hit)
        self._ensure_checked()
        return self._run_once(messages, params, schema, key)

    def complete_many(
        self,
        requests: Sequence[Request],
        max_concurrency: int = 8,
        desc: str | None = None,
        progress: bool = True,
    ) -> list[Completion]:
        """Completions in input order; cached ones first, the rest on a thread pool (works in Jupyter).

        Identical requests are sent once. Each answer is cached as it arrives, so an interrupted run
        resumes where it stopped; failures are returned (not cached) and counted in a warning.
        """
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        prepared = [self._prepare(r, f"request {i}") for i, r in enumerate(requests)]
        results: list[Completion | None] = [None] * len(prepared)
        by_key: dict[str, list[int]] = {}
        for i, (_, _, key) in enumerate(prepared):
            by_key.setdefault(key, []).append(i)
        hits = {} if self.refresh else self.cache.get_many(by_key)
        for key, payload in hits.items():
            for i in by_key[key]:
                results[i] = self._from_cache(payload)
        todo = [key for key in by_key if key not in hits]
        if todo:
            self._ensure_checked()
        bar = tqdm(
            total=len(prepared),
            initial=len(prepared) - sum(len(by_key[k]) for k in todo),
            desc=desc or self.spec.name,
            disable=not progress,
            unit="req",
        )
        pool = ThreadPoolExecutor(max_workers=max(1, min(max_concurrency, len(todo))))
        try:
            futures = {}
            for key in todo:
                messages, params, _ = prepared[by_key[key][0]]
                schema = requests[by_key[key][0]].schema
                futures[pool.submit(self._run_once, messages, params, schema, key)] = key
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    completion = future.result()
                    for n, i in enumerate(by_key[futures[future]]):
                        results[i] = completion if n == 0 else Completion.from_dict(completion.to_dict())
                    bar.update(len(by_key[futures[future]]))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C in Jupyter: stop sending
            raise
        finally:
            bar.close()
        pool.shutdown(wait=True)
        final = [c for c in results if c is not None]
        failed = Counter(c.error_kind for c in final if not c.ok)
        if failed:
            kinds = ", ".join(f"{k}={n}" for k, n in sorted(failed.items()))
            log.warning(
                "%s: %d of %d requests failed (%s); they are not cached, so a rerun retries only them",
                self.spec.name,
                sum(failed.values()),
                len(final),
                kinds,
            )
        return final

    # -- cost ---------------------------------------------------------------------------------------
    def estimate(self, requests: Sequence[Request]) -> CostEstimate:
        """Expected tokens and cost of the requests not yet cached (never fails offline)."""
        prepared = [self._prepare(r, f"request {i}") for i, r in enumerate(requests)]
        hits = {} if self.refresh else self.cache.get_many(key for _, _, key in prepared)
        todo = [(r, p) for r, p in zip(requests, prepared, strict=True) if p[2] not in hits]
        texts = []
        for request, (messages, _, _) in todo:
            text = "\n".join(str(m["content"]) for m in messages)
            if request.schema is not None:
                text += json.dumps(json_schema_of(request.schema))
            texts.append(text)
        counted = self.backend.count_tokens(texts)
        prompt = sum(counted.tokens) + MESSAGE_OVERHEAD_TOKENS * sum(len(m) for _, (m, _, _) in todo)
        budget_key = self.backend.budget_key()
        budgets = [int(p.get(budget_key) or 0) for _, (_, p, _) in todo]
        typical = TYPICAL_REASONING_TOKENS if self.spec.is_thinking else TYPICAL_COMPLETION_TOKENS
        expected = sum(min(b, typical) for b in budgets)
        price = price_for(self.backend.kind, self.spec.model)

        def usd(completion_tokens: int) -> float | None:
            return None if price is None else (prompt * price[0] + completion_tokens * price[1]) / 1e6

        note = counted.note
        if price is not None:
            note = "; ".join(
                filter(None, [note, f"expected assumes ≤{typical} completion tokens per answer"])
            )
        return CostEstimate(
            model=self.spec.name,
            n_requests=len(prepared),
            n_cached=len(prepared) - len(todo),
            prompt_tokens=prompt,
            completion_budget_tokens=sum(budgets),
            expected_completion_tokens=expected,
            token_method=counted.method,
            cost_usd=usd(expected),
            cost_low_usd=usd(0),
            cost_high_usd=usd(sum(budgets)),
            note=note,
        )


def _positive_from_env(name: str, kind: type[int] | type[float]) -> Any:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        number = kind(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise ValueError(f"Environment variable {name}={value!r} is not valid: accepted values are a positive "
                         f"{'integer' if kind is int else 'number'}.")
    return number


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
) -> ModelClient:
    """A client for one model name (see names.py for the accepted forms). Does not touch the network.

    base_url: an OpenAI-compatible server (else OPENAI_BASE_URL, else api.openai.com).
    refresh: ignore cached answers (new answers still replace them in the cache).
    timeout_s: per HTTP attempt (else CFA_TIMEOUT_S, else 120 s for OpenAI and 600 s for Ollama).
    max_attempts: per request, retries included (else CFA_MAX_ATTEMPTS, else 6).
    The environment variables let an overnight notebook run be tuned without editing it.
    """
    spec = parse_model_name(model)
    timeout_s = timeout_s or _positive_from_env("CFA_TIMEOUT_S", float)
    max_attempts = max_attempts or _positive_from_env("CFA_MAX_ATTEMPTS", int) or 6
    backend: Backend
    if spec.backend == "openai":
        backend = OpenAIBackend(spec, base_url=base_url, timeout_s=timeout_s or 120.0)
    elif spec.backend == "ollama":
        backend = OllamaBackend(spec, timeout_s=timeout_s or 600.0)  # a 32B model on CPU is slow
    else:
        backend = LocalBackend(spec, n_ctx=n_ctx)
    retry = RetryPolicy(max_attempts=max_attempts, backoff_base_s=backoff_base_s, backoff_max_s=backoff_max_s)
    cache = CompletionCache(Path(cache_dir) if cache_dir is not None else None)
    return ModelClient(spec, backend, cache, refresh=refresh, retry=retry)

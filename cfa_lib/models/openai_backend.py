"""OpenAI chat completions (api.openai.com or any OpenAI-compatible server via base_url)."""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion

from .backend import (
    BackendSettings,
    Messages,
    RawReply,
    ServerReplies,
    TokenCount,
    approx_count,
    is_loopback,
    register_backend,
)
from .errors import ModelUnavailableError
from .names import ModelSpec
from .retry import RETRY_STATUS, TransientError, parse_retry_after
from .schema import json_schema_of, schema_name, strict_schema
from .thinking import split_thinking
from .types import Schema

log = logging.getLogger("cfa_lib.models")

CHAT_MAX_TOKENS = 1024
REASONING_MAX_COMPLETION_TOKENS = 8000
_NO_KEY_PLACEHOLDER = "sk-no-key-required"  # loopback servers (llama.cpp, vLLM) ignore the key


def status_error(exc: openai.APIStatusError) -> Exception:
    """What an HTTP error means to the engine: 429 slows down, 5xx is retried, an empty quota stops the run."""
    if exc.status_code == 429 and getattr(exc, "code", None) == "insufficient_quota":
        return ModelUnavailableError(
            "OpenAI answered 429 insufficient_quota: the account has no credit left; add credit at "
            "https://platform.openai.com/settings/organization/billing and rerun (answers so far are cached)"
        )
    if exc.status_code in RETRY_STATUS:
        return TransientError(
            f"HTTP {exc.status_code}: {exc.message}",
            parse_retry_after(exc.response.headers),
            rate_limited=exc.status_code == 429,
        )
    return exc


def reply_from(response: ChatCompletion) -> RawReply:
    """A chat completion (live, or one line of a batch's output) as the engine's RawReply."""
    if not response.choices:
        raise TransientError("response without choices")
    choice = response.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    separate = extra.get("reasoning_content") or extra.get("reasoning")
    text, thinking = split_thinking(message.content or "", separate if isinstance(separate, str) else None)
    usage = response.usage
    return RawReply(
        text=text,
        thinking=thinking,
        finish_reason=choice.finish_reason,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
    )


class SchemaDialects:
    """What each server accepts for structured replies, learned once per process and shared by every client of
    it: OpenAI's `json_schema` until the server refuses it, then llama.cpp's `json_object` + schema. Until a
    server has accepted or refused, one structured request at a time probes it, so a refusal costs one
    request, not one per request in flight."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, str] = {}  # server -> "json_schema" | "json_object"
        self._refused: dict[str, str] = {}  # server -> why json_schema was refused
        self._probes: dict[str, threading.Lock] = {}

    def dialect(self, server: str) -> str:
        return self._known.get(server, "json_schema")

    def known(self, server: str) -> bool:
        return server in self._known

    def probe(self, server: str) -> threading.Lock:
        with self._lock:
            return self._probes.setdefault(server, threading.Lock())

    def accepted(self, server: str) -> None:
        self._known.setdefault(server, "json_schema")

    def refused(self, server: str, why: str) -> None:
        self._known[server] = "json_object"
        self._refused.setdefault(server, why[:300])

    def refusals(self, server: str) -> dict[str, str]:
        return {"json_schema": self._refused[server]} if server in self._refused else {}


DIALECTS = SchemaDialects()


def _rejects_json_schema(exc: openai.APIStatusError) -> bool:
    """llama.cpp's server answers 500 with a validation error naming response_format; others 400/422."""
    text = str(exc)
    return exc.status_code in (400, 422) or (exc.status_code == 500 and "response_format" in text)


@register_backend("openai")
class OpenAIBackend(ServerReplies):
    kind = "openai"
    supports_batch = True  # /v1/batches at half price (a compatible server without it is told apart at run time)
    fixed_concurrency: int | None = None  # adaptive: grows until the provider answers 429

    @classmethod
    def from_settings(cls, spec: ModelSpec, settings: BackendSettings) -> OpenAIBackend:
        return cls(spec, base_url=settings.base_url, timeout_s=settings.timeout_s or 120.0,
                   api_key_env=settings.api_key_env)

    def __init__(self, spec: ModelSpec, base_url: str | None = None, timeout_s: float = 120.0,
                 api_key_env: str | None = None) -> None:
        self.api_key_env = api_key_env or "OPENAI_API_KEY"
        self.spec = spec
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/") or None
        self.timeout_s = timeout_s
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self._formats: dict[tuple[str, Any], dict[str, Any]] = {}

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.spec.model!r}, base_url={self.base_url!r})"

    def identity(self) -> dict[str, Any]:
        return {"backend": self.kind, "model": self.spec.model, "base_url": self.base_url}

    def budget_key(self) -> str:
        return "max_completion_tokens" if self.spec.is_reasoning else "max_tokens"

    def default_params(self) -> dict[str, Any]:
        if self.spec.is_reasoning:
            return {"max_completion_tokens": REASONING_MAX_COMPLETION_TOKENS}
        return {"temperature": 0, "max_tokens": CHAT_MAX_TOKENS}

    def prepare_params(self, params: dict[str, Any]) -> dict[str, Any]:
        merged = {**self.default_params(), **params}
        if self.spec.is_reasoning:
            if "max_tokens" in merged:
                merged["max_completion_tokens"] = merged.pop("max_tokens")
            for unsupported in ("temperature", "top_p"):
                if unsupported in merged:
                    merged.pop(unsupported)
                    if unsupported not in self._warned:
                        self._warned.add(unsupported)
                        log.warning("%s is a reasoning model: %s is not sent", self.spec.name, unsupported)
        return merged

    def _api_key(self) -> str | None:
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        return _NO_KEY_PLACEHOLDER if is_loopback(self.base_url) else None

    def _get_client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                key = self._api_key()
                if key is None:
                    raise ModelUnavailableError(self._missing_key_message())
                # max_retries=0: retries happen in retry.py, where they are counted per completion.
                self._client = openai.OpenAI(
                    api_key=key, base_url=self.base_url, timeout=self.timeout_s, max_retries=0
                )
            return self._client

    def _missing_key_message(self) -> str:
        return (
            f"model {self.spec.name!r} needs the environment variable {self.api_key_env} "
            f"(export {self.api_key_env}=sk-...), or OPENAI_BASE_URL / base_url= pointing at a local "
            "OpenAI-compatible server"
        )

    def check(self) -> None:
        if self._api_key() is None:
            raise ModelUnavailableError(self._missing_key_message())
        if is_loopback(self.base_url):
            try:
                httpx.get(f"{self.base_url}/models", timeout=5.0).raise_for_status()
            except httpx.ReadTimeout:
                pass  # it took the connection and is busy answering others (llama.cpp serializes): it is up
            except httpx.HTTPError as exc:
                raise ModelUnavailableError(
                    f"no OpenAI-compatible server answers at {self.base_url} ({exc}); start it "
                    "(e.g. python -m llama_cpp.server --model X.gguf) or fix OPENAI_BASE_URL / base_url="
                ) from exc

    @property
    def server(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def refusals(self) -> dict[str, str]:
        """The capabilities this server refused in this process, and why (a results file's metadata)."""
        return DIALECTS.refusals(self.server)

    def call(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> RawReply:
        if schema is not None and not DIALECTS.known(self.server):
            with DIALECTS.probe(self.server):  # the first structured request alone, until the server has answered
                return self._call(messages, params, schema)
        return self._call(messages, params, schema)

    def _call(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> RawReply:
        try:
            try:
                response = self._create(messages, params, schema)
                if schema is not None:
                    DIALECTS.accepted(self.server)
            except openai.APIStatusError as exc:
                if schema is None or DIALECTS.dialect(self.server) != "json_schema" or not _rejects_json_schema(exc):
                    raise
                # A compatible server that refuses json_schema: json_object + schema from now on, for every client
                DIALECTS.refused(self.server, f"HTTP {exc.status_code}: {exc.message}")
                log.warning("%s refused response_format json_schema (HTTP %s); json_object + schema is sent "
                            "instead for the rest of the run", self.server, exc.status_code)
                response = self._create(messages, params, schema)
        except openai.APIStatusError as exc:
            raise status_error(exc) from exc
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        return reply_from(response)

    def _create(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> ChatCompletion:
        """POST /chat/completions through the official client's `post`, which sends the body as built
        here: `chat.completions.create` walks every message to transform it, milliseconds per request
        that cap throughput at high concurrency on a small machine."""
        body = {"model": self.spec.model, "messages": messages, **self._with_schema(params, schema)}
        return self._get_client().post("/chat/completions", body=body, cast_to=ChatCompletion)

    def batch_body(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
        """The body of one /v1/chat/completions request inside a Batch API input file."""
        return {"model": self.spec.model, "messages": messages, **self._with_schema(params, schema)}

    def api(self) -> openai.OpenAI:
        """The official client (the Batch API's files and batches endpoints)."""
        return self._get_client()

    def _with_schema(self, params: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
        kwargs = dict(params)
        if schema is not None:
            kwargs["response_format"] = self._response_format(schema)
        return kwargs

    def _response_format(self, schema: Schema) -> dict[str, Any]:
        """Built once per schema and dialect (a deep copy and a walk of the schema each time add up)."""
        dialect = DIALECTS.dialect(self.server)
        memo_key = (dialect, schema if isinstance(schema, type) else json.dumps(schema, sort_keys=True))
        if memo_key not in self._formats:
            plain = json_schema_of(schema)
            if dialect == "json_object":
                self._formats[memo_key] = {"type": "json_object", "schema": plain}
            else:
                strict = strict_schema(plain)
                self._formats[memo_key] = {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name(schema), "schema": strict or plain, "strict": bool(strict)},
                }
        return self._formats[memo_key]

    def count_tokens(self, texts: list[str]) -> TokenCount:
        try:
            import tiktoken

            try:
                encoding = tiktoken.encoding_for_model(self.spec.model)
            except KeyError:
                encoding = tiktoken.get_encoding("o200k_base")
            return TokenCount([len(encoding.encode(t, disallowed_special=())) for t in texts], "tiktoken")
        except Exception as exc:  # offline: tiktoken downloads its encodings on first use
            return approx_count(
                texts, f"tiktoken unavailable ({type(exc).__name__}), prompt tokens approximated as characters / 4"
            )

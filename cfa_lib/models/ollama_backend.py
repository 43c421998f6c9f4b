"""Ollama's native chat API (OLLAMA_HOST), with thinking kept apart from the answer."""

from __future__ import annotations

import os
import threading
from typing import Any

import httpx
import ollama

from .backend import BackendSettings, Messages, RawReply, ServerReplies, TokenCount, approx_count, register_backend
from .errors import ModelUnavailableError
from .names import ModelSpec
from .retry import RETRY_STATUS, TransientError
from .schema import json_schema_of
from .thinking import split_thinking
from .types import Schema

CHAT_MAX_TOKENS = 1024
THINKING_MAX_TOKENS = 8000  # qwen3 / deepseek-r1 think for thousands of tokens before answering
_TOP_LEVEL = ("think", "keep_alive")  # chat() arguments; every other param is a model option
_RENAMED = {"max_tokens": "num_predict"}


def full_name(model: str) -> str:
    """Ollama treats 'qwen3' and 'qwen3:latest' as one model."""
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


@register_backend("ollama")
class OllamaBackend(ServerReplies):
    kind = "ollama"
    supports_batch = False
    # Ollama runs OLLAMA_NUM_PARALLEL requests at once (1-4 by default) and queues the rest without ever
    # answering 429, so more connections only wait in its queue until they time out.
    fixed_concurrency: int | None = 4

    @classmethod
    def from_settings(cls, spec: ModelSpec, settings: BackendSettings) -> OllamaBackend:
        return cls(spec, host=settings.base_url, timeout_s=settings.timeout_s or 600.0)  # a 32B model on CPU is slow

    def __init__(self, spec: ModelSpec, host: str | None = None, timeout_s: float = 600.0) -> None:
        self.spec = spec
        self.host = host or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        self.timeout_s = timeout_s
        self._client: ollama.Client | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OllamaBackend(model={self.spec.model!r}, host={self.host!r})"

    def identity(self) -> dict[str, Any]:
        return {"backend": self.kind, "model": full_name(self.spec.model)}

    def budget_key(self) -> str:
        return "max_tokens"

    def default_params(self) -> dict[str, Any]:
        return {
            "temperature": 0,
            "max_tokens": THINKING_MAX_TOKENS if self.spec.is_thinking else CHAT_MAX_TOKENS,
        }

    def prepare_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**self.default_params(), **params}

    def _get_client(self) -> ollama.Client:
        with self._lock:
            if self._client is None:
                self._client = ollama.Client(host=self.host, timeout=self.timeout_s)
            return self._client

    def check(self) -> None:
        try:
            listed = self._get_client().list()
        except (ConnectionError, httpx.HTTPError, ollama.ResponseError) as exc:
            raise ModelUnavailableError(
                f"Ollama is not reachable at {self.host} ({exc}); start it with `ollama serve` "
                "or set OLLAMA_HOST to the machine that runs it"
            ) from exc
        names = {full_name(m.model or "") for m in listed.models}
        if full_name(self.spec.model) not in names:
            raise ModelUnavailableError(
                f"Ollama at {self.host} has no model {self.spec.model!r}; "
                f"run `ollama pull {self.spec.model}` "
                f"(available: {', '.join(sorted(names)) or 'none'})"
            )

    def call(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> RawReply:
        options = {_RENAMED.get(k, k): v for k, v in params.items() if k not in _TOP_LEVEL}
        top = {k: params[k] for k in _TOP_LEVEL if k in params}
        try:
            response = self._get_client().chat(
                model=self.spec.model,
                messages=messages,
                format=json_schema_of(schema) if schema is not None else None,
                options=options,
                stream=False,
                **top,
            )
        except ollama.ResponseError as exc:
            if exc.status_code in RETRY_STATUS:
                raise TransientError(f"HTTP {exc.status_code}: {exc.error}") from exc
            raise
        except (ConnectionError, httpx.TimeoutException, httpx.TransportError) as exc:
            raise TransientError(f"{type(exc).__name__}: {exc}") from exc
        message = response.message
        text, thinking = split_thinking(message.content or "", getattr(message, "thinking", None))
        return RawReply(
            text=text,
            thinking=thinking,
            finish_reason=response.done_reason,
            prompt_tokens=response.prompt_eval_count,
            completion_tokens=response.eval_count,
        )

    def count_tokens(self, texts: list[str]) -> TokenCount:
        return approx_count(texts, "Ollama models have no local tokenizer here")

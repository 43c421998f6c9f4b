"""A deterministic failure is an answer: which failures are cached, and when a cached one is sent again.

The embedded model at temperature 0 with a fixed seed gives the same reply to the same request every time,
so a reply that failed validation (invalid JSON, cut empty by the token limit) fails the same way when
sent again: it is cached as that failure, with its reason, and counted as failed exactly as before.
`retry_failed` sends cached failures again on purpose. A failure of the connection or the server is never
cached, and backends whose replies vary (OpenAI, Ollama) keep retrying every failure unless the user
marks them deterministic.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from .backend import Backend
from .env import flag_from_env
from .types import Completion

log = logging.getLogger("cfa_lib.models")

KEPT_KINDS = frozenset({"invalid_json", "truncated"})  # what the model replied, not what the wire did


def is_deterministic(given: bool | None, backend: Backend, params: dict[str, Any]) -> bool:
    """The argument given, else CFA_DETERMINISTIC, else the backend's own answer for these params."""
    if given is not None:
        return given
    from_env = flag_from_env("CFA_DETERMINISTIC")
    return from_env if from_env is not None else backend.deterministic(params)


def kept(completion: Completion, deterministic: bool) -> bool:
    """Whether the cache stores this completion: every answer; a failure only when sending it again would
    give it back unchanged."""
    return completion.ok or (deterministic and completion.error_kind in KEPT_KINDS)


def warn_failures(model: str, completions: list[Completion]) -> None:
    """One warning per batch: how many failed, of which kind, and what a rerun does with them."""
    failed = Counter(c.error_kind for c in completions if not c.ok)
    if failed:
        kinds = ", ".join(f"{k}={n}" for k, n in sorted(failed.items()))
        log.warning("%s: %d of %d requests failed (%s); a rerun retries them, except the failures of a "
                    "deterministic backend, which are cached: retry_failed=True (--retry-failed, "
                    "CFA_RETRY_FAILED=1) sends those again", model, sum(failed.values()), len(completions), kinds)

"""Requests named by key, replies joined on the same key: an experiment never matches by list position."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

from .errors import RunFailedError
from .types import ChatClient, Completion, Request

Key = TypeVar("Key", bound=Hashable)


def complete_keyed(client: ChatClient, requests: Mapping[Key, Request], **options: Any) -> dict[Key, Completion]:
    """`{key: completion}` for `{key: request}`, e.g. keys `(question_id, "format_b")`.

    `complete_many` answers in input order; this is the one place that relies on it, so callers join on
    the question id and role they chose. `options` go to `complete_many` (max_concurrency, desc, ...).
    """
    keys = list(requests)
    if not keys:
        return {}
    completions = client.complete_many([requests[key] for key in keys], **options)
    failed = [c.error or "" for c in completions if c.error_kind == "failed"]
    if len(failed) == len(completions):  # the server is down or crashed: nothing here is worth grading
        name = getattr(getattr(client, "spec", None), "name", "the model")  # a scripted client may have no spec
        raise RunFailedError(name, options.get("desc") or "a batch of requests", failed)
    return dict(zip(keys, completions, strict=True))

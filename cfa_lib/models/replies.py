"""What one raw reply becomes: a completion (an answer or a typed failure), or one more attempt.

Second chances are given only where they can change the outcome: a larger budget once for an empty reply
cut by the token limit; a second try for invalid JSON, unless the backend is deterministic (the same
request would get the same reply). A structured reply cut short is closed where it stopped and kept
when what it already says fits the schema (the verdict comes before its reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .backend import RawReply
from .bounds import close_cut
from .schema import InvalidJSONError, validate_reply
from .types import Completion, Schema


@dataclass
class Attempt:
    """One request across attempts: its current params and which second chances it has had."""

    params: dict[str, Any]
    retries: int = 0
    budget_retried: bool = False
    json_retried: bool = False
    error: str = ""


def settle(completion: Completion, raw: RawReply, state: Attempt, schema: Schema | None, budget_key: str,
           deterministic: bool) -> Completion | None:
    """`completion` (built from `raw`) validated, or None when one more attempt is due (state.params
    updated)."""
    if not raw.text.strip() and raw.finish_reason == "length":
        if not state.budget_retried:
            state.budget_retried = True
            state.params = {**state.params, budget_key: 2 * int(state.params.get(budget_key) or 1024)}
            return None
        completion.error = f"empty answer cut off by the token limit ({state.params.get(budget_key)})"
        completion.error_kind = "truncated"
    elif schema is not None:
        try:
            completion.parsed = parse(schema, raw)
        except InvalidJSONError as exc:
            if not state.json_retried and not deterministic:
                state.json_retried = True
                return None
            completion.error = str(exc)
            completion.error_kind = "invalid_json"
    return completion


def parse(schema: Schema, raw: RawReply) -> dict[str, Any]:
    """The reply validated; a reply cut by the token limit is closed first and must then fit the schema."""
    try:
        return validate_reply(schema, raw.text)
    except InvalidJSONError as exc:
        closed = close_cut(raw.text) if raw.finish_reason == "length" else None
        if closed is None:
            raise
        try:
            return validate_reply(schema, closed)
        except InvalidJSONError:
            raise exc from None

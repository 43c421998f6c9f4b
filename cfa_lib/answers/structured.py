"""The one reader of structured (JSON schema) model replies: judges, gold models and generators alike; and
answers written as JSON (`json_reply`, `answer_fields`), read as JSON, never as prose.

A failed request or a reply of the wrong shape becomes a reason string that ends up in the row or record.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from cfa_lib.models import Completion


def parse_reply(reply: Completion | BaseModel | None, schema: type[BaseModel], who: str = "generator"
                ) -> tuple[Any, str]:
    """A validated reply, or None and why not (a failed request, invalid JSON, a wrong shape); never raises.

    `who` names the model's role in the reason ("generator", "judge", "gold model").
    """
    if reply is None:
        return None, f"no {who} reply"
    if isinstance(reply, schema):
        return reply, ""
    if isinstance(reply, BaseModel):
        return None, f"reply is a {type(reply).__name__}, expected {schema.__name__}"
    if not reply.ok:
        return None, f"{who} request {reply.error_kind or 'failed'}: {reply.error}"
    try:
        if reply.parsed is not None:
            return schema.model_validate(reply.parsed), ""
        return schema.model_validate_json(reply.text), ""
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        return None, f"{who} reply does not fit {schema.__name__}: {where}: {first['msg']}"


# a reply that is one JSON object, bare or in a ```json fence, with nothing else but blank space around it
_FENCED = re.compile(r"(?s)^\s*(?:```[\w-]*\s*\n?)?(?P<json>\{.*\})\s*(?:```)?\s*$")
# the fields a grader reads first, whatever the question asks
ANSWER_FIELDS = ("final_answer", "answer", "choice", "letter", "option", "selected", "selection", "result")


def json_reply(body: str) -> dict[str, Any] | None:
    """The JSON object an answer consists of (a bare object or one fenced code block), or None: an answer
    that is prose, or prose around a JSON block, is read as prose."""
    found = _FENCED.match(body)
    if found is None:
        return None
    try:
        parsed = json.loads(found.group("json"))
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def answer_fields(reply: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (name, value) pairs of a JSON reply's answer fields (`ANSWER_FIELDS`), at its top level or one
    level down ('{"result": {"answer": ...}}')."""
    found = [(name, value) for name, value in reply.items() if name.lower() in ANSWER_FIELDS
             and not isinstance(value, dict)]
    for value in reply.values():
        if isinstance(value, dict) and not found:
            found = answer_fields(value)
    return found

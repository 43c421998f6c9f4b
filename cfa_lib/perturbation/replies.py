"""The generator's replies in a perturbation: their schemas, and reading them without ever raising.

Every field is required (no defaults), so OpenAI's strict structured-output mode accepts the schemas.
A failed request or a reply of the wrong shape becomes a reason string that ends up in the record.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from cfa_lib.models import Completion


def parse_reply(reply: Completion | BaseModel | None, schema: type[BaseModel]) -> tuple[Any, str]:
    """A validated reply, or None and why not (a failed request, invalid JSON, a wrong shape)."""
    if reply is None:
        return None, "no generator reply"
    if isinstance(reply, schema):
        return reply, ""
    if isinstance(reply, BaseModel):
        return None, f"reply is a {type(reply).__name__}, expected {schema.__name__}"
    if not reply.ok:
        return None, f"generator request {reply.error_kind or 'failed'}: {reply.error}"
    try:
        if reply.parsed is not None:
            return schema.model_validate(reply.parsed), ""
        return schema.model_validate_json(reply.text), ""
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        return None, f"generator reply does not fit {schema.__name__}: {where}: {first['msg']}"

"""The one reader of structured (JSON schema) model replies: judges, gold models and generators alike.

A failed request or a reply of the wrong shape becomes a reason string that ends up in the row or record.
"""

from __future__ import annotations

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

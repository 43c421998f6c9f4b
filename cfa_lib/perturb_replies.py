"""The generator's replies in a perturbation: their schemas, and reading them without ever raising.

Every field is required (no defaults), so OpenAI's strict structured-output mode accepts the schemas.
A failed request or a reply of the wrong shape becomes a reason string that ends up in the record.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from cfa_lib.models import Completion

__all__ = ["ExtractedParameter", "FormulaExtraction", "Kind", "QuestionRewrite", "parse_reply"]

Kind = Literal["rate", "count", "amount", "other"]


class ExtractedParameter(BaseModel):
    name: str
    value: float
    kind: Kind
    span: str = Field(description="the input exactly as written in the question, e.g. '7%' or '$75,000'")
    description: str
    derived_from: str = Field(description="empty, or a formula computing this stated value from the others")


class FormulaExtraction(BaseModel):
    computable: bool
    reason: str = Field(description="why not computable; empty otherwise")
    parameters: list[ExtractedParameter]
    asked_quantity: str
    unit: str
    formula: str


class QuestionRewrite(BaseModel):
    question: str


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

"""Structured output: one schema (pydantic class or JSON-schema dict) turned into each backend's form,
and the model's reply validated against it."""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from .types import Schema


class InvalidJSONError(ValueError):
    """The reply is not JSON matching the schema."""


@functools.lru_cache(maxsize=256)
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def json_schema_of(schema: Schema) -> dict[str, Any]:
    """The JSON schema (read-only: shared between calls, since pydantic takes milliseconds to build it)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return _model_schema(schema)
    if isinstance(schema, dict):
        return schema
    raise TypeError(f"schema must be a pydantic BaseModel class or a JSON-schema dict, got {schema!r}")


def schema_name(schema: Schema) -> str:
    raw = schema.__name__ if isinstance(schema, type) else str(schema.get("title", "response"))
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:64] or "response"


def json_objects(tree: Any) -> Iterator[dict[str, Any]]:
    """Every dict of a JSON tree, outermost first: the nodes a schema rewrite visits."""
    if isinstance(tree, dict):
        yield tree
        children = tree.values()
    elif isinstance(tree, list):
        children = tree
    else:
        return
    for child in list(children):
        yield from json_objects(child)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """A copy OpenAI's strict mode accepts (closed objects, all properties required), or None."""
    result = copy.deepcopy(schema)
    ok = True
    for node in json_objects(result):
        if node.get("type") == "object" and "properties" in node:
            if set(node.get("required", [])) != set(node["properties"]):
                ok = False
            if node.get("additionalProperties") not in (None, False):
                ok = False
            node["additionalProperties"] = False
    return result if ok else None


def _strip_fences(text: str) -> str:
    fenced = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.DOTALL)
    return fenced.group(1) if fenced else text


def validate_reply(schema: Schema, text: str) -> dict[str, Any]:
    """Parse and validate; raise InvalidJSONError with the reason."""
    try:
        data = json.loads(_strip_fences(text), strict=False)  # llama.cpp grammars allow raw newlines
    except json.JSONDecodeError as exc:
        raise InvalidJSONError(f"reply is not JSON ({exc}): {text[:200]!r}") from exc
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            return schema.model_validate(data).model_dump(mode="json")
        except ValidationError as exc:
            raise InvalidJSONError(f"reply does not match {schema.__name__}: {exc}") from exc
    import jsonschema

    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        raise InvalidJSONError(f"reply does not match the schema: {exc.message}") from exc
    if not isinstance(data, dict):
        raise InvalidJSONError(f"reply is JSON but not an object: {text[:200]!r}")
    return data

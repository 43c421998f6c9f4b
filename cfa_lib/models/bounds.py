"""Structured replies that cannot run away, and replies cut short that still carry their verdict.

Under a JSON grammar a small model often never closes a string: it writes to the token limit (about 29 s
a reply for the embedded model) and the cut reply is no JSON. So the in-process backend decodes with a
copy of the schema in which every string and list is bounded, under a token budget sized to that bound;
its fields keep the schema's order (a verdict before its reason), and `close_cut` closes a reply the
budget still cut, so the verdict it already wrote is read.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from cfa_lib.models.schema import json_objects

STRING_CHARS = 300  # a string without its own maxLength: a reason, an explanation, a concept (two sentences)
ARRAY_ITEMS = 16  # a list without its own maxItems
CHARS_PER_TOKEN = 2  # English runs near 4 characters a token; 2 leaves room, and a cut reply is closed
NUMBER_CHARS = 40  # llama.cpp's number rule: up to 16 integral and 16 decimal digits, sign and exponent


def bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy in which every free string has maxLength STRING_CHARS and every list maxItems ARRAY_ITEMS
    (bounds the schema declares are kept; enums, constants and patterns are bounded already)."""
    result = copy.deepcopy(schema)
    for node in json_objects(result):
        if node.get("type") == "string" and not {"enum", "const", "pattern", "format"} & node.keys():
            node.setdefault("maxLength", STRING_CHARS)
        if node.get("type") == "array":
            node.setdefault("maxItems", ARRAY_ITEMS)
    return result


def reply_tokens(schema: dict[str, Any]) -> int | None:
    """The token budget of a reply under a bounded schema: its longest form in characters over
    CHARS_PER_TOKEN; None when some part has no bound (the request's own budget then applies)."""
    chars = _longest(schema, schema, 0)
    return None if chars is None else math.ceil(chars / CHARS_PER_TOKEN)


def _longest(node: Any, root: dict[str, Any], depth: int) -> int | None:
    """Characters of the longest JSON text `node` admits (one space after each separator, as the grammar)."""
    if not isinstance(node, dict) or depth > 32:
        return None
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return _longest(root.get("$defs", {}).get(name), root, depth + 1)
    if "const" in node or "enum" in node:
        return max(len(json.dumps(v)) for v in node.get("enum", [node.get("const")]))
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        sizes = [_longest(option, root, depth + 1) for option in options]
        return None if None in sizes else max(sizes)  # type: ignore[type-var]
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties") or {}
        sizes = [_longest(value, root, depth + 1) for value in props.values()]
        if None in sizes or node.get("additionalProperties") not in (None, False):
            return None
        return 2 + sum(len(json.dumps(name)) + 2 + size + 2  # type: ignore[operator]
                       for name, size in zip(props, sizes, strict=True))
    if kind == "array":
        item = _longest(node.get("items"), root, depth + 1)
        return None if item is None or "maxItems" not in node else 2 + node["maxItems"] * (item + 2)
    if kind == "string":
        return node["maxLength"] + 2 if "maxLength" in node else None
    sizes_of = {"boolean": 5, "null": 4, "integer": NUMBER_CHARS, "number": NUMBER_CHARS}
    return sizes_of.get(kind) if isinstance(kind, str) else None  # a list of types: left unbounded


_PARTIAL_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{0,3}$")


def close_cut(text: str) -> str | None:
    """A JSON reply cut by the token limit, closed where it stopped: an open string ended, the open objects
    and lists closed; a member cut before its value is dropped. None when there is nothing to close."""
    closers: list[str] = []
    members: list[tuple[int, list[str]]] = []  # where each member ends (a comma) and what is open there
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not closers or closers.pop() != ch:
                return None
        elif ch == ",":
            members.append((i, list(closers)))
    if not closers:
        return None
    body = text[:-1] if escaped else _PARTIAL_ESCAPE.sub("", text) if in_string else text.rstrip()
    candidates = [body + ('"' if in_string else "") + "".join(reversed(closers))]
    candidates += [text[:i] + "".join(reversed(open_)) for i, open_ in reversed(members)]
    for candidate in candidates:
        try:
            json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            continue
        return candidate
    return None

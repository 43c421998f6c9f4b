"""The one reader of structured (JSON schema) model replies: judges, gold models and generators alike; and
answers written as JSON (`json_reply`, `answer_fields`), read as JSON, never as prose.

A failed request or a reply of the wrong shape becomes a reason string that ends up in the row or record.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any
from xml.etree import ElementTree

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


# one JSON object, bare or in a code fence, or one fenced YAML mapping ('net_revenue: 900000' lines)
_FENCED_JSON = re.compile(r"(?s)(?:```[\w-]*[ \t]*\n)?(?P<json>\{.*\})\s*(?:```)?")
_FENCED_BLOCK = re.compile(r"(?s)```[\w-]*[ \t]*\n(?P<block>.*?)\n?[ \t]*```")
_YAML_LINE = re.compile(r"(?P<name>[A-Za-z_][\w.()-]*)[ \t]*:[ \t]*(?P<value>[^#\n]*?)[ \t]*(?:#.*)?")
# the fields a grader reads first, whatever the question asks
ANSWER_FIELDS = ("final_answer", "answer", "choice", "letter", "option", "selected", "selection", "result", "final",
                 # the same in the other languages replies come in: '{"respuesta": "A", ...}'
                 "respuesta", "réponse", "reponse", "resposta", "antwort", "risposta", "答案", "回答", "答え", "ответ",
                 "respuesta_final", "resposta_final", "réponse_finale", "reponse_finale", "risposta_finale",
                 "endgültige_antwort", "endgueltige_antwort", "最终答案", "最終答案", "最終回答", "정답",
                 "итоговый_ответ")


def json_reply(body: str, stem: str = "") -> dict[str, Any] | None:
    """The fields of an answer written as data, or None: a JSON object (bare or fenced) or a fenced YAML mapping,
    alone or with prose around it that states no value (no number but a year or one of the question's: 'Net
    revenue reported for 2009 is the net_revenue line.', 'Inputs: 376, 5, 3%'; the prose of an MCQ reply is
    checked for letters by `choice`). An answer whose prose states values is read as prose: the data block may be
    a worked example, not the answer."""
    found = data_block(body)
    return None if found is None or _states_value(found[1], stem) else found[0]


def data_block(body: str) -> tuple[dict[str, Any], str] | None:
    """The one data block of a body (JSON object, fenced YAML mapping, or a whole reply written as XML) and the
    prose around it."""
    whole = _FENCED_JSON.fullmatch(re.sub(r"^(?i:(?:final\s+)?answer)\s*[:：]\s*", "", body.strip()))  # 'Answer: {...}'
    if whole is not None:
        parsed = _json_object(whole.group("json"))
        return None if parsed is None else (parsed, "")
    if (document := _xml_document(body)) is not None:  # '<response><choice>A</choice>...</response>'
        return document, ""
    blocks = list(_FENCED_BLOCK.finditer(body))
    if not blocks and (mapping := _yaml_mapping(body, minimum=3) or _ini_mapping(body)) is not None:
        return mapping, ""  # 'required_return: 10.10%' lines; '[answer]' then 'cash_collected = 32'
    if not blocks:  # '## Solution\n\n{"pv": 1721.97, ...}': one unfenced object standing on its own lines
        return _embedded_block(body)
    if len(blocks) != 1:
        return None
    block = blocks[0]
    content = block.group("block").strip()
    parsed = _json_object(content) if content.startswith("{") else _yaml_mapping(content) or _ini_mapping(content)
    return None if parsed is None else (parsed, body[: block.start()] + "\n" + body[block.end() :])


def closing_answer(body: str) -> str | None:
    """The answer field's value of a JSON or YAML block that closes a reply of prose ('... I'll revise to that.'
    then '```json {"final_answer": "9.40%"} ```'): the answer line in another form. None when anything with a
    digit follows the block, or its answer fields disagree."""
    blocks = list(_FENCED_BLOCK.finditer(body))
    if not blocks or re.search(r"\d", body[blocks[-1].end() :]):
        return None
    content = blocks[-1].group("block").strip()
    parsed = _json_object(content) if content.startswith("{") else _yaml_mapping(content)
    values = {str(value) for _, value in answer_fields(parsed or {}) if isinstance(value, str | int | float)}
    return values.pop() if len(values) == 1 else None


_LINE_OPENING_OBJECT = re.compile(r"(?m)^[ \t]*(?:(?i:(?:final\s+)?answer)\s*[:：]\s*)?(?=\{)")
_LINE_OPENING_ELEMENT = re.compile(r"(?m)^[ \t]*<(?P<root>[A-Za-z_][\w-]*)>")


def _embedded_block(body: str) -> tuple[dict[str, Any], str] | None:
    """The one JSON object, or XML element, that opens a line and closes at the end of one, with the prose around
    it; two such blocks, or one that does not parse, are none."""
    found = []
    decoder = json.JSONDecoder()
    for start in _LINE_OPENING_OBJECT.finditer(body):
        try:
            parsed, end = decoder.raw_decode(body, start.end())
        except ValueError:
            continue
        if isinstance(parsed, dict) and re.match(r"[ \t]*(?:\n|\Z)", body[end:]):
            found.append((parsed, start.end(), end))
    for start in _LINE_OPENING_ELEMENT.finditer(body):
        if any(begin <= start.start() < end for _, begin, end in found):  # an element inside one found
            continue
        close = re.compile(rf"</{re.escape(start.group('root'))}>[ \t]*(?:\n|\Z)").search(body, start.end())
        if close is not None and (document := _xml_document(body[start.start() : close.end()])) is not None:
            found.append((document, start.start(), close.end()))
    found.sort(key=lambda block: block[1])
    # sibling elements, '<analysis>…</analysis>\n<answer>A</answer>', are one reply
    if len(found) > 1 and (document := _xml_document(body[found[0][1] : found[-1][2]])) is not None:
        found = [(document, found[0][1], found[-1][2])]
    if len(found) != 1:
        return None
    parsed, start, end = found[0]
    return parsed, body[:start] + "\n" + body[end:]


_XML_WHOLE = re.compile(r"(?s)(?:```[\w-]*[ \t]*\n)?\s*(?P<xml><[A-Za-z_].*>)\s*(?:```)?")


_HTML_TAGS = frozenset("html body table thead tbody tr td th div p ul ol li span pre code".split())


def _xml_document(body: str) -> dict[str, Any] | None:
    """A reply written as XML, as fields: one element's children ('<response><choice>A</choice>...</response>' is
    {'choice': 'A', ...}), sibling elements ('<analysis>...</analysis><answer>C</answer>' is {'analysis': ...,
    'answer': 'C'}), attributes as fields ('<final choice="B"/>' is {'final': {'choice': 'B'}}, the text of an
    element with attributes its 'value'); anything that does not parse, prose between elements, and HTML (a
    table, a list: laid out text) are none."""
    whole = _XML_WHOLE.fullmatch(body.strip())
    if whole is None:
        return None
    try:
        reply = ElementTree.fromstring(f"<reply>{whole.group('xml')}</reply>")
    except ElementTree.ParseError:
        return None
    if any(element.tag.lower() in _HTML_TAGS for element in reply.iter()) or (reply.text or "").strip() or any(
            (element.tail or "").strip() for element in reply.iter()):
        return None  # HTML, or prose between the elements

    def fields(element: ElementTree.Element) -> Any:
        children, text = list(element), (element.text or "").strip()
        if not children and not element.attrib:
            return text
        if not children and text:  # '<final_answer currency="$">50963.98</final_answer>'
            return {**element.attrib, "value": text}
        return {**element.attrib, **{child.tag: fields(child) for child in children}}

    only = list(reply)
    return fields(only[0]) if len(only) == 1 and len(only[0]) else fields(reply)


def _json_object(text: str) -> dict[str, Any] | None:
    """A JSON object, or the same written as a Python dict ("{'price_per_100': 97.28, 'coupon': 4.0}")."""
    try:
        parsed = json.loads(text)
    except ValueError:
        if re.search(r"\\(?![xuU'\"\\nt])", text):  # a backslash no Python string escape starts ('\×')
            return None
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    return parsed if isinstance(parsed, dict) else None


def _yaml_mapping(text: str, minimum: int = 2) -> dict[str, Any] | None:
    """A YAML mapping of `minimum` or more 'name: value' lines (values kept as text, numbers as numbers), a name
    with nothing after it holding the more indented lines below it ('result:\n  value: 14.0\n  unit: "%"'); a
    whole reply written so without a fence needs three."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    matches = [_YAML_LINE.fullmatch(line.strip()) for line in lines]
    if len(matches) < minimum or not all(matches):
        return None
    mapping: dict[str, Any] = {}
    parent, indent = None, 0
    for line, m in zip(lines, matches, strict=True):
        depth = len(line) - len(line.lstrip())
        if parent is not None and depth > indent:
            mapping[parent] = {**(mapping[parent] or {}), m.group("name"): _scalar(m.group("value"))}
            continue
        parent, indent = (m.group("name"), depth) if not m.group("value") else (None, 0)
        mapping[m.group("name")] = _scalar(m.group("value")) if m.group("value") else None
    return mapping


_INI_SECTION = re.compile(r"\[(?P<section>[A-Za-z_][\w.-]*)\]")
_INI_LINE = re.compile(r"(?P<name>[A-Za-z_][\w.-]*)[ \t]*=[ \t]*(?P<value>[^;#\n]*?)[ \t]*(?:[;#].*)?")


def _ini_mapping(text: str) -> dict[str, Any] | None:
    """An INI or TOML reply ('[answer]' then 'cash_collected = 32'): its sections as fields holding their
    'name = value' lines. It needs a section and two such lines, and nothing else but comments."""
    mapping: dict[str, Any] = {}
    section: dict[str, Any] = mapping
    pairs = 0
    for line in (line.strip() for line in text.splitlines()):
        if not line or line.startswith((";", "#")):
            continue
        if header := _INI_SECTION.fullmatch(line):
            section = mapping.setdefault(header.group("section"), {})
            continue
        pair = _INI_LINE.fullmatch(line)
        if pair is None:
            return None
        section[pair.group("name")] = _scalar(pair.group("value"))
        pairs += 1
    has_section = any(isinstance(value, dict) for value in mapping.values())
    return mapping if has_section and pairs >= 2 else None


def _scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text.strip("'\"")


_NUMBER_TOKEN = r"\d+(?:[.,]\d+)*"


def _states_value(prose: str, stem: str = "") -> bool:
    """Prose that writes a number other than a year (1900-2100), a time index ('at t = 4') or one written in the
    question."""
    prose = re.sub(r"\b[tT]\s*=\s*\d+\b", " ", prose)
    asked = set(re.findall(_NUMBER_TOKEN, stem))
    return any(not (n.isdigit() and 1900 <= int(n) <= 2100) and n not in asked
               for n in re.findall(_NUMBER_TOKEN, prose))


_VALUE_FIELDS = ("value", "amount", "number")  # '{"answer": {"value": 3.70, "unit": "USD per share"}}'


def _answer_value(value: Any) -> Any:
    """An answer field's value; an object holding one value field, or one field alone beside its unit
    ('[result]' then 'final_value = 22950.46'), gives that value, with its unit if it names one."""
    if not isinstance(value, dict):
        return value
    held = [value[name] for name in value if name.lower() in _VALUE_FIELDS and not isinstance(value[name], dict | list)]
    unit = value.get("unit") or value.get("currency")
    others = [item for name, item in value.items() if name.lower() not in ("unit", "units", "currency")]
    if not held and len(others) == 1 and isinstance(others[0], int | float | str):
        held = others
    if len(held) != 1:
        return value
    return f"{held[0]} {unit}" if isinstance(unit, str) and isinstance(held[0], int | float) else held[0]


def answer_fields(reply: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (name, value) pairs of a JSON reply's answer fields (`ANSWER_FIELDS`), at its top level or one
    level down ('{"result": {"answer": ...}}'); an answer field holding a value field gives that value, one naming
    another field gives that field ('{"pv_ordinary": 10038.26, "pv_due": 10540.17, "answer": "pv_due"}')."""
    found = []
    for name, value in reply.items():
        if name.lower() not in ANSWER_FIELDS:
            continue
        if isinstance(value, str) and value in reply and value != name:
            name, value = value, reply[value]
        if not isinstance(held := _answer_value(value), dict):
            found.append((name, held))
    if not found and not isinstance(held := _answer_value(reply), dict):  # '{"value": 68.0, "unit": "¥ millions"}'
        found = [("value", held)]
    for value in reply.values():
        if isinstance(value, dict) and not found:
            found = answer_fields(value)
    return found


# the fields a multiple-choice reply names its letter in ('{"final": "C"}', 'selected_option: B'); lists
# ('"alternatives_considered": ["A", "C"]', 'rejected: [A, C]') and scores hold no answer
LETTER_FIELDS = (*ANSWER_FIELDS, "selected_option", "chosen", "chosen_option", "correct_option", "pick",
                 "final_choice", "best_option")


def leaves_answer_empty(reply: dict[str, Any]) -> bool:
    """The reply's answer fields are all null and no other field states a number ('{"final_answer": null, "reason":
    "insufficient information"}', '{"answer": null, "note": "need more data"}'): it declines to answer."""
    fields = answer_fields(reply)
    def states_number(value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) or (
            isinstance(value, str) and bool(re.search(r"\d", value)))
    return bool(fields) and all(value is None for _, value in fields) and not any(map(states_number, reply.values()))


def letter_fields(reply: dict[str, Any]) -> list[str]:
    """The text values of a reply's letter fields (`LETTER_FIELDS`), at any depth
    ('{"final_answer": {"letter": "B", "value": "5.00%"}}')."""
    found = []
    for name, value in reply.items():
        if isinstance(value, dict):
            found += letter_fields(value)
        elif isinstance(value, str) and name.lower() in LETTER_FIELDS:
            found.append(value)
    return found


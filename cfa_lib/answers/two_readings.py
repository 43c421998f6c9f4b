"""A committed number read two ways: why the judge reads it, or '' when one reading is all the text allows.

A number's format or unit can leave two readings open: '1,234' in a text that writes decimal commas, '113.733'
with nothing to settle the dot, '0.30' against percent options. Where the readings lead to different verdicts,
`grade_open_answer` defers to the judge with the reason given here; where they agree, the verdict stands.
"""

from __future__ import annotations

import re

from cfa_lib.answers.final_number import Reading
from cfa_lib.answers.key import NumericKey, grade_number
from cfa_lib.answers.locales import (
    AMBIGUOUS_DOT_GROUP,
    AMBIGUOUS_GROUP,
    AMBIGUOUS_POINT,
    CJK_NUMERALS,
    dots_group_thousands,
    writes_decimal_comma,
    writes_decimal_point,
)
from cfa_lib.answers.numbers import CURRENCY_UNITS, PERCENT, Number


def two_readings(value: Number, key: NumericKey, tolerance: float) -> str:
    """Why a bare number against percent options (or a percent against bare ones) is two answers, or '': read as
    a fraction and as percentage points it falls on two different options ('0.30' is 30 % or 0.30 %, against
    options 0 %, 30 %, 70 %); `aligned_values` alone would take the reading nearer the key."""
    if value.unit not in (None, PERCENT) or (value.unit == PERCENT) == (key.gold.unit == PERCENT):
        return ""
    readings = (Number(value.value, PERCENT), Number(value.value * 100, PERCENT)) if value.unit is None else \
        (Number(value.value / 100), Number(value.value))
    options = {"key": key.gold} | {letter: number for letter, number in key.distractors.items() if number is not None}
    falls_on = [{name for name, number in options.items() if grade_number(
        reading, number, [other for other in options.values() if other is not number], rel_tol=tolerance,
        step=key.step if name == "key" else None).match} for reading in readings]
    if all(falls_on) and falls_on[0] != falls_on[1]:
        return f"{value} read as percentage points and as a fraction falls on two different options"
    return ""


def ambiguous_format(reading: Reading, text: str) -> str:
    """Why the committed number can be read two ways, or '': '1,234' in a text that writes decimal commas or groups
    thousands with dots (1.234 or 1234), '900.000' in a text that writes no other decimal point (900 or 900,000), a
    decimal comma left unread ('1,5' next to '0.65'), a number inside a CJK numeral not read in full ('1億6千万'), a
    digit before a space and three digits in a text that groups no other number by spaces ('about 1 475 contracts')."""
    if writes_decimal_comma(text) and AMBIGUOUS_GROUP.search(reading.token):
        return f"'{reading.token.strip()}' in a text written with decimal commas is a decimal or a thousands group"
    if dots_group_thousands(text) and AMBIGUOUS_GROUP.search(reading.token):  # '600.000 − 535.402', then '64,598'
        return f"'{reading.token.strip()}' in a text that groups thousands with dots is a decimal or a thousands group"
    if writes_decimal_comma(text) and not dots_group_thousands(text) and AMBIGUOUS_DOT_GROUP.search(reading.token):
        return f"'{reading.token.strip()}' in a text written with decimal commas, where no number groups thousands " \
               "with dots, is a thousands group or a decimal point"
    if not writes_decimal_point(text) and AMBIGUOUS_POINT.search(reading.token):
        return f"'{reading.token.strip()}' in a text that writes no other decimal point is a decimal or a thousands " \
               "group"
    after = reading.region[reading.found.end :]
    if re.fullmatch(r"\D*\d", reading.token.strip()) and re.match(r" \d{3}(?![\d,])", after):
        return f"'{reading.token.strip()}' and the three digits after it are one number grouped by a space or two"
    if re.match(r",\d", after):
        return "the committed number has a decimal comma in a text that also writes decimal points"
    if re.match(rf"\s*[{CJK_NUMERALS}]", after) or \
            re.search(rf"[{CJK_NUMERALS}]\s*$", reading.region[: reading.found.start]):
        return "the committed number is part of a CJK numeral the reader does not read in full ('1億6千万')"
    return ""


def lone_group_on_key(reading: Reading, value: Number, text: str, stem: str, key: NumericKey,
                      tolerance: float) -> str:
    """Why the text's only group of three digits is not read as the English reading has it, or '': read the other
    way it falls on the key, read the English way it misses; the English reading would call wrong what the text's
    own convention allows to be right. `value` is the reading in the stem's unit.

    * '70,906': the only comma group (one copied from the question, 'to raise the $112,000', settles nothing;
      another the text writes itself, '28,701 + 235 = 28,936', settles the comma as thousands) is 70.906 with a
      decimal comma;
    * '113.733': a dot group, not a percent, in a text whose every dot is such a group and none settles it (no
      decimal point, no '1.234.567'), is 113,733 with the dot grouping thousands ('Der Endwert beträgt rund 113.733
      USD', 'Resposta: £5.370' after '£6.620 − £1.250'); with the currency after it, as continental texts write it
      ('circa **136.007 $**'), even where other numbers write decimal points."""
    if AMBIGUOUS_GROUP.search(reading.token):
        own = [m for m in re.finditer(r"\d{1,3}(?:,\d{3})+(?!\d)", text) if m.group() not in stem]
        other, why = Number(value.value / 1000, value.unit), "the text's only comma group: read with a decimal comma"
        if len(own) > 1:
            return ""
    else:
        digits = re.search(r"\d[\d.,]*", reading.token)
        if digits is None or not AMBIGUOUS_DOT_GROUP.fullmatch(digits.group()) or reading.number.unit == PERCENT:
            return ""
        after = reading.region[reading.found.start + digits.end() :]
        continental = re.match(r"[\s*_]*(?:[$€£¥]|USD|EUR|GBP|CHF)", after)  # '136.007 $', as French or Italian
        # '€1.208' for €1,208: an amount of money with three decimals is a thousands group as often as a decimal
        money = reading.number.unit in CURRENCY_UNITS
        if not continental and not money and (
                writes_decimal_point(text.replace(digits.group(), " ")) or dots_group_thousands(text)):
            return ""  # another number settles the text's dots; the readers apply it
        other = Number(value.value * 1000, value.unit)
        why = "a dot group with the currency after it, as continental texts write amounts" if continental else \
            "an amount of money with three decimals" if money else "a dot group in a text whose dots nothing settles"
        why += ": read with the dot grouping thousands"
    if key.window(value, tolerance).match or not key.window(other, tolerance).match:
        return ""
    return f"'{reading.token.strip()}' is {why} it is the key"

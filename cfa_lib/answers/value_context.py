"""What a committed number means in its context, before it meets the key: a count of periods in the unit the
question asks ('50.87 years' when months are asked), a price per 100 of par ('$1,072.15 per $1,000 par'), the
scale a response states for its own bare numbers ('All figures in $000s') or that the stem's amounts and the
options use ('65.9' against '£66 million'), and a fall the question itself asks for ('the decline ...')."""

from __future__ import annotations

import re
from dataclasses import replace

from cfa_lib.answers.asked import asked_quantity
from cfa_lib.answers.final_number import Reading
from cfa_lib.answers.locales import SCALE_NOTE, normalise_signs
from cfa_lib.answers.numbers import PERCENT, Number
from cfa_lib.answers.question_unit import SCALE_WORDS, SCALED_TOKEN, stem_unit
from cfa_lib.data import Question

# a count of periods the question asks in one of these, and the units an answer may count in
MONTHS_IN = {"month": 1, "quarter": 3, "year": 12}
_WRITTEN_IN = MONTHS_IN | {"day": 12 / 365, "week": 12 / 52}  # '16,105 days' is 529.5 months


def in_asked_time_unit(reading: Reading, question: Question, value: Number) -> Number:
    """A count of periods in the unit the question asks: '50.87 years' is 610.4 months when months are asked, '16,105
    days' is 529.5 months."""
    asked = asked_quantity(question.stem)
    wanted = asked.head.rstrip("s") if asked is not None and asked.counted else ""
    written = re.match(r"\s*(months?|quarters?|years?|days?|weeks?)\b", reading.region[reading.found.end :],
                       re.IGNORECASE)
    if value.unit is not None or wanted not in MONTHS_IN or written is None:
        return value
    return Number(value.value * _WRITTEN_IN[written.group(1).lower().rstrip("s")] / MONTHS_IN[wanted])


_PER_PAR = r"(?i:\bper\s+[$€£¥]?\s?(?P<n>\d{1,3}(?:,\d{3})*|\d+)\s+(?:of\s+)?(?:par|face|nominal|bond))"


def par_basis(reading: Reading, question: Question, value: Number) -> Number | str:
    """The value on the question's par basis: '$1,072.15 per $1,000 par' is 107.215 per 100 of par; when the
    question states no basis, the reason the judge reads it."""
    stated = re.match(rf"\s*{_PER_PAR}", reading.region[reading.found.end :]) or re.search(
        rf"{_PER_PAR}[^.;\d]*$", reading.region[: reading.found.start])  # 'Per 1,000 of par the price is 589.7'
    if stated is None:
        return value
    asked = re.search(_PER_PAR, question.stem)
    given, wanted = (float(m.group("n").replace(",", "")) if m else None for m in (stated, asked))
    if wanted is None:
        return f"the value is stated per {stated.group('n')} of par and the question names no basis"
    return Number(value.value * wanted / given, value.unit) if given else value


# 'All figures in $000s.', 'amounts are in millions', a table's header cell '($ in thousands)', '$000s', '€ million':
# the response's own scale for the bare numbers it writes
_RESPONSE_SCALE = re.compile(
    rf"(?im)\b(?:all\s+)?(?:figures|amounts|numbers|values)\s+(?:are\s+)?(?:shown\s+|expressed\s+|stated\s+)?in\s+"
    rf"{SCALE_NOTE}"
    r"|^[ \t]*\|(?:[^|\n]*\|)*?(?:[ \t]*|[^|\n(]*\()[ \t]*(?:[$€£¥][ \t]*)?(?:in[ \t]+)?"  # 'Amount ($ 000s)'
    r"(?:thousands?|millions?|billions?|['’]?000s?)[ \t]*\)?[ \t]*\|")


def in_response_scale(reading: Reading, body: str, question: Question) -> Reading:
    """A bare number of a response that states its own scale ('All figures in $000s': 58,000 is $58 million),
    where the question states none."""
    note = _RESPONSE_SCALE.search(body)
    number = reading.number
    if note is None or stem_unit(question.stem) is not None or number.unit == PERCENT or \
            SCALED_TOKEN.search(reading.token):
        return reading
    scale = next((s for word, s in SCALE_WORDS.items() if word in note.group().lower()), 1e3)  # '$000s': 1e3
    return replace(reading, number=Number(number.value * scale, number.unit))


def asks_for_a_fall(stem: str) -> bool:
    """The asked quantity is itself a fall ('The decline in the value of ...', 'the loss on the sale'), so a sign
    word in the answer names it rather than making it negative."""
    asked = asked_quantity(stem)
    return asked is not None and bool(re.fullmatch(
        r"declines?|decreases?|loss(?:es)?|drops?|falls?|reductions?|shortfalls?|impairments?", asked.head))


SCALE_NAMES = {scale: word.removesuffix("s") for word, scale in SCALE_WORDS.items()}  # 1e6: "million"


def options_scale(question: Question, reading: Reading, value: Number) -> float | None:
    """The scale word every option writes ('£66 million.'), when the committed number is bare ('65.9', no scale
    word of its own nor a percent): the scale it may have been written in."""
    if value.unit == PERCENT or SCALED_TOKEN.search(reading.token) or stem_unit(question.stem) is not None or \
            abs(value.value) >= 1000:  # '22,000,000' is written in full
        return None
    for scale, word in SCALE_NAMES.items():
        if all(re.search(rf"(?i)\d\s*{word}s?\b", text) for text in question.choices.values()):
            return scale
    return None


def spelled_currency(reading: Reading) -> bool:
    """The currency is spelled out right after the number ('63 dollars'): the amount as written, whatever scale
    the stem writes its amounts in."""
    return bool(re.search(r"(?i)\d\s*(?:dollars?|euros?|pounds?|yen|francs?)\b", reading.token))


def stem_scaled_by(stem: str, scale: float) -> bool:
    """Every amount of money the stem states carries the scale word ('total liabilities of £24 million'): a bare
    number in the answer is in that scale, as a careful grader reads it."""
    amounts = re.findall(r"[$€£¥]\s?\d[\d,.]*(?:\s*(thousand|million|billion)s?\b)?", normalise_signs(stem))
    return bool(amounts) and all(word.lower() == SCALE_NAMES[scale] for word in amounts)

"""Numbers as answers write them, and comparing them on one scale.

A `Number` is a value with its unit ("%", a currency, or None); scale words are applied ("$1.2 million"
-> 1200000) and basis points become percent (75 bps -> 0.75 %). `aligned_values` is the one rule that
puts two numbers on one scale (8.0 % and 0.08 are the same rate), used by every grader.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from cfa_lib.answers.locales import normalise_signs
from cfa_lib.answers.text import clean

CURRENCY_UNITS = ("$", "€", "£", "¥")
PERCENT = "%"


@dataclass(frozen=True)
class Number:
    """A number as written in an answer: 8.0 for "8.0%", 113733 for "$113,733", unit "%", "$", ... or None.

    Scale words are applied ("$1.2 million" -> 1200000) and basis points become percent (75 bps -> 0.75 %).
    """

    value: float
    unit: str | None = None

    def __str__(self) -> str:
        text = f"{abs(self.value):,.10g}"
        sign = "-" if self.value < 0 else ""
        if self.unit == PERCENT:
            return f"{sign}{text}%"
        return f"{sign}{self.unit or ''}{text}"

    def to_dict(self) -> dict:
        return {"value": self.value, "unit": self.unit}

    def short(self) -> str:
        """Written back the way a reader expects in a table ("8.15%", "$113,733"); `str` keeps every digit."""
        if self.unit == PERCENT:
            return f"{self.value:g}%"
        text = f"{self.value:,.2f}".rstrip("0").rstrip(".")
        return f"{'-' if self.value < 0 else ''}{self.unit or ''}{text.lstrip('-')}"





DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"  # 113,733.21 | 7.5 | .75: every reader's digits
_CORE = re.compile(rf"(?<![\d.,])(?:{DIGITS})(?![\d])")
_SCALES = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6, "mio": 1e6,
    "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12,
    "lakh": 1e5, "lakhs": 1e5, "crore": 1e7, "crores": 1e7,  # South Asian grouping words
}  # fmt: skip
_CODES = {"usd": "$", "us$": "$", "eur": "€", "gbp": "£", "jpy": "¥"}
_WORD_CURRENCIES = {
    "dollars": "$",
    "euros": "€",
    "pounds": "£",
    "yen": "¥",
}  # plural: "199 Euro index futures"
_LABEL_WORDS = (
    "step|item|statement|portfolio|fund|allocation|market|action|suggestion|exhibit|section|chapter|table|"
    "figure|fig|panel|question|case|level|tier|phase|stage|type|class|rule|ias|ifrs|asc|sfas|ifric|no|number|"
    "part|scenario|strategy|model|method|country|company|bond|option|choice|alternative|proposal|plan|"
    "project|version|appendix|line|row|column|page|note|equation|formula|criterion|condition|standard|"
    "principle|component|year|quarter|month|day|week|article|paragraph|reg|regulation|act|"
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_LABEL_BEFORE = re.compile(rf"(?i)(?:\b(?:{_LABEL_WORDS})\.?\s*#?|#)\s*$")


@dataclass(frozen=True)
class Found:
    number: Number
    start: int  # first character of the whole token (sign, currency, parenthesis)
    end: int  # one past the last character (unit, scale word, closing parenthesis)


_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUES = {**{w: i for i, w in enumerate(_UNITS)}, **{w: 10 * (i + 2) for i, w in enumerate(_TENS)}}
_MULTIPLIERS = {"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_NUMBER_WORD = rf"(?:{'|'.join(sorted(_WORD_VALUES, key=len, reverse=True))}|hundred|thousand|million|billion)"
_WORD_NUMBER = re.compile(
    rf"(?i)\b{_NUMBER_WORD}(?:(?:[\s-]+|\s+and\s+){_NUMBER_WORD})*(?P<half>\s+and\s+a\s+half)?\b"
)
# a number in words is read as a value when it carries a unit or a scale ("one million dollars", "about eleven
# percent", "nineteen million", "six euros"), or when it is the whole of an answer line ("Answer: twelve")
_WORD_UNIT_AFTER = re.compile(
    r"(?i)\s*(?:%|percent\b|per\s+cent\b|percentage\s+points?\b|basis\s+points?\b|bps\b|dollars\b|euros\b|"
    r"pounds\b|yen\b|(?:US)?\$|€|£|¥)"
)
_ANSWER_BEFORE = re.compile(r"(?i)\banswer\s*(?:is|[:=：-])\s*(?:about|approximately|roughly|around|~|≈)?\s*$")
# "the correlation is zero.", "ρ = zero": a number word standing alone as the value equated to a quantity
_EQUATED_BEFORE = re.compile(
    r"(?i)(?:\b(?:is|are|was|were|be|equals?|equal\s+to|of)|[=≈])\s+(?:exactly\s+|about\s+|approximately\s+|"
    r"roughly\s+|around\s+)?$"
)
_VALUE_END = re.compile(r"\s*(?:[.,;:)!]|$)")
_COMPOUND = re.compile(r"(?i)(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(?:one|two|three|four|five|six|"
                       r"seven|eight|nine)")


def _word_value(words: str) -> float | None:
    total, current = 0.0, 0.0
    for word in re.findall(r"[a-z]+", words.lower()):
        if word == "and":
            continue
        if word in _WORD_VALUES:
            current += _WORD_VALUES[word]
        elif word == "hundred":
            current = (current or 1) * 100
        else:
            total += (current or 1) * _MULTIPLIERS[word]
            current = 0.0
    return total + current


def spell_numbers(text: str) -> str:
    """Numbers written in words as digits where they state a value: 'one million dollars' → '1000000 dollars',
    'about eleven percent' → 'about 11 percent', 'ten and a half percent' → '10.5 percent', 'Answer: twelve'
    → 'Answer: 12', 'the correlation is zero.' → 'the correlation is 0.'; counting words in prose ('one of the
    two values') are left alone."""

    def spelled(match: re.Match[str]) -> str:
        phrase = match.group()
        scaled = re.search(r"(?i)\b(?:thousand|million|billion)\b", phrase) and re.match(
            rf"(?i){_NUMBER_WORD}", phrase) and not re.match(r"(?i)(?:thousand|million|billion)\b", phrase)
        equated = _EQUATED_BEFORE.search(text[: match.start()])
        # 'which is twenty-one unique covariance terms': a tens-and-units compound is a count, never a pronoun
        alone = equated and (_VALUE_END.match(text, match.end()) or _COMPOUND.fullmatch(phrase))
        if not (scaled or alone or _WORD_UNIT_AFTER.match(text, match.end())
                or _ANSWER_BEFORE.search(text[: match.start()])):
            return phrase
        if re.fullmatch(r"(?i)(?:hundred|thousand|million|billion)(?:\s+and\s+a\s+half)?", phrase):
            return phrase
        value = _word_value(phrase[: match.start("half") - match.start()] if match.group("half") else phrase)
        value += 0.5 if match.group("half") else 0
        return f"{value:.10g}" if value < 1e21 else phrase

    return _WORD_NUMBER.sub(spelled, text)


_RATIO = re.compile(
    r"(?<![\w.,/$€£¥-])(?<!\bfrom\s)(?<!\bbetween\s)(?P<a>\d+(?:\.\d+)?)\s*(?::|\bto\b)\s*(?P<b>\d+(?:\.\d+)?)"
    r"(?![\d.,]*\d|\s*(?:%|[A-Za-z]*\d|(?i:percent|per\s+cent|bps|basis|years?|yrs?|months?|days?|weeks?|quarters?|"
    r"periods?|times|thousand|million|billion|mn|bn|[km]|am|pm|h)\b))"
)


_SYMMETRIC = re.compile(
    r"(?<![\w.])(?P<s1>[+-])\s?(?P<v>[$€£¥]?\d[\d,]*(?:\.\d+)?\s?%?)\s*(?:,\s*)?(?:or|/|and|and/or)\s*"
    r"(?P<s2>[+-])\s?(?P=v)(?![\d.,]*\d)"
)


def symmetric_values(text: str) -> str:
    """'+3.71% or -3.71%' written as '±3.71%': one magnitude in both directions, not two values."""
    return _SYMMETRIC.sub(lambda m: f"±{m.group('v')}" if m.group("s1") != m.group("s2") else m.group(), text)


def ratios_as_fractions(text: str) -> str:
    """'1 to 5' and '1 : 5' written as '1/5' (one value), for a question whose options are ratios ('1 to 5.');
    a range ('from 1 to 5') and numbers with a unit are left alone."""
    return _RATIO.sub(lambda m: f"{m.group('a')}/{m.group('b')}", text)


def scan_numbers(text: str) -> list[Found]:
    """Every number with its sign, currency, percent/scale and accounting parentheses; labels skipped."""
    found: list[Found] = []
    for core in _CORE.finditer(text):
        start, end = core.span()
        left = text[:start]
        # letters glued to the digits: identifiers such as t1, X1, FY2020, 20X1, 3rd (but USD500, 5bn, 1.8x)
        glued_left = re.search(r"([A-Za-z$]+)$", left)
        if glued_left and glued_left.group(1).lower() not in _CODES and set(glued_left.group(1)) != {"$"}:
            continue
        if _LABEL_BEFORE.search(left):
            continue
        value = float(core.group().replace(",", ""))
        unit: str | None = None
        right = text[end:]
        suffix = re.match(
            r"(?i)[ \t]*(?P<pct>%|percent\b|per\s?cent\b|pct\b|percentage\s+points?\b)"
            r"|[ \t]*(?P<bps>bps\b|bp\b|basis\s+points?\b)"
            r"|[ \t]*(?P<word>thousand|million|billion|trillion|mn|bn|tn|mio|lakhs?|crores?)\b"
            r"|(?P<short>k|m|mm|b)(?![A-Za-z])",
            right,
        )
        if suffix and suffix.group("pct"):
            unit = PERCENT
        elif suffix and suffix.group("bps"):
            value, unit = value / 100, PERCENT
        elif suffix:
            value *= _SCALES[(suffix.group("word") or suffix.group("short")).lower()]
        token_end = end + (suffix.end() if suffix else 0)
        if not suffix and re.match(r"[A-Za-z]", right) and not re.match(r"[xX](?![A-Za-z0-9])", right):
            continue  # 20X1, 3rd, 10th, 5y
        trailing = re.match(
            r"(?i)\s?(?:(?P<code>usd|eur|gbp|jpy)\b|(?P<word>dollars|euros|pounds|yen)\b)", text[token_end:]
        )
        if trailing and unit != PERCENT:
            unit = (
                _CODES.get((trailing.group("code") or "").lower()) or _WORD_CURRENCIES[trailing.group("word").lower()]
            )
            token_end += trailing.end()
        token_start = start
        currency = re.search(r"(?i)(US\$|\$|€|£|¥|\b(?:usd|eur|gbp|jpy)\s?)\s?$", left)
        if currency:
            unit = unit if unit == PERCENT else _CODES.get(currency.group(1).strip().lower(), currency.group(1).strip())
            token_start = currency.start()
        sign = re.search(r"(?:^|(?<=[\s(=:≈~\[{,;\"'“‘]))([-+])$", text[:token_start])  # '"-42.97 %"' too
        if sign:
            token_start = sign.start(1)
            value = -value if sign.group(1) == "-" else value
        if token_start == start:  # currency written after the sign: $-4,500
            inner_sign = re.search(r"(US\$|\$|€|£|¥)\s?-$", left)
            if inner_sign:
                unit = unit if unit == PERCENT else inner_sign.group(1)[-1]
                token_start, value = inner_sign.start(), -value
        accounting = re.search(r"[$€£¥]?\(\s*[$€£¥]?\s*$", text[:token_start]) if value > 0 else None
        closing = re.match(r"\s*\)(?!\s*[\^*/×÷])(?:[ \t]*%)?", text[token_end:])
        if accounting and closing:
            has_marks = unit in CURRENCY_UNITS or "," in core.group() or "." in core.group() or value >= 10
            if has_marks and not _glued_to_function(text, accounting.start()):
                lead = re.match(r"[$€£¥]", text[accounting.start() :])
                unit = unit or (lead.group() if lead else None)
                if closing.group().endswith("%"):  # (12.0)%
                    unit = PERCENT
                value = -value
                token_start = accounting.start()
                token_end += closing.end()
                scale = re.match(r"(?i)[ \t]*(thousand|million|billion|mn|bn)\b", text[token_end:])
                if scale and unit != PERCENT:  # $(0.41) million
                    value *= _SCALES[scale.group(1).lower()]
                    token_end += scale.end()
        found.append(Found(Number(value, unit), token_start, token_end))
    return found


def scan_values(text: str) -> list[Found]:
    """`scan_numbers`, with a fraction read as one value ('= 3/20' is 0.15, '3 / 4' is 0.75) when neither side
    is part of a longer expression, and a ratio after 'ratio' or 'odds' ('2.5 : 1', '1 to 4') or to one
    ('1.82 : 1') likewise."""
    found = scan_numbers(text)
    values: list[Found] = []
    i = 0
    while i < len(found):
        a, b = found[i], found[i + 1] if i + 1 < len(found) else None
        if b is not None and b.number.value != 0 and a.number.unit is None and b.number.unit is None:
            between = text[a.end : b.start]
            ratio = re.fullmatch(r"\s*(?::|to)\s*", between) and (
                re.search(r"(?i)\b(?:ratio|odds)\b", text[: a.start]) or (":" in between and b.number.value == 1))
            alone = not re.search(r"[×*/÷+^(-]\s*$", text[: a.start]) and not re.match(r"\s*[×*/÷+^(]", text[b.end :])
            if (re.fullmatch(r"\s*(?:/|out\s+of)\s*", between) or ratio) and alone:  # "3/20", "3 out of 20"
                values.append(Found(Number(a.number.value / b.number.value), a.start, b.end))
                i += 2
                continue
        values.append(a)
        i += 1
    return values


def first_value(text: str) -> Number | None:
    """The first value a text writes ('$1.19 million' → $1,190,000), or None: how a rounding step is read."""
    found = scan_values(text)
    return found[0].number if found else None


def _glued_to_function(text: str, paren_at: int) -> bool:
    """'(1.08)^6' or 'f(2)': parentheses of a formula, not an accounting negative."""
    return bool(re.search(r"[\w)\]^/*×÷+-]\s*$", text[:paren_at]))


def numbers_in(text: str | None) -> tuple[str, list[Found]]:
    """A short text (an option) cleaned as every reader cleans it, and every number found in it."""
    cleaned = normalise_signs(clean(text))
    return cleaned, scan_numbers(cleaned)


def extract_numbers_in(text: str | None) -> list[Number]:
    """All numbers written in a short text such as an option ('€1,000 and €2,000' -> two numbers)."""
    return [found.number for found in numbers_in(text)[1]]






REL_TOL_SLACK = 1e-12  # 0.00102 vs 0.001 is exactly 2 %, not 2.0000000000000018 %


def _as_number(x: Number | float | int) -> Number:
    if isinstance(x, Number):
        return x
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError(f"expected a Number or a float, got {x!r}")
    return Number(float(x), None)


def _canonical(x: Number) -> float:
    return x.value / 100 if x.unit == PERCENT else x.value


def aligned_values(x: Number | float, reference: Number | float) -> tuple[float, float]:
    """(x, reference) on one scale. Percent signs are read as /100; when only one of the two carries
    '%' it may also be a number of percentage points (8.0 vs 8%), and the closer reading is used, except that a
    percentage against a bare fraction below 1 (a probability, 0.49) is only that percentage of 1."""
    x, reference = _as_number(x), _as_number(reference)
    ref = _canonical(reference)
    if (x.unit == PERCENT) == (reference.unit == PERCENT):
        return _canonical(x), ref
    if reference.unit == PERCENT:  # bare x: a fraction (0.08) or percentage points (8.0)
        readings = [x.value, x.value / 100]
    elif abs(ref) < 1:  # x in percent, a bare fraction as reference (a probability, 0.49): '0.4875%' is 0.004875
        readings = [x.value / 100]
    else:  # x in percent, bare reference: compare as fraction (0.08) or as points (8.0)
        readings = [x.value / 100, x.value]
    return min(readings, key=lambda r: abs(r - ref)), ref


def relative_difference(a: float, b: float) -> float:
    """|a − b| / |b|: 0 when both are (nearly) 0, inf when only b is. The one definition of a relative gap."""
    if b == 0:
        return 0.0 if math.isclose(a, 0.0, abs_tol=1e-12) else math.inf
    return abs(a - b) / abs(b)


def relative_error(extracted: Number | float, gold: Number | float) -> float:
    """|extracted − gold| / |gold| on a common scale (`aligned_values`)."""
    return relative_difference(*aligned_values(extracted, gold))


def numbers_match(extracted: Number | float | None, gold: Number | float, rel_tol: float = 0.02) -> bool:
    """Within `rel_tol` relative to the gold at every magnitude (no absolute tolerance); percent-aware.

    Currency symbols are not compared: models often restate a € amount with $.
    """
    if not (isinstance(rel_tol, int | float) and rel_tol >= 0):
        raise ValueError(f"rel_tol={rel_tol!r} must be a non-negative number")
    if extracted is None:
        return False
    return relative_error(extracted, gold) <= rel_tol + REL_TOL_SLACK


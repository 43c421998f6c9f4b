"""Numbers as answers write them, and comparing them on one scale.

A `Number` is a value with its unit ("%", a currency, or None); scale words are applied ("$1.2 million"
-> 1200000) and basis points become percent (75 bps -> 0.75 %). `aligned_values` is the one rule that
puts two numbers on one scale (8.0 % and 0.08 are the same rate), used by every grader.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

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


# '1 003 333', '€644 161' (thin, narrow or no-break spaces); with plain spaces only '10 736 010', '60 000'
_SPACE_GROUPED = re.compile(
    r"(?<![\d.,])(?:\d{1,3}(?:[\u2009\u202f\u00a0]\d{3})+|\d{1,3}(?: \d{3}){2,}|\d{2,3} \d{3})(?![\d,]|\.\d{3})"
)


def _join_space_groups(match: re.Match[str]) -> str:
    return re.sub(r"[ \u2009\u202f\u00a0]", ",", match.group())


# Swiss thousands: "7'220.39", '1’500’000' (groups of three digits only)
_APOSTROPHE_GROUPED = re.compile(r"(?<![\d.,'’])\d{1,3}(?:['’]\d{3})+(?![\d'’])")


def normalise_signs(text: str) -> str:
    """Numbers as the readers read them (the number grammar of tests/grading_corpus/README.md): Unicode minus
    signs to '-', the lira sign the source uses for pounds (₤) to '£', apostrophe thousands dropped (7'220.39
    is 7220.39), scientific notation, 万/億/亿 and unit
    words of other languages written out (`_written_out`), a text written with decimal commas read in its
    locale (`decimal_comma`), thousands grouped by spaces or thin spaces ('1 003 333', '€644 161') to commas."""
    text = re.sub("[\u2212\u2012\u2011\ufe63\uff0d]", "-", text).replace("₤", "£")
    text = _APOSTROPHE_GROUPED.sub(lambda m: re.sub("['’]", "", m.group()), text)
    text = _written_out(text)
    if decimal_comma(text) or dot_thousands(text):
        text = _GROUPED_DECIMAL.sub(_as_decimal_point, text)
    else:  # '28,79 %' on the answer line of a text that otherwise writes points: no US reading of it exists
        text = _COMMA_DECIMAL.sub(lambda m: _GROUPED_DECIMAL.sub(_as_decimal_point, m.group()), text)
    text = _SPACE_GROUPED.sub(_join_space_groups, text)
    # an en/em dash directly before a number is a minus sign unless it joins a range (2019–2020)
    return re.sub(r"(?<![\w)])([–—])(?=\s?[$€£¥]?\d)", "-", text)


# --- number formats beyond US English -------------------------------------------------------------------
# a decimal comma no US text writes: '28,79', '0,2879', '−1,7', '40.082,64', '16 215,64'
_COMMA_DECIMAL = re.compile(
    r"(?<![\d.,])(?<!\w\()(?:0,\d+|\d+,\d{1,2}|\d+,\d{4,}|\d{1,3}(?:[. \u00a0\u202f\u2009]\d{3})+,\d+)(?![\d,])")
# a decimal point no comma-locale text writes: '28.79', '0.288', '1,234.5', '0.776483'
_POINT_DECIMAL = re.compile(r"(?<![\d.,])(?:0\.\d+|\d+\.\d{1,2}(?![\d.])|\d+\.\d{4,}|\d{1,3}(?:,\d{3})+\.\d+)")
# a number in a decimal-comma text: its thousands by dots or spaces, its decimal part after the comma
_GROUPED_DECIMAL = re.compile(
    r"(?<![\d.,])(?P<int>\d{1,3}(?:(?P<sep>[. \u00a0\u202f\u2009])\d{3})(?:(?P=sep)\d{3})*|\d+)"
    r"(?:,(?P<dec>\d+))?(?![\d])")
# a number written one way in every locale's reading: '1,234' in a decimal-comma text is 1.234 or 1234
AMBIGUOUS_GROUP = re.compile(r"(?<![\d.,])[1-9]\d{0,2},\d{3}(?![\d,.])")


# '1.000.000': two dot groups, which no decimal point writes
_DOT_GROUPS = re.compile(r"(?<![\d.,])\d{1,3}(?:\.\d{3}){2,}(?![\d,]|\.\d)")
# '900.000' in a text that writes no decimal point elsewhere: 900 or 900,000 (a decimal rarely ends in '.000';
# '3.897%' is read as written)
AMBIGUOUS_POINT = re.compile(r"(?<![\d.,])[1-9]\d{0,2}\.000(?![\d,]|\.\d)")


def dot_thousands(text: str) -> bool:
    """The text groups thousands with dots ('1.000.000 USD ... 900.000 USD') and writes no decimal point."""
    return bool(_DOT_GROUPS.search(text)) and not writes_decimal_point(text)


def writes_decimal_point(text: str) -> bool:
    """The text writes a decimal with a point somewhere ('28.79', '0.288', '1,234.5')."""
    return bool(_POINT_DECIMAL.search(text))


def writes_decimal_comma(text: str) -> bool:
    """The text writes a decimal with a comma somewhere ('28,79 %', '0,2879', '81.481,48')."""
    return bool(_COMMA_DECIMAL.search(text))


def decimal_comma(text: str) -> bool:
    """The text writes decimals with a comma and never with a point: its dots group thousands."""
    return writes_decimal_comma(text) and not writes_decimal_point(text)


def _as_decimal_point(match: re.Match[str]) -> str:
    whole, decimals = match.group("int"), match.group("dec")
    if AMBIGUOUS_GROUP.fullmatch(match.group()):
        return match.group()  # '1,234': left as written, `grade_open_answer` defers on it
    if decimals is None and match.group("sep") == " " and not re.fullmatch(r"\d{1,3}(?: \d{3}){2,}|\d{2,3} \d{3}",
                                                                             whole):
        return match.group()  # '1 500' may be two numbers; the US rule for spaces decides
    digits = re.sub(r"\D", "", whole)
    return digits if decimals is None else f"{digits}.{decimals}"


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
# '1.6216 × 10⁴', '1.2 × 10^2', '6.6 × 10^{-3}', '4.929285E+06', '2.8785e-01'
_SCIENTIFIC = re.compile(
    r"(?<![\w.,])(?P<m>\d+(?:[.,]\d+)?)(?:\s*[×xX*·]\s*10\s*(?:\^\s*\{?\s*(?P<e1>[-+]?\d+)\s*\}?|(?P<e2>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
    r"|[eE](?P<e3>[-+]?\d{1,3}))(?![\w.])")
_SCALE_NOTE = r"(?:[$€£¥]\s*|(?:USD|EUR|GBP|JPY)\s+)?(?:thousands|millions|billions|['’]?000['’]?s)\b"
# '98.27万', '1.5亿', '1億6,990万' (10⁸ and 10⁴ summed), read only when nothing else of the form is CJK (千, 兆, 六)
CJK_NUMERALS = "〇一二三四五六七八九十百千万萬億亿兆"
_CJK_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_CJK_SCALE = re.compile(
    rf"(?<![\d.,{CJK_NUMERALS}])(?:(?P<oku>{_CJK_DIGITS})\s*[億亿](?:\s*(?P<man>{_CJK_DIGITS})\s*[万萬])?"
    rf"|(?P<man_only>{_CJK_DIGITS})\s*[万萬])(?![\d{CJK_NUMERALS}])")
# unit, scale and sign words of the languages answers are written in, as the readers know them
_WORDS_ELSEWHERE: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"(?i)(?<=\d)\s*(?:个)?(?:基点|basispunkte?n?|points?\s+de\s+base|puntos?\s+b[aá]sicos?|"
                r"pontos?[\s-]+base|pb\b)"), " bps"),
    (re.compile(r"(?i)(?<=\d)\s*(?:prozent|por\s+ciento|pour\s+cent|por\s+cento)\b"), " percent"),
    (re.compile(r"(?i)(?<=\d)\s*(?:millionen|millions|millones|milh[õo]es|milioni|milyon|mio\.)(?!\w)"), " million"),
    (re.compile(r"(?i)(?<=\d)\s*(?:milliarden|milliards|miliardi|milyar|mrd\.)(?!\w)"), " billion"),
    # the unit or scale right after the number: '169.9 (in $ millions)', '450 in thousands', '28,936 (in $ 000s)',
    # '28,936 ($000s)', '28.79 (in %)'
    (re.compile(rf"(?i)(?<=\d)\s*\(\s*(?:in\s+)?{_SCALE_NOTE}\s*\)|(?<=\d)\s+in\s+{_SCALE_NOTE}"),
     lambda m: " " + next((w for w in ("million", "billion") if w in m.group().lower()), "thousand")),
    (re.compile(r"(?<=\d)\s*\(\s*in\s*%\s*\)"), "%"),
    # the percent sign before the number (Turkish '%3,49'), not one closing a number ('5% 3')
    (re.compile(r"(?<![\d%])(?<!\d\s)%(?P<n>\d(?:[\d.,]*\d)?)"), lambda m: m.group("n") + "%"),
    # sign words before a number ('baisse de 0,66 %', 'sinkt um 0,66 %', '下降0.66%'): rule 4 in any language
    (re.compile(r"(?i)\b(?:baisse|diminution|recul|r[üu]ckgang|disminuci[óo]n|ca[íi]da|queda|redu[çc][ãa]o|calo|"
                r"diminuzione|снижение|падение)\s+(?:de|d['’]|von|um|del|dello|della|di|на)\s*(?=[-+$€£¥]?\d)"),
     "decline of "),
    (re.compile(r"(?i)\b(?:sinkt|f[äa]llt|diminue|baisse|disminuye|cae|baja|cai|diminui)\s+(?:um|de|en|em)?\s*"
                r"(?:environ\s+|rund\s+|etwa\s+|aproximadamente\s+|cerca\s+de\s+)?(?=[-+$€£¥]?\d)"), "falls by "),
    (re.compile(r"(?:下降|减少|下跌|降低|下落|減少)(?:了)?(?:约|大约|約)?(?=[-+$€£¥]?\d)"), " declines by "),
    # a decline after the number: '%3,49 düşüş', '3,49% снижение', '3.49% 하락', '3.49%の下落'
    (re.compile(r"(?i)(?<=[\d%])[ \t]*(?:(?:d[üu][şs][üu][şs]|azalma|снижени[еяю]|падени[еяю])\b|の?(?:下落|減少)|"
                r"(?:의\s*)?(?:하락|감소))"), " decline "),
    # a loss before or after the number: 'pérdida del 15,4 %', 'Verlust von 15,4 %', '亏损15.4%', '15,4 % de perte'
    (re.compile(r"(?i)\b(?:perte|verlust|p[ée]rdida|perda|perdita|убыток)\s+"
                r"(?:de\s+la|del|du|da|do|de|d['’]|von|um|di|в\s+размере)?\s*"
                r"(?:environ\s+|rund\s+|etwa\s+|aproximadamente\s+|cerca\s+de\s+|circa\s+|около\s+)?"
                r"(?=[-+$€£¥]?\d)"
                r"|(?:亏损|损失|損失|손실)(?:了)?(?:约|大约|約)?\s*(?=[-+$€£¥]?\d)"), " loss of "),
    (re.compile(r"(?i)(?<=[\d%])[ \t]*(?:(?:de\s+|d['’]|di\s+)?"
                r"(?:perte|verlust|p[ée]rdida|perda|perdita|убыток|kay[ıi]p|zarar)\b|の?損失|(?:의\s*)?손실)"),
     " loss "),
]


def _written_out(text: str) -> str:
    """Scientific notation as a plain decimal ('2.8785E-01' is 0.28785), 万 and 億/亿 applied ('98.27万' is
    982700, '1億6,990万' is 169900000) and other languages' unit and scale words in English ('66 Basispunkte' is
    '66 bps')."""

    def plain(match: re.Match[str]) -> str:
        exponent = (match.group("e1") or match.group("e2") or match.group("e3")).translate(_SUPERSCRIPT)
        mantissa = match.group("m").replace(",", ".")
        return _plain(Decimal(mantissa).scaleb(int(exponent)))

    text = _SCIENTIFIC.sub(plain, text)
    text = _CJK_SCALE.sub(_cjk_value, text)
    for words, english in _WORDS_ELSEWHERE:
        text = words.sub(english, text)
    return text


def _cjk_value(match: re.Match[str]) -> str:
    def part(name: str) -> Decimal:
        return Decimal((match.group(name) or "0").replace(",", ""))

    return _plain(part("oku") * 10**8 + (part("man") + part("man_only")) * 10_000)


def _plain(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


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
        alone = _EQUATED_BEFORE.search(text[: match.start()]) and _VALUE_END.match(text, match.end())
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
            r"|[ \t]*(?P<word>thousand|million|billion|trillion|mn|bn|tn|mio)\b"
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
        sign = re.search(r"(?:^|(?<=[\s(=:≈~\[{,;]))([-+])$", text[:token_start])
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
    '%' it may also be a number of percentage points (8.0 vs 8%), and the closer reading is used."""
    x, reference = _as_number(x), _as_number(reference)
    ref = _canonical(reference)
    if (x.unit == PERCENT) == (reference.unit == PERCENT):
        return _canonical(x), ref
    if reference.unit == PERCENT:  # bare x: a fraction (0.08) or percentage points (8.0)
        readings = [x.value, x.value / 100]
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


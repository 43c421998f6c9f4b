"""Reading the final answer out of a model's free-text response.

Both extractors look for the answer the response *commits to*, not the first or last thing that
looks like one: responses discuss every option, quote numbers from the question and add remarks such
as "(rounded to 2 decimals)" after the answer. Reasoning blocks (`<think>...</think>`) never count.

* `extract_choice` works in tiers: explicit answer statements ("ANSWER: C", "the correct answer is
  B", `\\boxed{B}`), then verdicts ("Option C is correct"), then a response that is just a label line
  ("C) expected inflation"). Within the strongest tier present the last statement wins, so a final
  answer restated after an explanation is what counts; a statement naming two letters gives None.
* `extract_number` reads, in order, the last `\\boxed{}`, the last explicit answer line ("Final
  answer:", "ANSWER:", "the answer is") and otherwise the concluding sentence; inside that region it
  scores each number (after "=", "is", "approximately"; with a unit) and demotes operands of a formula,
  durations ("in 6 years"), precision notes ("2 decimals"), labels ("Step 3", "IFRS 16") and remarks in
  parentheses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "Number",
    "extract_choice",
    "extract_number",
    "extract_numbers_in",
    "numbers_match",
    "aligned_values",
    "relative_error",
    "strip_reasoning",
]

CURRENCY_UNITS = ("$", "€", "£", "¥")
PERCENT = "%"

_REASONING_TAGS = "think|thinking|reasoning|reflection"


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


# --------------------------------------------------------------------------------------------------
# Shared clean-up


def strip_reasoning(text: str | None) -> str:
    """Drop reasoning blocks: closed `<think>` blocks, everything after an unclosed `<think>`, and
    everything before a stray `</think>` (templates that open the block inside the prompt)."""
    if not text:
        return ""
    text = re.sub(rf"<({_REASONING_TAGS})\b[^>]*>.*?</\1\s*>", " ", text, flags=re.S | re.I)
    closers = list(re.finditer(rf"</(?:{_REASONING_TAGS})\s*>", text, re.I))
    if closers:
        text = text[closers[-1].end() :]
    opener = re.search(rf"<(?:{_REASONING_TAGS})\b[^>]*>", text, re.I)
    if opener:
        text = text[: opener.start()]
    return text


def _unwrap_latex(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = re.sub(
            r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|operatorname|mbox)\s*\{([^{}]*)\}",
            r"\1",
            text,
        )
    text = re.sub(r"\\[()\[\]]", " ", text)  # inline / display math delimiters
    replacements = {
        "\\$": "$", "\\%": "%", "{,}": ",", "\\approx": "≈", "\\sim": "~", "\\times": "×",
        "\\cdot": "×", "\\div": "÷", "\\euro": "€", "\\pounds": "£", "\\left": "", "\\right": "",
    }  # fmt: skip
    for old, new in replacements.items():
        text = text.replace(old, new)
    text = re.sub(r"(?<=\d)\\[,;:!](?=\d{3})", "", text)  # 113\,733
    return re.sub(r"\\[,;:!]", " ", text)


def _clean(text: str | None) -> str:
    text = strip_reasoning(text)
    text = _unwrap_latex(text)
    text = re.sub(r"</?(?:b|strong|em|i|u|p|br|span|div)\b[^>]*>", " ", text, flags=re.I)
    return text.replace("**", "").replace("__", "")


# --------------------------------------------------------------------------------------------------
# Multiple-choice letters

_CONNECTIVES = {
    "because", "since", "as", "which", "that", "is", "was", "would", "should", "could", "will", "it",
    "this", "for", "given", "due", "with", "here", "so", "then", "but", "while", "whereas", "where",
    "though", "although", "indeed", "only", "again", "in", "per", "from", "to", "correct", "right",
}  # fmt: skip


def _choice_patterns(letters: str) -> list[tuple[int, re.Pattern[str]]]:
    """(tier, pattern) with a named group `letter`; tier 1 is strongest."""
    letter = rf"(?P<letter>[{letters}])(?![\w'’])"
    deco = r"[\s:=*_`$\"'“‘(\[{>~–—-]*"
    filler = (
        r"(?:(?i:therefore|thus|clearly|likely|most\s+likely|probably|then|indeed|either|both|option|choice|letter)\b"
        + deco
        + r")*"
    )
    explicit = (
        r"(?i:\bfinal\s+answer(?:\s+(?:is|would\s+be|will\s+be))?"
        r"|\b(?:answer|ans)(?:\s+(?:choice|option))?\s*(?:is|would\s+be|should\s+be|must\s+be|will\s+be|[:=：]|[-–—]+)"
        r"|\banswer\s*(?=\(\s*[A-Z]\s*\))"
        r"|\b(?:correct|right|best|final|most\s+appropriate|most\s+accurate)\s+(?:option|choice|response|selection|letter)\s*(?:is|would\s+be|[:=])"  # noqa: E501
        r"|\bI\s+(?:would\s+|will\s+|'?d\s+)?(?:choose|select|pick|go\s+with)"
        r"|\bI['’]d\s+(?:choose|select|pick|go\s+with)"
        r"|\bmy\s+(?:final\s+)?(?:answer|choice|pick|selection)\s*(?:is|would\s+be|[:=])"
        r"|答案\s*(?:是|为|[:：])"
        r"|\\boxed\s*\{)"
    )
    verdict_before = (
        rf"(?<![\w'’])(?:(?i:option|choice|answer)\s*)?[(\[]?(?P<letter>[{letters}])[)\]]?"
        r"\s+(?i:is|are|would\s+be|seems\s+to\s+be|appears\s+to\s+be)\s+(?i:the\s+)?(?i:most\s+|only\s+)?"
        r"(?i:correct\b|right\b|best\b|accurate\b|appropriate\b|true\b|answer\b|valid\b)"
    )
    verdict_verb = rf"(?i:\b(?:choose|select|pick|go\s+with))\s+{filler}[(\[]?{letter}"
    return [
        (1, re.compile(rf"{explicit}{deco}{filler}{letter}")),
        (2, re.compile(verdict_before)),
        (2, re.compile(verdict_verb)),
    ]


def _letter_is_article(text: str, end: int) -> bool:
    """'A bond's price...': an English article, not a choice."""
    following = re.match(r"\s+([a-z][\w'’-]*)", text[end:])
    return bool(following) and following.group(1) not in _CONNECTIVES


def _names_two_letters(text: str, start: int, end: int, letters: str) -> bool:
    joiner = r"\s*(?:,|/|&|\band/or\b|\band\b|\bor\b)\s*"
    after = re.match(rf"[)\]]?{joiner}(?:(?i:option|choice)\s*)?[(\[]?[{letters}](?![\w'’])", text[end:])
    before = re.search(rf"(?<![\w'’])[{letters}][)\]]?{joiner}(?:(?i:option|choice)\s*)?[(\[]?$", text[:start])
    return bool(after or before)


_LABEL_LINE = (
    r"^[\s>#]*(?:(?i:so|thus|therefore|hence|final|answer)[,:]?\s*)?(?:(?i:option|choice)\s*)?"
    r"(?:\((?P<l1>[{letters}])\)|\[(?P<l2>[{letters}])\]|(?P<l3>[{letters}])\)|(?P<l4>[{letters}])(?=[.:\-–—]|\s*$))"
    r"(?P<rest>.*)$"
)


def _label_line_letter(text: str, letters: str) -> str | None:
    """A response that is, or ends with, a bare label line: 'C) expected inflation', '**C**', '(B)'.

    Bullet items ('- C', '• B') are not labels: they are symbols in a list (C = coupon)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    pattern = re.compile(_LABEL_LINE.format(letters=letters))
    labelled = [(i, m) for i, line in enumerate(lines) if (m := pattern.match(line))]
    if not labelled:
        return None
    named = {_label_letter(m) for _, m in labelled}
    if len(named) == 1:
        return named.pop()
    last_index, last = labelled[-1]
    if last_index == len(lines) - 1 and not last.group("rest").strip(" .:)"):
        return _label_letter(last)  # a listing of the options followed by a lone final letter
    return None


def _label_letter(match: re.Match[str]) -> str:
    return next(match.group(g) for g in ("l1", "l2", "l3", "l4") if match.group(g))


def extract_choice(text: str | None, choices: Iterable[str] | str = "ABC") -> str | None:
    """The letter the response commits to as its final answer, or None (no letter, or two letters)."""
    letters = "".join(sorted({c.strip().upper() for c in choices if c.strip()}))
    if not letters or not all(c.isalpha() and len(c) == 1 for c in letters):
        raise ValueError(f"choices={choices!r} must be single letters such as 'ABC'")
    body = _clean(text)
    if not body.strip():
        return None
    found: dict[int, list[tuple[int, int, str]]] = {}
    for tier, pattern in _choice_patterns(letters):
        for match in pattern.finditer(body):
            start, end = match.span("letter")
            if match.group("letter") == "A" and _letter_is_article(body, end):
                continue
            found.setdefault(tier, []).append((start, end, match.group("letter")))
    if found:
        start, end, letter = max(found[min(found)])  # the strongest tier present, its last statement
        return None if _names_two_letters(body, start, end, letters) else letter
    return _label_line_letter(body, letters)


# --------------------------------------------------------------------------------------------------
# Numbers

_CORE = re.compile(r"(?<![\d.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])")
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
_CUE_BEFORE = re.compile(
    r"(?i)(?:=|≈|≅|~|:|→|=>|->|\b(?:is|are|was|were|be|equals?|equal\s+to|approximately|approx\.?|about|around|"
    r"roughly|nearly|close\s+to|closest\s+to|becomes|gives|yields|totals?|reaches|amounts?\s+to|"
    r"comes?\s+to|answer))\s*$"
)
# "... for the 2-year bond at 6% coupon": a number in a trailing prepositional phrase is context
_CONTEXT_BEFORE = re.compile(r"(?i)\b(?:at|for|in|over|with|from|on|after|within|per)(?:\s+(?:the|a|an))?\s*$")
_COMPARISON_AFTER = re.compile(r"(?i)^\s*(?:higher|lower|more|less|greater|smaller|above|below)\b")
_TIME_AFTER = re.compile(r"(?i)^[\s-]*(?:years?|yrs?|months?|days?|weeks?|quarters?|periods?|semesters?)\b")
_PRECISION_AFTER = re.compile(
    r"(?i)^\s*(?:decimal(?:s|\s+places?|\s+points?)?|dp\b|d\.p\.|significant|sig\.?\s*figs?|digits?|places?)"
)
_OPERATOR = "×*/^+÷"


@dataclass(frozen=True)
class _Found:
    number: Number
    start: int  # first character of the whole token (sign, currency, parenthesis)
    end: int  # one past the last character (unit, scale word, closing parenthesis)


def _normalise_signs(text: str) -> str:
    """Unicode minus signs to '-', the lira sign the source uses for pounds (₤) to '£'."""
    text = re.sub("[\u2212\u2012\ufe63\uff0d]", "-", text).replace("₤", "£")
    # an en/em dash directly before a number is a minus sign unless it joins a range (2019–2020)
    return re.sub(r"(?<![\w)])([–—])(?=\s?[$€£¥]?\d)", "-", text)


def _scan_numbers(text: str) -> list[_Found]:
    """Every number with its sign, currency, percent/scale and accounting parentheses; labels skipped."""
    found: list[_Found] = []
    for core in _CORE.finditer(text):
        start, end = core.span()
        left = text[:start]
        # letters glued to the digits: identifiers such as t1, X1, FY2020, 20X1, 3rd (but USD500, 5bn, 1.8x)
        glued_left = re.search(r"([A-Za-z$]+)$", left)
        if glued_left and glued_left.group(1).lower() not in _CODES and glued_left.group(1) != "$":
            continue
        if _LABEL_BEFORE.search(left):
            continue
        value = float(core.group().replace(",", ""))
        unit: str | None = None
        right = text[end:]
        suffix = re.match(
            r"(?i)\s?(?P<pct>%|percent\b|per\s?cent\b|pct\b|percentage\s+points?\b)"
            r"|\s?(?P<bps>bps\b|bp\b|basis\s+points?\b)"
            r"|\s?(?P<word>thousand|million|billion|trillion|mn|bn|tn|mio)\b"
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
        closing = re.match(r"\s*\)(?!\s*[\^*/×÷])", text[token_end:])
        if accounting and closing:
            has_marks = unit in CURRENCY_UNITS or "," in core.group() or "." in core.group() or value >= 10
            if has_marks and not _glued_to_function(text, accounting.start()):
                lead = re.match(r"[$€£¥]", text[accounting.start() :])
                unit = unit or (lead.group() if lead else None)
                value = -value
                token_start = accounting.start()
                token_end += closing.end()
        found.append(_Found(Number(value, unit), token_start, token_end))
    return found


def _glued_to_function(text: str, paren_at: int) -> bool:
    """'(1.08)^6' or 'f(2)': parentheses of a formula, not an accounting negative."""
    return bool(re.search(r"[\w)\]^/*×÷+-]\s*$", text[:paren_at]))


def extract_numbers_in(text: str | None) -> list[Number]:
    """All numbers written in a short text such as an option ('€1,000 and €2,000' -> two numbers)."""
    cleaned = _normalise_signs(_clean(text))
    return [found.number for found in _scan_numbers(cleaned)]


def _inside_remark(text: str, start: int, end: int) -> bool:
    """The number sits in a parenthetical remark such as '(rounded to 2 decimals)'."""
    open_at = text.rfind("(", 0, start)
    if open_at < 0 or text.rfind(")", open_at, start) >= 0:
        return False
    close_at = text.find(")", end)
    if close_at < 0:
        close_at = len(text)
    inside = text[open_at + 1 : start] + text[end:close_at]
    return len(re.findall(r"[A-Za-z]", inside)) >= 3


def _score(text: str, found: _Found) -> float:
    before = text[: found.start]
    after = text[found.end :]
    score = 0.0
    cue_text = re.sub(r"[\s*_(`$€£¥]+$", "", before)
    if _CUE_BEFORE.search(cue_text) or not before.strip():
        score += 3
    elif _CONTEXT_BEFORE.search(cue_text):
        score -= 1
    if _COMPARISON_AFTER.search(after):
        score -= 2
    if found.number.unit is not None or re.match(r"(?i)\s?(?:thousand|million|billion|trillion)", after):
        score += 2
    stripped_before = before.rstrip()
    left_operator = (stripped_before[-1:] and stripped_before[-1] in _OPERATOR) or re.search(
        r"[\w)]\s+-$", stripped_before
    )
    left_exponent = re.search(r"[\^]\s*[({]\s*$", before)
    right_operator = re.match(rf"\s*(?:[{re.escape(_OPERATOR)}]|-\s+[\d($€£¥])", after) or re.match(r"\)\s*\^", after)
    if left_operator or left_exponent or right_operator:
        score -= 6
    if _TIME_AFTER.search(after):
        score -= 4
    if _PRECISION_AFTER.search(after) or re.search(r"(?i)round(?:ed|ing)?\s+(?:off\s+)?(?:to|at)\s*$", before):
        score -= 8
    if _inside_remark(text, found.start, found.end):
        score -= 3
    value = found.number.value
    if found.number.unit is None and value.is_integer() and 1900 <= value <= 2100:
        score -= 2
    return score


def _best_in(text: str, threshold: float | None = None, first_bonus: float = 0.0) -> Number | None:
    """Highest-scoring number of a region; ties go to the later one ('r = 0.0814 ≈ 8.14%')."""
    candidates = [(_score(text, found), found.start, found.number) for found in _scan_numbers(text)]
    if not candidates:
        return None
    candidates[0] = (candidates[0][0] + first_bonus, *candidates[0][1:])
    score, _, number = max(candidates, key=lambda c: (c[0], c[1]))
    if threshold is not None and score < threshold:
        return None
    return number


def _boxed_contents(text: str) -> list[str]:
    contents = []
    for match in re.finditer(r"\\boxed\s*\{", text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        contents.append(text[match.end() : i - 1])
    return contents


_ANSWER_MARKER = re.compile(
    r"(?im)(?:\bfinal\s+(?:answer|result)\b\s*(?:\([^)\n]{0,40}\))?(?:\s*(?:is\b|:|=|[-–—]+)|[ \t]*$)"
    r"|\b(?:short\s+|direct\s+)?answer\b\s*(?:\([^)\n]{0,40}\))?\s*(?::|=|is\b|[-–—]+)"
    r"|答案\s*(?:是|为|[:：]))"
)
_NOTE_SENTENCE = re.compile(
    r"(?i)^[\s>*#\-•]*(?:\(|note\b|nb\b|check\b|checking\b|verification\b|verify\b|sanity\b|assum|if\b|"
    r"where\b|here\b|let\s+me\s+know|i\s+can\b|would\s+you\b|feel\s+free|rounded\b|this\s+assumes|"
    r"caveat|disclaimer|alternatively\b|for\s+example\b|e\.g\.)"
)


def extract_number(text: str | None) -> Number | None:
    """The number the response gives as its final answer (see the module docstring for the order)."""
    body = _normalise_signs(_clean(text))
    if not body.strip():
        return None
    for content in reversed(_boxed_contents(body)):
        number = _best_in(content)
        if number is not None:
            return number
    markers = [m for m in _ANSWER_MARKER.finditer(body) if not _HYPOTHETICAL.search(_line_before(body, m.start()))]
    if markers:
        region = _answer_region(body, markers[-1].end())
        # the number right after "Answer:" is the answer unless a later one is clearly the result
        return _best_in(region, first_bonus=1) if region is not None else None
    return _concluding_number(body)


_HYPOTHETICAL = re.compile(r"(?i)\b(?:if|note|otherwise|alternatively|assuming|would|could|suppose)\b")


def _line_before(body: str, position: int) -> str:
    return body[body.rfind("\n", 0, position) + 1 : position]


def _answer_region(body: str, start: int) -> str | None:
    """The rest of the marker's line, or the next two non-empty lines when that rest has no number."""
    line_end = body.find("\n", start)
    line = body[start : line_end if line_end >= 0 else len(body)]
    if _scan_numbers(line):
        return line
    if line.strip(" *:-–—") or line_end < 0:
        return None  # the final answer is not a number
    following = [part for part in body[line_end:].splitlines() if part.strip()][:2]
    region = "\n".join(following)
    return region if _scan_numbers(region) else None


def _concluding_number(body: str) -> Number | None:
    sentences: list[str] = []
    for line in body.splitlines():
        sentences.extend(part for part in re.split(r"(?<=[.!?])\s+(?=[A-Z(*#\[])", line) if part.strip())
    for skip_notes in (True, False):  # a response made only of conditional sentences still answers
        for sentence in reversed(sentences):
            if skip_notes and _NOTE_SENTENCE.match(sentence):
                continue
            number = _best_in(sentence, threshold=-1)
            if number is not None:
                return number
    return None


# --------------------------------------------------------------------------------------------------
# Comparing numbers


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


def relative_error(extracted: Number | float, gold: Number | float) -> float:
    """|extracted − gold| / |gold| on a common scale (inf when gold is 0 and extracted is not)."""
    x, g = aligned_values(extracted, gold)
    if g == 0:
        return 0.0 if math.isclose(x, 0.0, abs_tol=1e-12) else math.inf
    return abs(x - g) / abs(g)


def numbers_match(extracted: Number | float | None, gold: Number | float, rel_tol: float = 0.02) -> bool:
    """Within `rel_tol` relative to the gold at every magnitude (no absolute tolerance); percent-aware.

    Currency symbols are not compared: models often restate a € amount with $.
    """
    if not (isinstance(rel_tol, int | float) and rel_tol >= 0):
        raise ValueError(f"rel_tol={rel_tol!r} must be a non-negative number")
    if extracted is None:
        return False
    return relative_error(extracted, gold) <= rel_tol + REL_TOL_SLACK

"""Numbers as written in a question or an option: find them, and write new ones in the same style.

`cfa_lib.answers` reads the *value* a model commits to; this module keeps the *text* around each number
(currency, separators, decimals, "%", " million", trailing words) so that a perturbation can write a
new value exactly the way the original was written, and replace one span without touching "17%" when
it changes "7%".

A count written as a word ("a portfolio of five stocks") is a number too when a span holds no digits and
the word is the value (`word_number`): it is written back as a word ("seven stocks", "Seven" at the start
of a sentence), for whole numbers up to twenty (`NumberText.writable`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cfa_lib.answers.numbers import DIGITS

# a number starts after a non-word character, or right after a currency code ("USD96.5 million", "CHF500,000")
_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "HKD")
_START = "|".join([r"(?<![\w.,])", *(f"(?<={code})" for code in _CODES)])
_NUMBER = re.compile(rf"(?:{_START})(?P<sign>[-–−]?)(?P<currency>[$€£¥]?)(?P<digits>{DIGITS})(?!\d)")
_PERCENT = re.compile(r"^\s*(?:%|percent\b)", re.I)
_MULTIPLIERS = (
    (re.compile(r"^\s*thousand\b", re.I), 1e3),
    (re.compile(r"^\s*million\b", re.I), 1e6),
    (re.compile(r"^\s*billion\b", re.I), 1e9),
    (re.compile(r"^\s*trillion\b", re.I), 1e12),
    (re.compile(r"^\s*(?:basis points?|bps?)\b", re.I), 1e-4),
)


NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
)
_UNITS = "|".join(NUMBER_WORDS[1:10])
# a whole word, not part of a compound ("twenty-five" is neither twenty nor five)
_NUMBER_WORD = re.compile(rf"(?<![\w-])(?P<word>{'|'.join(NUMBER_WORDS)})(?![\w]|-(?:{_UNITS})\b)", re.I)


@dataclass(frozen=True)
class NumberText:
    """One number inside a piece of text (an option or a span), with what it takes to write another."""

    lead: str  # text before the sign/currency
    sign: str
    currency: str
    digits: str
    suffix: str  # text after the digits
    number: float  # signed, as written ("7%" -> 7.0)
    word: bool = False  # written as a word ("five"; `digits` holds the word as written)

    def writable(self, number: float) -> bool:
        """Whether `number` can be written in this style (a word: a whole number from zero to twenty)."""
        return not self.word or (float(number).is_integer() and 0 <= number < len(NUMBER_WORDS))

    @property
    def decimals(self) -> int:
        return len(self.digits.split(".")[1]) if "." in self.digits else 0

    @property
    def grouped(self) -> bool:
        return "," in self.digits

    @property
    def percent(self) -> bool:
        return bool(_PERCENT.match(self.suffix))

    @property
    def multiplier(self) -> float:
        for pattern, factor in _MULTIPLIERS:
            if pattern.match(self.suffix):
                return factor
        return 1.0

    @property
    def scales(self) -> list[float]:
        """Factors from the number as written to a value a formula may use: as is, with its scale word
        ("$1.2 million" -> 1.2e6), and for a percentage as a fraction ("7%" -> 0.07)."""
        return [1.0, self.multiplier] + ([0.01] if self.percent else [])

    @property
    def core(self) -> str:
        """The number with currency, % or scale word, without other words ("$113,733", "8.0%", "$1.2 million")."""
        return f"{self.sign}{self.currency}{self.digits}{self.unit}"

    @property
    def unit(self) -> str:
        """What right after the digits belongs to the number: "%" or a word such as " million"."""
        for pattern in (_PERCENT, *(pattern for pattern, _ in _MULTIPLIERS)):
            match = pattern.match(self.suffix)
            if match:
                return match.group(0)
        return ""

    def write(self, number: float, decimals: int | None = None, keep_lead: bool = True, group: bool = False) -> str:
        """`number` in this text's style: currency, sign, separators, decimals, surrounding words.

        Thousands are grouped when this text groups them, from 10,000 up, or with `group` from 1,000 up
        (options written "$800." and "$1,300." rebuilt as "$1,477." beside "$2,400.", not "$1477.")."""
        if self.word:
            if not self.writable(number):
                raise ValueError(f"{number:g} cannot be written as a number word like {self.digits!r}")
            word = NUMBER_WORDS[int(number)]
            if self.digits.isupper() and len(self.digits) > 1:
                word = word.upper()
            elif self.digits[0].isupper():
                word = word.capitalize()
            return f"{self.lead if keep_lead else ''}{word}{self.suffix}"
        places = self.decimals if decimals is None else decimals
        if decimals is None:  # a drawn value such as 8.5 for "7%" needs one more place than written
            while places < self.decimals + 2 and not math.isclose(round(number, places), number, abs_tol=1e-9):
                places += 1
        grouped = self.grouped or abs(number) >= 10_000 or (group and abs(number) >= 1_000)
        digits = f"{abs(number):{',' if grouped else ''}.{places}f}"
        sign = "" if round(number, places) >= 0 else (self.sign or "-")
        return f"{self.lead if keep_lead else ''}{sign}{self.currency}{digits}{self.suffix}"


def find_numbers(text: str) -> list[NumberText]:
    """Every number in `text`; lead/suffix of each are the text around that number."""
    found = []
    for match in _NUMBER.finditer(text):
        digits = match["digits"]
        value = float(digits.replace(",", ""))
        found.append(
            NumberText(
                lead=text[: match.start()],
                sign=match["sign"],
                currency=match["currency"],
                digits=digits,
                suffix=text[match.end() :],
                number=-value if match["sign"] else value,
            )
        )
    return found


def find_number_words(text: str) -> list[NumberText]:
    """Every number word in `text` ("five", "Two"), as `NumberText` with `word` set."""
    return [
        NumberText(
            lead=text[: match.start()],
            sign="",
            currency="",
            digits=match["word"],
            suffix=text[match.end() :],
            number=float(NUMBER_WORDS.index(match["word"].lower())),
            word=True,
        )
        for match in _NUMBER_WORD.finditer(text)
    ]


def word_number(span: str, value: float) -> NumberText | None:
    """The number word of a span without digits ("five stocks") when it is the only one and equals `value`.

    A span whose word is not the value ("five-year" for 10 half-years) stays a span without a number, as
    before number words were read: the template or extraction uses it as a fixed convention.
    """
    if find_numbers(span):
        return None
    words = find_number_words(span)
    return words[0] if len(words) == 1 and words[0].number == value else None


def single_number(text: str) -> NumberText | None:
    numbers = find_numbers(text)
    return numbers[0] if len(numbers) == 1 else None


def span_matches(text: str, span: str) -> list[re.Match[str]]:
    """Occurrences of `span` in `text` that are not part of a longer number ("7%" is not in "17%")."""
    if not span:
        return []
    found = []
    for match in re.finditer(re.escape(span), text):
        before, after = text[: match.start()], text[match.end() :]
        if span[0].isdigit() and (before[-1:].isdigit() or (before[-1:] in {".", ","} and before[-2:-1].isdigit())):
            continue
        if span[-1].isdigit() and (after[:1].isdigit() or (after[:1] in {".", ","} and after[1:2].isdigit())):
            continue
        found.append(match)
    return found


def count_span(text: str, span: str) -> int:
    return len(span_matches(text, span))


def substitute_values(stem: str, old_spans: Sequence[str], new_spans: Sequence[str], every: bool = False) -> str:
    """Rewrite `stem` by exact span replacement; every old span must occur exactly once, or with `every`
    (a template, whose accounting binds every copy of a quantity) at least once, each copy replaced.

    The deterministic fallback for level 1/2 when the generator's rewrite fails its checks.
    """
    if len(old_spans) != len(new_spans):
        raise ValueError(f"{len(old_spans)} old spans but {len(new_spans)} new spans")
    positions: list[tuple[int, int, str]] = []
    for old, new in zip(old_spans, new_spans, strict=True):
        matches = span_matches(stem, old)
        if len(matches) != 1 and not (every and matches):
            raise ValueError(f"span {old!r} occurs {len(matches)} times in the question; it must occur once")
        positions += [(match.start(), match.end(), new) for match in matches]
    positions.sort()
    for (_, end, _), (start, _, _) in zip(positions, positions[1:], strict=False):
        if start < end:
            raise ValueError("spans overlap in the question")
    for start, end, new in reversed(positions):
        stem = stem[:start] + new + stem[end:]
    return stem

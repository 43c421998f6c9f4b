"""What the question sentence asks for, read from the stem alone: the unit a bare number is in ('in basis points',
'(€ millions)'), and whether a difference or a change is asked (so 'about €6 more' states the answer)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from cfa_lib.answers.numbers import PERCENT, Number


@dataclass(frozen=True)
class StemUnit:
    """The unit a question asks its answer in: basis points, or a money scale (× 1e6 for millions)."""

    bps: bool = False
    scale: float = 1.0
    currency: str | None = None


SCALE_WORDS = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}


@functools.lru_cache(maxsize=4096)  # asked of one stem several times while an answer is graded
def stem_unit(stem: str) -> StemUnit | None:
    """'in basis points', '(in millions)', '(€ millions)', 'in thousands' in the question sentence."""
    question = stem.rsplit("Question:", 1)[-1]
    question = re.split(r"(?<=[.?!])\s+(?=[A-Z])", question.strip())[-1]
    if re.search(r"(?i)\bin\s+(?:basis\s+points|bps)\b", question):
        return StemUnit(bps=True)
    scale = re.search(r"(?i)\(\s*(?:in\s+)?(?P<cur>[$€£¥])?\s*(?P<word>thousands|millions|billions)\s*\)"
                      r"|\bin\s+(?P<cur2>[$€£¥])?\s*(?P<word2>thousands|millions|billions)\b", question)
    if scale:
        word = (scale.group("word") or scale.group("word2")).lower()
        return StemUnit(scale=SCALE_WORDS[word], currency=scale.group("cur") or scale.group("cur2"))
    return None


_ASKS_DIFFERENCE = re.compile(
    r"(?i)\bthe\s+difference\b[^?:]*\b(?:is|are|was|were|will\s+be|would\s+be)\s*(?:closest\s+to|approximately|"
    r"equal\s+to|most\s+likely)?\s*[:?]?\s*$|\bhow\s+much\s+(?:more|less|higher|lower|greater|larger|smaller)\b"
    r"|\bby\s+how\s+much\b"
)


@functools.lru_cache(maxsize=4096)
def asks_difference(stem: str) -> bool:
    """The question asks for a difference ('the difference in its interest earnings compared with ... is closest
    to:', 'how much more ...'): 'about €6 more' then states the answer, it does not compare it."""
    question = stem.rsplit("Question:", 1)[-1]
    question = re.split(r"(?<=[.?!])\s+(?=[A-Z])", question.strip())[-1]
    return bool(_ASKS_DIFFERENCE.search(question))


_ASKS_CHANGE = re.compile(r"(?i)\b(?:change|impact|effect|increase|decrease|decline|drop|fall|rise|gain|loss|return|"
                          r"difference)s?\b")


@functools.lru_cache(maxsize=4096)
def asks_change(stem: str) -> bool:
    """The question asks for a change ('the percentage change in ...', 'the rate of return'), not a level: of
    'drops by $7.14, to $17.86' the change answers it, otherwise the level does."""
    question = stem.rsplit("Question:", 1)[-1]
    question = re.split(r"(?<=[.?!])\s+(?=[A-Z])", question.strip())[-1]
    return bool(_ASKS_CHANGE.search(question))


SCALED_TOKEN = re.compile(r"(?i)thousand|million|billion|trillion|lakh|crore|\d\s*(?:k|m|mm|mn|bn|b|tn|mio)\b")


def in_stem_unit(number: Number, token: str, unit: StemUnit | None) -> Number:
    """A bare number read in the unit the stem asks for: 236 → 2.36 % in basis points; 100 → 100,000,000 in
    (€ millions). Numbers that carry their own unit or scale word are left alone."""
    if unit is None:
        return number
    if unit.bps:  # '236' is 2.36 %; a bare decimal below 1 is a rate written as a fraction ('DM = 0.0867')
        if number.unit is None:
            return Number(number.value * 100 if 0 < abs(number.value) < 1 else number.value / 100, PERCENT)
        return number
    if number.unit == PERCENT or SCALED_TOKEN.search(token):
        return number
    return Number(number.value * unit.scale, number.unit or unit.currency)

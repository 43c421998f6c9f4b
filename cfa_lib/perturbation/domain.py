"""Validity domains: the region of the inputs where a template's formula is the right computation.

A formula often encodes a choice that holds only near the original values: the $30 strike is at the
money while the share trades between $27.50 and $32.50, a loss stays a loss, a discounted price stays
below the normal one. A template states each such condition (`domain`: "left < right" with a reason);
draws that break one are drawn again, and an item whose values break one is never valid.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from cfa_lib.perturbation.formula import Formula, FormulaError, parse_formula
from cfa_lib.perturbation.schema import Condition

_COMPARISON = re.compile(r"<=|>=|<|>")
_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
}


@dataclass(frozen=True)
class _Parsed:
    left: Formula
    comparison: str
    right: Formula
    text: str
    reason: str


@dataclass(frozen=True)
class Domain:
    """A template's conditions, parsed; empty when the formula holds everywhere the draws go."""

    conditions: tuple[_Parsed, ...] = ()

    @property
    def names(self) -> frozenset[str]:
        return frozenset().union(*(c.left.names | c.right.names for c in self.conditions))

    def broken(self, values: Mapping[str, float]) -> str:
        """The first condition `values` break, as "condition (reason)", or "" when all hold; a condition
        that cannot be evaluated counts as broken."""
        for condition in self.conditions:
            try:
                holds = _OPERATORS[condition.comparison](condition.left.evaluate(values),
                                                         condition.right.evaluate(values))
            except FormulaError:
                holds = False
            if not holds:
                return f"{condition.text} ({condition.reason})"
        return ""


    def bounds(self, name: str) -> tuple[float, float]:
        """The interval the conditions that bound `name` alone by a constant ("s > 505") leave it, or infinities."""
        low, high = -math.inf, math.inf
        for condition in self.conditions:
            sides = (condition.left, condition.right)
            if [side.text.strip() for side in sides].count(name) != 1 or any(
                    side.names and side.text.strip() != name for side in sides):
                continue
            constant = next(side for side in sides if not side.names).evaluate({})
            below = (condition.comparison in "<=") == (condition.left.text.strip() == name)
            low, high = (low, min(high, constant)) if below else (max(low, constant), high)
        return low, high


def parse_domain(conditions: Sequence[Condition], names: Iterable[str]) -> Domain:
    """Each condition as `formula comparison formula` over the parameter names; `FormulaError` names the
    condition that does not parse or holds no single comparison."""
    names = list(names)
    parsed = []
    for condition in conditions:
        text = condition.condition.strip()
        found = _COMPARISON.findall(text)
        if len(found) != 1:
            raise FormulaError(f"domain condition {text!r} needs exactly one of <, >, <=, >=")
        left, right = _COMPARISON.split(text)
        parsed.append(_Parsed(parse_formula(left, names), found[0], parse_formula(right, names), text,
                              condition.reason))
    return Domain(tuple(parsed))


# "Rates have since risen to 7 percent", "expects credit sales to increase to $390 million": a level stated as
# where a change ended. The word is true only while the new level stays on its side of the old one.
_CHANGED_TO = re.compile(
    r"(?i)\b(?P<word>ris(?:e|es|en|ing)|rose|increas\w*|gr[eo]w\w*|declin\w*|decreas\w*|fall\w*|fell|"
    r"drop\w*|rais\w*|reduc\w*|cut)\b[^.;:]{0,60}?\bto\s+(?:about\s+|approximately\s+)?$"
)


def stated_direction(stem: str, span: str) -> str:
    """The change word when `span` is written as the level a change ended at ("risen to 7 percent"), else ""."""
    found = ""
    start = stem.find(span)
    while start >= 0:
        before = stem[max(0, start - 100):start]
        match = _CHANGED_TO.search(before)
        if match:
            found = match.group("word")
        start = stem.find(span, start + 1)
    return found


# words of a stem that relate its numbers: a draw may break what the story says
STORY_RELATIONS = ("less likely", "more likely", "undervalued", "overvalued", "at the money", "higher than",
                   "lower than")


def stated_relation(stem: str) -> str:
    """The first relation word the stem states ("less likely", "at the money": hyphens read as spaces), or ""."""
    text = " ".join(re.sub(r"[-‐‑–]", " ", stem.lower()).split())
    return next((phrase for phrase in STORY_RELATIONS if phrase in text), "")


def never_inside(draws: int, broken: str) -> str:
    """The reason a level is never valid: none of its draws stayed in the domain (`broken`: the last one)."""
    return f"no draw in {draws} stays in the validity domain: {broken}"

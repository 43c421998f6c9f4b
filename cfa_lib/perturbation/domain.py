"""Validity domains: the region of the inputs where a template's formula is the right computation.

A formula often encodes a choice that holds only near the original values: the $30 strike is at the
money while the share trades between $27.50 and $32.50, a loss stays a loss, a discounted price stays
below the normal one. A template states each such condition (`domain`: "left < right" with a reason);
draws that break one are drawn again, and an item whose values break one is never valid.
"""

from __future__ import annotations

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


def never_inside(draws: int, broken: str) -> str:
    """The reason a level is never valid: none of its draws stayed in the domain (`broken`: the last one)."""
    return f"no draw in {draws} stays in the validity domain: {broken}"

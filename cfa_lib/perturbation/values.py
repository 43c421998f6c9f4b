"""New input values for a perturbation: which inputs may move, seeded draws, and solving for an unknown.

Draws stay plausible for an exam (a count stays a whole number, a rate moves in the steps it is written
in, an amount keeps three significant figures), and every number comes from a seeded numpy Generator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
from scipy.optimize import brentq

from cfa_lib.perturbation.formula import FormulaError
from cfa_lib.perturbation.types import ParameterInfo

FACTOR_RANGES = ((0.6, 0.9), (1.1, 1.5))
# A rate moves less than an amount: 7% becomes about 5-9%, a level an exam would still print.
RATE_FACTOR_RANGES = ((0.7, 0.9), (1.1, 1.3))


def changeable(info: ParameterInfo, all_parameters: Mapping[str, ParameterInfo]) -> bool:
    """A parameter can be changed when its span is one number in the question that no other input shares
    (`shared`: an accounting of the template found another parameter stating one of its numbers)."""
    spec = info.spec
    if info.text is None or info.occurrences == 0 or spec.derived_from.strip() or spec.kind == "other" or info.shared:
        return False
    if any(other.spec.span == spec.span for name, other in all_parameters.items() if name != spec.name):
        return False
    if spec.kind == "rate":
        return 0 < _as_fraction(info, info.text.number) < 1
    if spec.kind == "count":
        return info.text.number >= 1 and float(info.text.number).is_integer()
    return spec.value > 0


def possible(info: ParameterInfo, number: float) -> bool:
    """Whether `number`, as the span writes it, is a value the parameter's kind allows, as the draws keep it: a
    rate a fraction strictly between 0 and 1 (a correlation, a yield), a count a whole number from 1, an amount
    above 0. A level-3 option is a value of the asked input, so it must be one too (no correlation of 1.13)."""
    kind = info.spec.kind
    if kind == "rate":
        return 0 < _as_fraction(info, number) < 1
    if kind == "count":
        return number >= 1 and float(number).is_integer()
    return number > 0


def _as_fraction(info: ParameterInfo, number: float) -> float:
    """A rate written as `number` ("7" of "7%") as a decimal fraction, whatever scale the formula uses."""
    assert info.text is not None
    return number / 100 if info.text.percent else number * info.scale


def draw_number(info: ParameterInfo, rng: np.random.Generator) -> float | None:
    """A new number for the span, moved by a factor in [0.6, 0.9] or [1.1, 1.5] (a rate: [0.7, 0.9] or
    [1.1, 1.3]); None if it cannot move. The draw keeps the sign, magnitude and written precision."""
    assert info.text is not None
    ranges = RATE_FACTOR_RANGES if info.spec.kind == "rate" else FACTOR_RANGES
    low, high = ranges[int(rng.integers(len(ranges)))]
    return _written(info, info.text.number * float(rng.uniform(low, high)))


def draw_within(info: ParameterInfo, interval: tuple[float, float], rng: np.random.Generator) -> float | None:
    """A new number for the span, uniform in `interval` (as the span writes it: [1, 9] for "6%"), rounded as
    `draw_number` rounds; None when it lands on the original or where the span cannot hold it."""
    return _written(info, float(rng.uniform(*interval)))


def _written(info: ParameterInfo, proposal: float) -> float | None:
    """`proposal` as the span can write it (a count whole, a rate on its grid, an amount at three significant
    figures), or None when it cannot or equals the original."""
    assert info.text is not None
    original = info.text.number
    if info.spec.kind == "count":
        new = float(max(1, round(proposal)))
        if not info.text.writable(new):  # "five stocks" may become "seven stocks", not "21 stocks"
            return None
        if info.text.word and original > 1 and new < 2:  # "two stocks" never becomes "one stocks"
            return None
    elif info.spec.kind == "rate":  # "7%" moves in whole points ("8%"), "2%" in half points, "2.50%" in hundredths
        new = _round_rate(proposal, info.text.decimals, half=10.0**-info.text.decimals > 0.25 * abs(original))
        if not 0 < _as_fraction(info, new) < 1:
            return None
    else:  # amounts: three significant figures, never more decimals than written
        digits = 2 - int(math.floor(math.log10(abs(proposal))))
        new = float(round(proposal, min(digits, info.text.decimals)))
        if new <= 0:
            return None
    return None if new == original else new


def _round_rate(number: float, decimals: int, half: bool = False) -> float:
    """`number` on the grid a rate is written in: steps of 10**-decimals, or half of one when a whole step
    would be a jump of more than a quarter of the rate ("2%" -> "2.5%", never "3%")."""
    step = 10.0**-decimals / (2 if half else 1)
    return round(round(number / step) * step, decimals + 1)


def solve_for(
    evaluate: Callable[[Mapping[str, float]], float],
    values: Mapping[str, float],
    unknown: str,
    target: float,
    upper: float | None = None,
) -> float:
    """The value of `unknown` at which `evaluate` equals `target`: brentq on widening brackets around
    the current value (capped below `upper`, e.g. 1 for a rate given as a fraction)."""
    current = values[unknown]
    if current == 0:
        raise FormulaError(f"cannot bracket {unknown!r} around zero")

    def gap(x: float) -> float:
        return evaluate({**values, unknown: x}) - target

    for width in (0.2, 0.5, 0.9):
        low, high = sorted((current * (1 - width), current * (1 + width)))
        if upper is not None:
            high = min(high, upper * (1 - 1e-9))
        try:
            f_low, f_high = gap(low), gap(high)
        except FormulaError:
            continue
        if f_low == 0:
            return low
        if f_high == 0:
            return high
        if f_low * f_high < 0:
            try:
                return float(brentq(gap, low, high, xtol=1e-14, rtol=1e-13, maxiter=200))
            except (ValueError, RuntimeError) as error:  # no convergence
                raise FormulaError(f"solving for {unknown!r} failed: {error}") from None
    raise FormulaError(f"no sign change of the formula around {unknown} = {current:g}")

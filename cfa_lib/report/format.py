"""The one set of formatting helpers for every table and figure: percent, percentage points, intervals,
p-values, counts and excerpts. A missing value prints as a dash, never as "None" or "nan".

Never a statistic on too little: a paired difference, its interval and its test need at least `MIN_PAIRS`
pairs (`paired`), and a test at least one discordant pair (`if_testable`); below that the cell says how many
there are and what it needs (`TooFew`), never an interval of zero width, a test on nothing, or a conclusion.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cfa_lib.stats import MIN_PAIRS

DASH = "–"


@dataclass(frozen=True)
class TooFew:
    """Stands for a statistic the book does not print: how many there are, and what it needs."""

    n: int
    what: str = "pairs"
    needed: int = MIN_PAIRS

    def __str__(self) -> str:
        if self.what == "discordant pairs":
            return "no discordant pair: nothing to test"
        return f"{self.n} {self.what}: too few (needs {self.needed})"


def paired(value: Any, n: int | None) -> Any:
    """A paired statistic (a difference, its interval, its test) on `n` pairs, or `TooFew` below `MIN_PAIRS`."""
    return TooFew(n or 0) if (n or 0) < MIN_PAIRS else value


def if_testable(value: Any, n: int | None, b: int, c: int) -> Any:
    """McNemar's statistic or p on `n` pairs with `b`, `c` discordant: `TooFew` below `MIN_PAIRS` pairs or with
    no discordant pair."""
    if b + c == 0:
        return TooFew(0, "discordant pairs", 1)
    return paired(value, n)


def _shown(formatter: Callable[..., str]) -> Callable[..., str]:
    """A formatter that prints a `TooFew` as its sentence."""
    @functools.wraps(formatter)
    def format_or_say(value: Any, *args: Any, **kwargs: Any) -> str:
        return str(value) if isinstance(value, TooFew) else formatter(value, *args, **kwargs)
    return format_or_say


def percent_value(value: float | None) -> float:
    """A fraction as a percent number for an axis (NaN when missing, so a bar is simply not drawn)."""
    return math.nan if value is None else 100 * float(value)


@_shown
def pct(value: Any, digits: int = 1) -> str:
    """A fraction as a percent: 0.8256 → "82.6%"."""
    return DASH if value is None else f"{value:.{digits}%}"


@_shown
def pp(value: Any) -> str:
    """A difference of fractions in signed percentage points: 0.0194 → "+1.9"."""
    return DASH if value is None else f"{100 * value:+.1f}"


@_shown
def ci(value: Sequence[float] | None) -> str:
    """A 95% interval of fractions in percent, without the signs: "[80.1, 84.8]"."""
    return DASH if value is None else f"[{100 * value[0]:.1f}, {100 * value[1]:.1f}]"


@_shown
def pct_ci(value: Any, interval: Sequence[float] | None) -> str:
    """A fraction with its interval, all in percent: "24.5% [22.0%, 27.2%]"."""
    if value is None:
        return DASH
    return f"{pct(value)} [{pct(interval[0])}, {pct(interval[1])}]" if interval is not None else pct(value)


@_shown
def count(value: Any) -> str:
    return DASH if value is None else str(int(value))


@_shown
def text(value: Any) -> str:
    return DASH if value is None else str(value)


@_shown
def count_pct(value: tuple[Any, Any] | None) -> str:
    """A count with its share: (147, 0.1424) → "147 (14.2%)"."""
    return DASH if value is None else f"{int(value[0])} ({pct(value[1])})"


@_shown
def decimal(value: Any, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


@_shown
def significant(value: Any, digits: int = 3) -> str:
    """Three significant digits, as a p-value in running text: "0.251", "3.3e-07"."""
    return DASH if value is None else f"{value:.{digits}g}"


def _missing(p: Any) -> bool:
    return p is None or (isinstance(p, float) and math.isnan(p))


@_shown
def p_cell(p: Any) -> str:
    """A p-value for a table cell: three decimals, or an upper bound below 0.001."""
    if _missing(p):
        return DASH
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def format_p(p: float | None) -> str:
    """A p-value as a paper prints it: three significant digits, or an upper bound below 0.001."""
    if _missing(p):
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {significant(p)}"


def excerpt(text: str | None, length: int, from_end: bool = False) -> str:
    """Text for a table cell: whitespace collapsed (tables show newlines as literal "\\n"), cut to length."""
    flat = " ".join((text or "").split())
    if len(flat) <= length:
        return flat
    return "…" + flat[-length:] if from_end else flat[:length] + "…"

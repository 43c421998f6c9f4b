"""The one set of formatting helpers for every table and figure: percent, percentage points, intervals,
p-values, counts and excerpts. A missing value prints as a dash, never as "None" or "nan"."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

DASH = "–"


def percent_value(value: float | None) -> float:
    """A fraction as a percent number for an axis (NaN when missing, so a bar is simply not drawn)."""
    return math.nan if value is None else 100 * float(value)


def pct(value: Any, digits: int = 1) -> str:
    """A fraction as a percent: 0.8256 → "82.6%"."""
    return DASH if value is None else f"{value:.{digits}%}"


def pp(value: Any) -> str:
    """A difference of fractions in signed percentage points: 0.0194 → "+1.9"."""
    return DASH if value is None else f"{100 * value:+.1f}"


def ci(value: Sequence[float] | None) -> str:
    """A 95% interval of fractions in percent, without the signs: "[80.1, 84.8]"."""
    return DASH if value is None else f"[{100 * value[0]:.1f}, {100 * value[1]:.1f}]"


def pct_ci(value: Any, interval: Sequence[float] | None) -> str:
    """A fraction with its interval, all in percent: "24.5% [22.0%, 27.2%]"."""
    if value is None:
        return DASH
    return f"{pct(value)} [{pct(interval[0])}, {pct(interval[1])}]" if interval is not None else pct(value)


def count(value: Any) -> str:
    return DASH if value is None else str(int(value))


def text(value: Any) -> str:
    return DASH if value is None else str(value)


def count_pct(value: tuple[Any, Any] | None) -> str:
    """A count with its share: (147, 0.1424) → "147 (14.2%)"."""
    return DASH if value is None else f"{int(value[0])} ({pct(value[1])})"


def decimal(value: Any, digits: int = 3) -> str:
    return DASH if value is None else f"{value:.{digits}f}"


def significant(value: Any, digits: int = 3) -> str:
    """Three significant digits, as a p-value in running text: "0.251", "3.3e-07"."""
    return DASH if value is None else f"{value:.{digits}g}"


def _missing(p: Any) -> bool:
    return p is None or (isinstance(p, float) and math.isnan(p))


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

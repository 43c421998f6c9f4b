"""Engine settings read from CFA_* environment variables, failing with the variable's name and what it accepts.

Every engine setting resolves the same way: the argument given, else its environment variable, else the
default; these helpers are the middle step.
"""

from __future__ import annotations

import os
from typing import Any


def flag_from_env(name: str) -> bool | None:
    """`1`/`0` (or true/false, yes/no, on/off); None when the variable is unset or empty."""
    value = (os.environ.get(name) or "").strip().lower()
    if value == "":
        return None
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"Environment variable {name}={value!r} is not valid: accepted values are 1 or 0.")


def positive_from_env(name: str, kind: type[int] | type[float]) -> Any:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        number = kind(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise ValueError(f"Environment variable {name}={value!r} is not valid: accepted values are a positive "
                         f"{'integer' if kind is int else 'number'}.")
    return number

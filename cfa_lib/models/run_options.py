"""How a batch of requests is sent, resolved in one order for every engine setting.

An argument given by the caller wins; else the client's default (get_client's arguments); else the CFA_*
environment variable; else the built-in default. None always means "not given". The checks here are the
only ones: notebook parameters (cfa_lib.params) call them too, so a bad value reads the same everywhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from cfa_lib.checks import check_optional_flag, invalid, optional_positive_int

from .env import flag_from_env, positive_from_env

DEFAULT_MAX_CONCURRENCY = 64  # a ceiling: the adaptive limit starts at 16 and grows while answers are clean
BatchFallback = Literal["batch", "live"]
OPTION_NAMES = ("max_concurrency", "batch", "batch_fallback", "max_cost_usd", "retry_failed")


@dataclass(frozen=True)
class RunOptions:
    """How complete_many sends: keyword arguments, else get_client's, else the CFA_* environment."""

    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    batch: bool = False
    batch_fallback: BatchFallback = "batch"
    max_cost_usd: float | None = None
    retry_failed: bool = False  # send cached deterministic failures again


def check_concurrency(value: Any, name: str = "max_concurrency") -> int | None:
    """None (not given) or a positive integer."""
    return optional_positive_int(value, name, "None or a positive integer, such as 8")


def check_cost_cap(value: Any, name: str = "max_cost_usd") -> float | None:
    """None (no cap) or a positive, finite number of US dollars."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise invalid(name, value, "None or a positive number of US dollars, such as 5.0")
    return float(value)


def check_fallback(value: Any, name: str = "batch_fallback") -> BatchFallback | None:
    if value is None or value in ("batch", "live"):
        return value
    raise invalid(name, value, "'batch' or 'live'")


def _flag(value: Any, name: str, variable: str) -> bool:
    """True/False given, else the variable (1/0), else False."""
    given = check_optional_flag(value, name)
    return given if given is not None else bool(flag_from_env(variable))


def resolve_options(given: dict[str, Any], defaults: dict[str, Any]) -> RunOptions:
    """`given` (the call's arguments), else `defaults` (the client's), else CFA_MAX_CONCURRENCY, CFA_BATCH,
    CFA_BATCH_FALLBACK, CFA_MAX_COST_USD, CFA_RETRY_FAILED, else 64, live, "batch", no cap, failures kept."""
    pick = {name: given.get(name) if given.get(name) is not None else defaults.get(name) for name in OPTION_NAMES}
    concurrency = check_concurrency(pick["max_concurrency"])
    if concurrency is None:
        concurrency = positive_from_env("CFA_MAX_CONCURRENCY", int)
    fallback = check_fallback(pick["batch_fallback"])
    if fallback is None:
        fallback = check_fallback(os.environ.get("CFA_BATCH_FALLBACK") or None, "CFA_BATCH_FALLBACK")
    cap = check_cost_cap(pick["max_cost_usd"])
    if cap is None:
        cap = positive_from_env("CFA_MAX_COST_USD", float)
    return RunOptions(
        max_concurrency=concurrency or DEFAULT_MAX_CONCURRENCY,
        batch=_flag(pick["batch"], "batch", "CFA_BATCH"),
        batch_fallback=fallback or "batch",
        max_cost_usd=float(cap) if cap is not None else None,
        retry_failed=_flag(pick["retry_failed"], "retry_failed", "CFA_RETRY_FAILED"),
    )

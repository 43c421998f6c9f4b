"""Agreement between two sets of labels on the same items: rate, Cohen's kappa, Scott's pi, intervals.

Cohen's kappa takes each rater's own label shares as chance; Scott's pi (Scott 1955; Fleiss' kappa for
two raters) pools them, which is what Chandak et al. (2025) report before trusting a matcher. Both are
undefined when the two raters use a single label between them (chance agreement is 1): they are None
then, never 1.0. Intervals are percentile bootstraps over items (seeded); a resample where the
statistic is undefined is left out (too many of them and there is no interval), and under ten compared
items there is none either: their bootstrap is degenerate ([0.00, 0.00] on four items).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cfa_lib.stats import cohen_kappa, wilson_interval

BOOTSTRAP = 2000
MIN_FOR_INTERVAL = 10  # fewer compared items: a bootstrap of kappa or pi is degenerate, so no interval


def _check_pairs(a: Sequence[Hashable], b: Sequence[Hashable]) -> None:
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} labels but b has {len(b)}: they must label the same items")


def kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa, or None when it is undefined (no items, or one label used throughout)."""
    _check_pairs(a, b)
    if not a or len(set(a) | set(b)) < 2:
        return None
    return cohen_kappa(a, b)


def scott_pi(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Scott's pi (Fleiss' kappa of two raters), from the same table formula the bootstrap uses; None when
    undefined."""
    _check_pairs(a, b)
    if not a or len(set(a) | set(b)) < 2:
        return None
    value = float(table_statistics(_tables(a, b, np.arange(len(a))[None, :]).astype(float))[1][0])
    return None if np.isnan(value) else value


def _tables(a: Sequence[Hashable], b: Sequence[Hashable], picks: np.ndarray) -> np.ndarray:
    """One square contingency table (rater a's label by rater b's) per row of `picks` (indices of items)."""
    codes = {label: i for i, label in enumerate(sorted(set(a) | set(b), key=repr))}
    k = len(codes)
    cells = np.array([codes[x] * k + codes[y] for x, y in zip(a, b, strict=True)])
    chosen = cells[picks] + np.arange(len(picks))[:, None] * k * k
    return np.bincount(chosen.ravel(), minlength=len(picks) * k * k).reshape(len(picks), k, k)


def table_statistics(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa and Scott's pi of a stack of square contingency tables (NaN where undefined)."""
    n = tables.sum(axis=(-2, -1))
    observed = np.trace(tables, axis1=-2, axis2=-1) / n
    rows, cols = tables.sum(axis=-1) / n[..., None], tables.sum(axis=-2) / n[..., None]
    cohen_chance = (rows * cols).sum(axis=-1)
    scott_chance = (((rows + cols) / 2) ** 2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa_ = np.where(cohen_chance < 1, (observed - cohen_chance) / (1 - cohen_chance), np.nan)
        pi_ = np.where(scott_chance < 1, (observed - scott_chance) / (1 - scott_chance), np.nan)
    return kappa_, pi_


def bootstrap_intervals(a: Sequence[Hashable], b: Sequence[Hashable], confidence: float = 0.95,
                        resamples: int = BOOTSTRAP, seed: int = 0
                        ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """Percentile bootstrap intervals over items of (kappa, pi); None with fewer than MIN_FOR_INTERVAL items
    or where fewer than half the resamples define the statistic."""
    _check_pairs(a, b)
    if len(a) < MIN_FOR_INTERVAL:
        return None, None
    picks = np.random.default_rng(seed).integers(0, len(a), (resamples, len(a)))
    tables = _tables(a, b, picks)
    tail = (1 - confidence) / 2 * 100
    out = []
    for values in table_statistics(tables.astype(float)):
        kept = values[~np.isnan(values)]
        out.append(None if len(kept) < resamples / 2 else
                   tuple(float(v) for v in np.percentile(kept, [tail, 100 - tail])))
    return out[0], out[1]


@dataclass(frozen=True)
class Agreement:
    """How two raters agree on the items both labelled (a "cannot tell" is counted apart, not compared)."""

    n: int  # items compared
    cannot_tell: int  # items left out because a rater could not tell
    agree: int
    rate: float | None
    rate_ci: tuple[float, float] | None  # Wilson
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    pi: float | None
    pi_ci: tuple[float, float] | None


def agreement(a: Sequence[Hashable], b: Sequence[Hashable], cannot_tell: int = 0, confidence: float = 0.95,
              seed: int = 0) -> Agreement:
    """Agreement rate (Wilson interval), Cohen's kappa and Scott's pi (bootstrap intervals)."""
    _check_pairs(a, b)
    agree = sum(x == y for x, y in zip(a, b, strict=True))
    n = len(a)
    k, pi = kappa(a, b), scott_pi(a, b)
    k_ci, pi_ci = bootstrap_intervals(a, b, confidence, seed=seed)
    return Agreement(n, cannot_tell, agree, agree / n if n else None,
                     wilson_interval(agree, n, confidence) if n else None,
                     k, k_ci if k is not None else None, pi, pi_ci if pi is not None else None)


def confusion(toolkit: Sequence[Hashable], person: Sequence[Hashable], labels: Sequence[Hashable]) -> pd.DataFrame:
    """Counts of (toolkit verdict, person's verdict), every allowed label shown even when empty."""
    _check_pairs(toolkit, person)
    table = pd.crosstab(pd.Categorical(list(toolkit), categories=list(labels)),
                        pd.Categorical(list(person), categories=list(labels)), dropna=False)
    table.index.name, table.columns.name = "toolkit", "person"
    return table

"""Paired statistics for with-options vs without-options outcomes, built on statsmodels and scipy.

The same questions are answered in two formats, so every comparison is paired: McNemar's test on
the discordant pairs, a paired bootstrap for the accuracy difference, Wilson intervals for single
accuracies, Cohen's kappa for agreement between two graders, and the judge-corrected accuracy of
Lee et al. (2025) with its delta-method interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.proportion import proportion_confint

# Fewer paired questions than this: no paired difference, interval or test is estimated or printed (the
# report says how many there are and what it needs), and a model is not compared or ranked.
MIN_PAIRS = 20

__all__ = [
    "McNemarResult",
    "PairedOutcomes",
    "cohen_kappa",
    "lee_interval",
    "lee_theta",
    "mcnemar",
    "paired_bootstrap_diff",
    "paired_outcomes",
    "wilson_interval",
]

ALPHA = 0.05
EXACT_BELOW = 25  # discordant pairs under which the chi-square approximation is not trusted


@dataclass(frozen=True)
class McNemarResult:
    b: int  # right with options, wrong without
    c: int  # wrong with options, right without
    chi2: float  # continuity-corrected (|b − c| − 1)² / (b + c); 0.0 when b + c == 0
    p_value: float  # chi-square, 1 degree of freedom
    p_exact: float  # two-sided exact binomial on the b + c discordant pairs
    significant: bool  # at 0.05: on p_exact when b + c < 25, else on p_value

    @property
    def n_discordant(self) -> int:
        return self.b + self.c

    @property
    def test_used(self) -> str:
        return "exact binomial" if self.n_discordant < EXACT_BELOW else "chi-square (continuity-corrected)"

    def to_dict(self) -> dict:
        return {**asdict(self), "n_discordant": self.n_discordant, "test_used": self.test_used}


def _is_int(value: object) -> bool:
    """An int or a numpy integer, but not a bool (True would silently count as 1)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def mcnemar(b: int, c: int) -> McNemarResult:
    """McNemar's test from the two discordant counts (b=21, c=9 -> chi2 4.0333, p 0.0446)."""
    for name, value in (("b", b), ("c", c)):
        if not _is_int(value) or value < 0:
            raise ValueError(f"{name}={value!r} must be a non-negative integer count")
    b, c = int(b), int(c)
    table = [[0, b], [c, 0]]
    p_exact = float(sm_mcnemar(table, exact=True).pvalue)
    if b + c == 0:
        chi2, p_value = 0.0, 1.0
    else:
        result = sm_mcnemar(table, exact=False, correction=True)
        chi2, p_value = float(result.statistic), float(result.pvalue)
    p_decisive = p_exact if b + c < EXACT_BELOW else p_value
    return McNemarResult(b, c, chi2, p_value, p_exact, bool(p_decisive < ALPHA))


@dataclass(frozen=True)
class PairedOutcomes:
    a: int  # right in both formats
    b: int  # right with options, wrong without
    c: int  # wrong with options, right without
    d: int  # wrong in both
    table: pd.DataFrame
    n: int

    def mcnemar(self) -> McNemarResult:
        return mcnemar(self.b, self.c)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "c": self.c, "d": self.d, "n": self.n}


def _as_bools(values: Sequence, name: str) -> np.ndarray:
    array = np.asarray(list(values), dtype=object)
    bad = [
        v for v in array if not (isinstance(v, bool | np.bool_) or (isinstance(v, int | np.integer) and v in (0, 1)))
    ]
    if bad:
        raise ValueError(f"{name} must hold booleans (or 0/1); found {bad[0]!r}")
    return array.astype(bool)


def paired_outcomes(with_options: Sequence[bool], without_options: Sequence[bool]) -> PairedOutcomes:
    """The 2×2 table of paired outcomes (rows: with options, columns: without options)."""
    x = _as_bools(with_options, "with_options")
    y = _as_bools(without_options, "without_options")
    if len(x) != len(y):
        raise ValueError(f"with_options has {len(x)} outcomes but without_options has {len(y)}: they must be paired")
    a, b = int(np.sum(x & y)), int(np.sum(x & ~y))
    c, d = int(np.sum(~x & y)), int(np.sum(~x & ~y))
    table = pd.DataFrame(
        [[a, b], [c, d]],
        index=pd.Index(["correct", "wrong"], name="with options"),
        columns=pd.Index(["correct", "wrong"], name="without options"),
    )
    return PairedOutcomes(a, b, c, d, table, len(x))


def _check_confidence(confidence: float) -> None:
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise ValueError(f"confidence={confidence!r} must lie strictly between 0 and 1")


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (well-behaved near 0 and 1, unlike the Wald interval)."""
    _check_confidence(confidence)
    if not _is_int(n) or n < 1:
        raise ValueError(f"n={n!r} must be a positive integer")
    if not _is_int(successes) or not 0 <= successes <= n:
        raise ValueError(f"successes={successes!r} must be an integer between 0 and n={n}")
    low, high = proportion_confint(int(successes), int(n), alpha=1 - confidence, method="wilson")
    # the exact bounds at 0 and n: float noise (5.6e-17 for 0 of 3) would put the interval beside its point
    return (0.0 if successes == 0 else float(low)), (1.0 if successes == n else float(high))


def paired_bootstrap_diff(
    x: Sequence[float],
    y: Sequence[float],
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """(mean(x) − mean(y), low, high): percentile bootstrap resampling questions, so pairs stay together.

    Seeded, hence reproducible. Percentile rather than BCa because 0/1 differences are often
    degenerate (all equal), where BCa is undefined.
    """
    _check_confidence(confidence)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples={n_resamples!r} must be a positive integer")
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.ndim != 1 or xs.shape != ys.shape:
        raise ValueError(f"x and y must be paired 1-D sequences of equal length; got {xs.shape} and {ys.shape}")
    if len(xs) < 2:
        raise ValueError(f"x and y need at least 2 pairs for a bootstrap; got {len(xs)}")
    diffs = xs - ys
    estimate = float(diffs.mean())
    if np.all(diffs == diffs[0]):  # nothing to resample: every replicate equals the estimate
        return estimate, estimate, estimate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        result = sps.bootstrap(
            (diffs,),
            np.mean,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return estimate, float(result.confidence_interval.low), float(result.confidence_interval.high)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels (any hashable labels, e.g. verdicts or levels).

    When both raters use one single label throughout, agreement is perfect but kappa is 0/0; we
    return 1.0 in that case.
    """
    labels_a, labels_b = list(a), list(b)
    if len(labels_a) != len(labels_b):
        raise ValueError(f"a has {len(labels_a)} labels but b has {len(labels_b)}: they must rate the same items")
    if not labels_a:
        raise ValueError("a and b are empty: nothing to compare")
    categories = sorted(set(labels_a) | set(labels_b), key=repr)
    table = pd.crosstab(
        pd.Categorical(labels_a, categories=categories),
        pd.Categorical(labels_b, categories=categories),
        dropna=False,
    ).to_numpy()
    if len(categories) == 1:
        return 1.0
    with np.errstate(divide="ignore", invalid="ignore"):  # its z statistic divides by 0 on tiny tables
        return float(sm_cohens_kappa(table).kappa)


def cohen_kappa_ci(a: Sequence[Hashable], b: Sequence[Hashable], confidence: float = 0.95
                   ) -> tuple[float, float] | None:
    """The asymptotic interval of Cohen's kappa (statsmodels), or None when it is undefined (one label)."""
    _check_confidence(confidence)
    labels_a, labels_b = list(a), list(b)
    categories = sorted(set(labels_a) | set(labels_b), key=repr)
    if len(categories) < 2 or len(labels_a) != len(labels_b) or not labels_a:
        return None
    table = pd.crosstab(pd.Categorical(labels_a, categories=categories),
                        pd.Categorical(labels_b, categories=categories), dropna=False).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        result = sm_cohens_kappa(table)
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
    low, high = float(result.kappa - z * result.std_kappa), float(result.kappa + z * result.std_kappa)
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:  # a degenerate table has no interval
        return None
    return max(low, -1.0), min(high, 1.0)


def lee_theta(p: float, q0: float, q1: float) -> float:
    """Lee et al.'s (2025) judge-corrected accuracy (p + q0 - 1) / (q0 + q1 - 1): p the share a judge calls
    correct, q0 its specificity, q1 its sensitivity; the judge must be better than chance (q0 + q1 > 1)."""
    if q0 + q1 <= 1:
        raise ValueError(f"q0 + q1 = {q0 + q1:g} is not above 1: the judge is no better than chance, "
                         "so its verdicts cannot be corrected.")
    return (p + q0 - 1) / (q0 + q1 - 1)


def lee_interval(p: float, n: int, q0: float, m0: int, q1: float, m1: int, confidence: float = 0.95
                 ) -> tuple[float, float]:
    """Lee et al.'s (2025) delta-method interval for theta, clipped to [0, 1]: the variance covers the test
    sample (n verdicts) and the calibration sample (m0 truly incorrect, m1 truly correct items):
    [p(1-p)/n + (1-theta)^2 q0(1-q0)/m0 + theta^2 q1(1-q1)/m1] / (q0 + q1 - 1)^2."""
    _check_confidence(confidence)
    if min(n, m0, m1) < 1:
        raise ValueError(f"n={n}, m0={m0}, m1={m1}: every sample needs at least one item.")
    theta = lee_theta(p, q0, q1)
    variance = (p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0 + theta ** 2 * q1 * (1 - q1) / m1) \
        / (q0 + q1 - 1) ** 2
    half = float(scipy_stats.norm.ppf(0.5 + confidence / 2)) * variance ** 0.5
    return max(0.0, theta - half), min(1.0, theta + half)

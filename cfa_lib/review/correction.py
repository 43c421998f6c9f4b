"""Judge-based accuracy corrected for the judge's errors measured against a person (Lee et al. 2025).

Lee et al. (2025, "How to correctly report LLM-as-a-judge evaluations") correct the share p the judge
calls correct with its specificity q0 and sensitivity q1, measured on human-labelled items:
theta = (p + q0 - 1) / (q0 + q1 - 1). The delta method gives the variance from both samples (the test
sample of n verdicts, and the m0 truly incorrect and m1 truly correct calibration items):

    Var(theta) = [p(1-p)/n + (1-theta)^2 q0(1-q0)/m0 + theta^2 q1(1-q1)/m1] / (q0 + q1 - 1)^2

(`cfa_lib.stats.lee_theta`, `lee_interval`; the judge's calibration on the key uses the same theta).
Our review sample is stratified by the judge's verdict, so its items are not a random sample of the truly
correct and incorrect ones, and q0, q1 cannot be read off it directly. `stratified_theta` therefore estimates
theta = sum_s w_s a_s over the verdict strata s (w_s the share of the run's judged items in s, a_s the share
the person calls correct among the reviewed items of s), which is Lee's theta with q0, q1 weighted back to the
run (the tests check the identity), and its delta-method variance covers both samples: the strata's shares in
the run (multinomial, N items) and each stratum's reviewed share (binomial, n_s items). Each a_s enters the
variance Agresti-Coull adjusted (z^2/2 added to each side), so a stratum where every reviewed verdict held
still carries its uncertainty. The interval is clipped to [0, 1]; a stratum with no usable label leaves theta
undefined.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from cfa_lib.stats import lee_interval, lee_theta

__all__ = ["Correction", "Stratum", "lee_interval", "lee_theta", "stratified_theta"]


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence!r} is not valid: it must lie strictly between 0 and 1.")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _clip(low: float, high: float) -> tuple[float, float]:
    return max(0.0, low), min(1.0, high)


@dataclass(frozen=True)
class Stratum:
    """One verdict stratum of the judged items: its size in the run and the person's labels of its sample."""

    name: str
    judge_correct: bool  # the judge's (binary) verdict on the stratum
    size: int  # items of the run in this stratum
    labels: tuple[bool, ...]  # the person's verdicts (True: correct) on its reviewed items, cannot-tell left out


@dataclass(frozen=True)
class Correction:
    """The judge's share called correct, corrected with the person's labels."""

    n: int  # judged items of the run
    reviewed: int  # labels used
    p: float  # share the judge calls correct
    theta: float | None  # corrected share; None when a stratum has no usable label
    ci: tuple[float, float] | None
    q0: float | None  # specificity, weighted back to the run
    q1: float | None  # sensitivity, weighted back to the run
    missing: tuple[str, ...] = ()  # strata of the run without a usable label


def stratified_theta(strata: Sequence[Stratum], confidence: float = 0.95) -> Correction:
    """theta = sum_s w_s a_s with a delta-method interval covering the run's and the review's samples."""
    total = sum(s.size for s in strata)
    if total < 1:
        raise ValueError("no judged items: there is nothing to correct.")
    p = sum(s.size for s in strata if s.judge_correct) / total
    reviewed = sum(len(s.labels) for s in strata)
    missing = tuple(s.name for s in strata if s.size and not s.labels)
    if missing:
        return Correction(total, reviewed, p, None, None, None, None, missing)
    z = _z(confidence)
    used = [s for s in strata if s.size]
    weights = [s.size / total for s in used]
    shares = [sum(s.labels) / len(s.labels) for s in used]
    theta = sum(w * a for w, a in zip(weights, shares, strict=True))
    adjusted = [(sum(s.labels) + z * z / 2) / (len(s.labels) + z * z) for s in used]
    review_var = sum(w * w * a * (1 - a) / (len(s.labels) + z * z)
                     for w, a, s in zip(weights, adjusted, used, strict=True))
    run_var = (sum(w * a * a for w, a in zip(weights, shares, strict=True)) - theta ** 2) / total
    half = z * (review_var + max(run_var, 0.0)) ** 0.5
    true_pos = sum(w * a for w, a, s in zip(weights, shares, used, strict=True) if s.judge_correct)
    true_neg = sum(w * (1 - a) for w, a, s in zip(weights, shares, used, strict=True) if not s.judge_correct)
    q1 = true_pos / theta if theta > 0 else None
    q0 = true_neg / (1 - theta) if theta < 1 else None
    return Correction(total, reviewed, p, theta, _clip(theta - half, theta + half), q0, q1)

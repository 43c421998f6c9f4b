"""theta (Lee et al. 2025) and its interval, by hand and against a bootstrap of both samples."""

from __future__ import annotations

import numpy as np
import pytest

from cfa_lib.review.correction import Stratum, lee_interval, lee_theta, stratified_theta


def test_theta_by_hand():
    # p = .7, specificity .8, sensitivity .9: theta = (.7 + .8 - 1) / (.8 + .9 - 1) = .5 / .7
    assert lee_theta(0.7, 0.8, 0.9) == pytest.approx(0.5 / 0.7)


def test_delta_interval_by_hand():
    # Var = [.21/1000 + (2/7)^2 * .16/100 + (5/7)^2 * .09/100] / .49 = .0016322; half-width 1.95996 * .040401
    low, high = lee_interval(0.7, 1000, 0.8, 100, 0.9, 100)
    assert low == pytest.approx(0.635101, abs=1e-5)
    assert high == pytest.approx(0.793471, abs=1e-5)


def test_delta_interval_matches_a_bootstrap_of_both_samples():
    rng = np.random.default_rng(0)
    p, q0, q1, n, m0, m1 = 0.7, 0.8, 0.9, 1000, 100, 100
    draws = [lee_theta(rng.binomial(n, p) / n, rng.binomial(m0, q0) / m0, rng.binomial(m1, q1) / m1)
             for _ in range(4000)]
    low, high = lee_interval(p, n, q0, m0, q1, m1)
    spread = np.percentile(draws, [2.5, 97.5])
    assert spread[0] == pytest.approx(low, abs=0.01)
    assert spread[1] == pytest.approx(high, abs=0.01)


def test_a_judge_no_better_than_chance_is_refused():
    with pytest.raises(ValueError, match="no better than chance"):
        lee_theta(0.5, 0.5, 0.5)


def test_stratified_theta_is_lees_theta_weighted_back():
    # 700 judged correct, 9 of 10 reviewed truly correct; 300 judged incorrect, 2 of 10 truly correct.
    strata = [Stratum("judge/correct", True, 700, (True,) * 9 + (False,)),
              Stratum("judge/incorrect", False, 300, (True,) * 2 + (False,) * 8)]
    result = stratified_theta(strata)
    assert result.theta == pytest.approx(0.7 * 0.9 + 0.3 * 0.2)  # .69
    assert result.q1 == pytest.approx(0.63 / 0.69)
    assert result.q0 == pytest.approx(0.24 / 0.31)
    assert lee_theta(result.p, result.q0, result.q1) == pytest.approx(result.theta)
    assert result.ci[0] < 0.69 < result.ci[1]


def test_stratified_interval_agrees_with_a_two_sample_bootstrap():
    strata = [Stratum("a", True, 700, (True,) * 36 + (False,) * 4),
              Stratum("b", False, 300, (True,) * 8 + (False,) * 32)]
    rng = np.random.default_rng(1)
    draws = []
    for _ in range(4000):
        w = rng.binomial(1000, 0.7) / 1000
        a1 = rng.binomial(40, 0.9) / 40
        a0 = rng.binomial(40, 0.2) / 40
        draws.append(w * a1 + (1 - w) * a0)
    low, high = stratified_theta(strata).ci
    spread = np.percentile(draws, [2.5, 97.5])
    assert spread[0] == pytest.approx(low, abs=0.015)
    assert spread[1] == pytest.approx(high, abs=0.015)


def test_a_stratum_without_labels_leaves_theta_undefined():
    result = stratified_theta([Stratum("judge/correct", True, 10, (True,)), Stratum("judge/incorrect", False, 5, ())])
    assert result.theta is None and result.missing == ("judge/incorrect",)

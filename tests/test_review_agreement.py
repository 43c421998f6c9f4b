"""Agreement figures checked by hand: Cohen's kappa and Scott's pi differ when the raters' shares do."""

from __future__ import annotations

import numpy as np
import pytest

from cfa_lib.review.agreement import agreement, confusion, kappa, scott_pi, table_statistics

TOOLKIT = ["c"] * 6 + ["i"] * 4
PERSON = ["c"] * 4 + ["i"] * 6


def test_kappa_and_pi_by_hand():
    # 8 of 10 agree. Cohen: chance = .6*.4 + .4*.6 = .48, kappa = (.8 - .48) / .52 = .6154.
    # Scott: pooled share of c = 10/20 = .5, chance = .5, pi = (.8 - .5) / .5 = .6.
    assert kappa(TOOLKIT, PERSON) == pytest.approx(0.32 / 0.52)
    assert scott_pi(TOOLKIT, PERSON) == pytest.approx(0.6)


def test_undefined_when_one_label_is_used_throughout():
    assert kappa(["c"] * 5, ["c"] * 5) is None
    assert scott_pi(["c"] * 5, ["c"] * 5) is None


def test_agreement_carries_intervals_and_the_cannot_tell_count():
    result = agreement(TOOLKIT, PERSON, cannot_tell=3)
    assert (result.n, result.agree, result.cannot_tell, result.rate) == (10, 8, 3, 0.8)
    assert result.kappa_ci is not None and result.kappa_ci[0] < result.kappa < result.kappa_ci[1]
    assert result.pi_ci is not None and result.pi_ci[0] < 0.6 < result.pi_ci[1]


def test_confusion_shows_every_label():
    table = confusion(TOOLKIT, PERSON, ["c", "i", "x"])
    assert table.loc["c", "c"] == 4 and table.loc["c", "i"] == 2 and table.loc["i", "i"] == 4
    assert table.loc["x"].sum() == 0


def test_the_bootstrap_formula_is_the_point_estimate():
    # rows: toolkit c, i; columns: person c, i (the table of TOOLKIT against PERSON)
    k, pi = table_statistics(np.array([[4.0, 2.0], [0.0, 4.0]]))
    assert k == pytest.approx(kappa(TOOLKIT, PERSON)) and pi == pytest.approx(scott_pi(TOOLKIT, PERSON))


def test_no_interval_from_a_handful_of_items():
    result = agreement(["c", "i", "c", "i"], ["c", "c", "c", "i"])
    assert result.kappa == pytest.approx(0.5) and result.kappa_ci is None and result.pi_ci is None
    assert result.rate_ci is not None  # the Wilson interval of the rate holds for any n

"""cfa_lib.stats against published and textbook values."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from cfa_lib import stats
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.stats import cohen_kappa, mcnemar, paired_bootstrap_diff, paired_outcomes, wilson_interval


def test_mcnemar_published_case():
    """The study's paper: b=21, c=9, chi-squared=4.033, p=0.045."""
    result = mcnemar(21, 9)
    assert result.chi2 == pytest.approx(4.0333, abs=1e-4)
    assert result.p_value == pytest.approx(0.0446, abs=1e-4)
    assert result.p_exact == pytest.approx(0.042774, abs=1e-6)
    assert result.significant  # 30 discordant pairs: decided on the chi-square p
    assert result.to_dict() == {
        "b": 21, "c": 9, "chi2": result.chi2, "p_value": result.p_value, "p_exact": result.p_exact,
        "significant": True, "n_discordant": 30, "test_used": "chi-square (continuity-corrected)",
    }  # fmt: skip


def test_mcnemar_reference_run_gpt_4o_mini():
    result = mcnemar(147, 127)
    assert result.chi2 == pytest.approx(1.3175, abs=1e-4)
    assert result.p_value == pytest.approx(0.251, abs=1e-3)
    assert not result.significant


def test_mcnemar_matches_the_reference_run_summary():
    path = REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json"
    run = json.loads(path.read_text(encoding="utf-8"))
    rows = run["results"]
    outcomes = paired_outcomes([r["correct_with_options"] for r in rows], [r["correct_without_options"] for r in rows])
    published = run["summary"]["mcnemar_test"]
    result = outcomes.mcnemar()
    assert (outcomes.b, outcomes.c, outcomes.n) == (published["b"], published["c"], 1032)
    assert round(result.chi2, 4) == published["chi2"] and round(result.p_value, 3) == published["p_value"]


def test_mcnemar_no_discordant_pairs():
    result = mcnemar(0, 0)
    assert (result.chi2, result.p_value, result.p_exact, result.significant) == (0.0, 1.0, 1.0, False)


def test_mcnemar_small_samples_use_the_exact_test():
    result = mcnemar(6, 0)  # chi-square p 0.041 but exact p 0.031; both < 0.05
    assert result.p_exact == pytest.approx(2 * 0.5**6)
    assert result.test_used == "exact binomial" and result.significant
    result = mcnemar(5, 0)  # exact p 0.0625: not significant
    assert result.p_exact == pytest.approx(0.0625) and not result.significant
    result = mcnemar(8, 2)  # chi-square p 0.1138, exact p 0.1094
    assert result.chi2 == pytest.approx(2.5) and result.p_exact == pytest.approx(0.109375)


@pytest.mark.parametrize(("b", "c"), [(-1, 3), (2.5, 1), (True, 1), (1, "2")])
def test_mcnemar_rejects_bad_counts(b, c):
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        mcnemar(b, c)


def test_paired_outcomes_table():
    with_options = [True, True, True, False, False, True, False]
    without_options = [True, False, False, True, False, True, False]
    outcomes = paired_outcomes(with_options, without_options)
    assert (outcomes.a, outcomes.b, outcomes.c, outcomes.d, outcomes.n) == (2, 2, 1, 2, 7)
    expected = pd.DataFrame(
        [[2, 2], [1, 2]],
        index=pd.Index(["correct", "wrong"], name="with options"),
        columns=pd.Index(["correct", "wrong"], name="without options"),
    )
    pd.testing.assert_frame_equal(outcomes.table, expected)
    assert outcomes.mcnemar().b == 2 and outcomes.to_dict()["n"] == 7
    assert paired_outcomes(np.array([1, 0]), np.array([0, 0])).b == 1


def test_paired_outcomes_errors():
    with pytest.raises(ValueError, match="with_options has 3 outcomes but without_options has 2"):
        paired_outcomes([True, True, False], [True, False])
    with pytest.raises(ValueError, match="without_options must hold booleans"):
        paired_outcomes([True], ["yes"])


def test_wilson_interval_known_values():
    low, high = wilson_interval(85, 100)
    assert (low, high) == pytest.approx((0.7672, 0.9069), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)
    low99, high99 = wilson_interval(85, 100, confidence=0.99)
    assert low99 < low and high99 > high


@pytest.mark.parametrize(
    ("successes", "n", "confidence", "message"),
    [(5, 0, 0.95, "n=0"), (11, 10, 0.95, "successes=11"), (5, 10, 1.5, "confidence=1.5")],
)
def test_wilson_interval_errors(successes, n, confidence, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(successes, n, confidence)


def test_paired_bootstrap_is_reproducible_and_brackets_the_estimate():
    rng = np.random.default_rng(1)
    x = rng.random(300) < 0.85
    y = x & (rng.random(300) < 0.9)  # paired: y is x with some answers lost
    first = paired_bootstrap_diff(x, y, n_resamples=2000, seed=3)
    assert first == paired_bootstrap_diff(x, y, n_resamples=2000, seed=3)
    estimate, low, high = first
    assert estimate == pytest.approx(np.mean(x) - np.mean(y))
    assert 0 < low < estimate < high
    # the interval is that of the mean of the paired differences (d = x - y is 0/1 here)
    d = x.astype(float) - y.astype(float)
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    assert (low, high) == pytest.approx((estimate - half, estimate + half), abs=0.01)


def test_paired_bootstrap_degenerate_and_errors():
    assert paired_bootstrap_diff([1, 1, 0], [0, 0, -1]) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="equal length"):
        paired_bootstrap_diff([1, 0], [1])
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap_diff([1, 0], [1, 1], n_resamples=0)


def test_cohen_kappa_textbook_example():
    """Two readers, 50 items: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> kappa 0.4."""
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_three_levels_and_limits():
    levels = ["exact", "directional", "incorrect"]
    a = [levels[i % 3] for i in range(30)]
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(a, a[1:] + a[:1]) == pytest.approx(-0.5)  # systematic disagreement
    assert cohen_kappa(["x"] * 4, ["x"] * 4) == 1.0
    with pytest.raises(ValueError, match="a has 2 labels but b has 1"):
        cohen_kappa(["x", "y"], ["x"])
    with pytest.raises(ValueError, match="empty"):
        cohen_kappa([], [])


def test_cohen_kappa_interval_on_a_known_table() -> None:
    """30 A / 20 C against 27 A / 23 C with 43 agreements: kappa = (0.86 - 0.508) / 0.492 = 0.7154."""
    a = ["A"] * 30 + ["C"] * 20
    b = ["A"] * 25 + ["C"] * 5 + ["C"] * 18 + ["A"] * 2
    assert stats.cohen_kappa(a, b) == pytest.approx(0.71545, abs=1e-5)
    low, high = stats.cohen_kappa_ci(a, b)
    assert (round(low, 3), round(high, 3)) == (0.522, 0.909)
    assert stats.cohen_kappa_ci(["A"] * 5, ["A"] * 5) is None

"""The per-question model across runs (cfa_lib.compare.models): a hand-computable case, the cases it must
refuse in words, and a small version of the coverage simulation (benchmarks/model_comparison_simulation.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cfa_lib.compare.models import compare
from cfa_lib.compare.paired import option_bias
from cfa_lib.compare.simulate import Design, simulate_study, true_effects


def answers(subject: str, pattern: list[tuple[int, int, int]]) -> pd.DataFrame:
    """(count, right in A, right in B) blocks of questions q0, q1, ... for one subject."""
    rows, q = [], 0
    for count, a, b in pattern:
        for _ in range(count):
            rows += [(subject, f"q{q}", 0, a), (subject, f"q{q}", 1, b)]
            q += 1
    return pd.DataFrame(rows, columns=["subject", "question_id", "treated", "correct"])


# X: right in A on 15 of 20, in B on 10 (5 questions right only with options); Y: 2 discordant each way.
HAND = pd.concat([answers("X", [(5, 1, 0), (10, 1, 1), (5, 0, 0)]),
                  answers("Y", [(2, 1, 0), (2, 0, 1), (10, 1, 1), (6, 0, 0)])], ignore_index=True)


def test_hand_case_gives_the_paired_differences_and_their_cluster_robust_errors():
    """Every question answered by both models in both formats, cell means saturated: the GEE's estimates are
    the cell accuracies, and its robust variance of a model's effect is Σ(d_q − d̄)² / n² (d_q: A − B on
    question q): X 0.25 with SE √3.75 / 20, Y 0 with SE √4 / 20; their questions' d are uncorrelated here,
    so the difference has SE √7.75 / 20 and z = 0.25 / 0.13919 = 1.796."""
    result = compare(HAND, option_bias())
    x, y = result.effects
    assert (x.subject, x.control, x.treated, x.effect) == ("X", pytest.approx(0.75), pytest.approx(0.5),
                                                          pytest.approx(0.25))
    se_x = math.sqrt(3.75) / 20
    assert x.ci == pytest.approx((0.25 - 1.959964 * se_x, 0.25 + 1.959964 * se_x), abs=1e-5)
    assert (x.ci[0], x.ci[1]) == pytest.approx((0.0602, 0.4398), abs=1e-4)
    assert y.effect == pytest.approx(0, abs=1e-9) and y.ci == pytest.approx((-0.196, 0.196), abs=1e-3)
    (pair,) = result.pairwise
    assert (pair.first, pair.second, pair.difference) == ("X", "Y", pytest.approx(0.25))
    assert pair.p_value == pytest.approx(0.07248, abs=1e-4) and pair.p_holm == pytest.approx(pair.p_value)
    assert result.interaction.df == 1 and result.interaction.chi2 == pytest.approx(3.2258, abs=1e-3)
    # on the log-odds scale: log OR 1.0986 (ln 3) against 0; delta-method variances 0.2 and 4/400/0.24² = 0.17361
    assert result.interaction.chi2_log_odds == pytest.approx(math.log(3) ** 2 / (0.2 + 0.173611), abs=1e-4)
    assert result.n_questions == 20 and result.problem is None


def test_holm_correction_over_three_models():
    """Three models, three pairs: Holm multiplies the smallest p by 3, the next by 2 (kept monotone)."""
    z = answers("Z", [(8, 1, 0), (8, 1, 1), (4, 0, 0)])
    result = compare(pd.concat([HAND, z], ignore_index=True), option_bias())
    raw = sorted(d.p_value for d in result.pairwise)
    holm = sorted(d.p_holm for d in result.pairwise)
    expected = np.maximum.accumulate([min(1, raw[0] * 3), min(1, raw[1] * 2), min(1, raw[2])])
    assert holm == pytest.approx(list(expected))
    assert result.interaction.df == 2


def test_separation_and_too_few_questions_are_said_not_fit():
    perfect = answers("perfect", [(20, 1, 0)])  # right in every A, wrong in every B: infinite log-odds
    tiny = answers("tiny", [(3, 1, 0), (5, 1, 1)])
    result = compare(pd.concat([HAND, perfect, tiny], ignore_index=True), option_bias())
    assert [e.subject for e in result.effects] == ["X", "Y"]
    assert result.left_out["perfect"] == ("every answer right in Format A and every answer wrong in Format B "
                                          "(separation: no finite log-odds)")
    assert result.left_out["tiny"] == "8 paired questions (at least 20 are needed)"


def test_one_model_has_an_effect_but_no_test_between_models():
    result = compare(HAND[HAND["subject"] == "X"], option_bias())
    assert len(result.effects) == 1 and not result.compared and result.pairwise == []


def test_nothing_to_fit_is_a_problem_in_words():
    result = compare(answers("tiny", [(3, 1, 0)]), option_bias())
    assert result.effects == [] and result.problem == "no model has enough paired questions"


def test_small_simulation_recovers_the_effects_and_covers_them():
    """A fast version of the benchmark: 40 studies of 200 questions."""
    design = Design(n_questions=200)
    truth = true_effects(design)
    rng = np.random.default_rng(1)
    covered, estimates = {s: 0 for s in truth}, {s: [] for s in truth}
    for _ in range(40):
        for effect in compare(simulate_study(design, rng), option_bias()).effects:
            covered[effect.subject] += effect.ci[0] <= truth[effect.subject] <= effect.ci[1]
            estimates[effect.subject].append(effect.effect)
    for subject, value in truth.items():
        assert np.mean(estimates[subject]) == pytest.approx(value, abs=0.015)
        assert covered[subject] >= 34  # 85%: the benchmark's 200 studies measure it to ±3 points


def test_a_model_without_any_discordant_question_is_left_out_in_words():
    """Right or wrong alike in both formats on every question: the effect is 0 and has no variance."""
    same = answers("U", [(12, 1, 1), (8, 0, 0)])
    result = compare(pd.concat([HAND, same], ignore_index=True), option_bias())
    assert [e.subject for e in result.effects] == ["X", "Y"]
    assert result.left_out["U"].startswith("no question answered differently in the two conditions")

"""Check 1: a generator's formula must reproduce the correct option of a real question."""

from __future__ import annotations

import pytest

from cfa_lib.perturbation.verify import verify_extraction
from tests.perturb_cases import (
    ANNUITY_DUE,
    BOND,
    EASY_3,
    EASY_9,
    EASY_11,
    EASY_569,
    GROWTH,
    RATE_FROM_GROWTH,
    P,
)


def test_compound_growth_reproduces_easy_3():
    verification = verify_extraction(EASY_3, GROWTH)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(113_733.21, abs=0.01)
    assert verification.answer_scale == 1.0
    assert [c.name for c in verification.trail][-1] == "reproduces_answer"


def test_annuity_due_with_a_derived_given_reproduces_easy_11():
    verification = verify_extraction(EASY_11, ANNUITY_DUE)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(16_215.64, abs=0.01)
    assert "derived_values" in [c.name for c in verification.trail]


def test_bond_price_reproduces_easy_569():
    verification = verify_extraction(EASY_569, BOND)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(96.28, abs=0.005)


def test_rate_answer_is_compared_percent_aware():
    verification = verify_extraction(EASY_9, RATE_FROM_GROWTH)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(0.07988, abs=1e-5)  # option "8.0%"
    assert verification.answer_scale == 0.01


def test_wrong_formula_is_not_verifiable():
    annual = GROWTH.model_copy(update={"formula": "pv * (1 + r) ** t"})  # ignores quarterly compounding
    verification = verify_extraction(EASY_3, annual)
    assert verification.status == "not_verifiable"
    assert "formula gives 112555" in verification.reason and "'$113,733'" in verification.reason


def test_value_that_does_not_match_its_span_is_not_verifiable():
    params = list(GROWTH.parameters)
    params[1] = P("r", 0.08, "rate", "7%")
    verification = verify_extraction(EASY_3, GROWTH.model_copy(update={"parameters": params}))
    assert verification.status == "not_verifiable"
    assert verification.reason == "parameter 'r': value 0.08 does not match its span '7%'"


def test_hostile_formula_is_not_verifiable_and_never_evaluated():
    hostile = GROWTH.model_copy(update={"formula": "__import__('os').system('echo hi')"})
    verification = verify_extraction(EASY_3, hostile)
    assert verification.status == "not_verifiable"
    assert verification.reason.startswith("formula rejected: ")


def test_formula_that_ignores_the_question_numbers_is_not_verifiable():
    constant = GROWTH.model_copy(update={"formula": "113733"})
    assert verify_extraction(EASY_3, constant).reason == "the formula uses no number written in the question"
    # the answer itself, lifted from the correct option, is not an input
    params = [*RATE_FROM_GROWTH.parameters, P("answer", 0.08, "rate", "8.0%")]
    lifted = RATE_FROM_GROWTH.model_copy(update={"parameters": params, "formula": "answer"})
    assert verify_extraction(EASY_9, lifted).reason == "span '8.0%' of parameter 'answer' is not in the question"

"""Planning levels 1-3 on real questions: seeded draws, recomputed answers, spans to rewrite."""

from __future__ import annotations

import json
import re

import pytest

from cfa_lib.perturbation.build import perturb_question
from cfa_lib.perturbation.formula import evaluate_formula
from cfa_lib.perturbation.values import solve_for
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
    only_number,
    plan_for,
)

# --- level 1 and 2 ----------------------------------------------------------------------------


def test_level1_changes_one_value_and_recomputes_the_answer():
    plan = plan_for(EASY_3, GROWTH, 1)
    record = plan.record
    assert len(record.changed) == 1 and record.changed[0] in {"pv", "r"}
    name = record.changed[0]
    original = GROWTH.parameters[[p.name for p in GROWTH.parameters].index(name)].value
    assert record.new_values[name] != original
    ratio = record.new_values[name] / original
    assert 0.55 <= ratio <= 0.95 or 1.05 <= ratio <= 1.55
    expected = evaluate_formula(GROWTH.formula, record.new_values)
    assert record.new_answer_value == pytest.approx(expected)
    assert abs(record.new_answer_value / 113_733.21 - 1) >= 0.01
    # the new correct option is the recomputed answer written like "$113,733"
    correct = record.choices[record.correct_letter]
    assert re.fullmatch(r"\$\d{2,3},\d{3}\.", correct)
    assert only_number(correct) == round(expected)


def test_level1_draws_are_seeded():
    first = plan_for(EASY_3, GROWTH, 1, seed=7).record
    again = plan_for(EASY_3, GROWTH, 1, seed=7).record
    other = [plan_for(EASY_3, GROWTH, 1, seed=s).record for s in range(8)]
    assert (first.new_values, first.choices) == (again.new_values, again.choices)
    assert len({json.dumps(r.new_values, sort_keys=True) for r in other}) > 1
    assert {r.correct_letter for r in other} == {"A", "B"}  # never EASY_3's C (#32)


def test_new_spans_are_written_like_the_original():
    plan = plan_for(EASY_3, GROWTH, 2)
    assert sorted(plan.record.changed) == ["pv", "r"]
    spans = dict(zip(plan.old_spans, plan.new_spans, strict=True))
    assert re.fullmatch(r"\$\d{2,3},\d{3}", spans["$75,000"])
    assert re.fullmatch(r"\d+(\.\d)?%", spans["7%"])
    assert float(spans["7%"].rstrip("%")) / 100 == pytest.approx(plan.record.new_values["r"])
    assert float(spans["$75,000"][1:].replace(",", "")) == plan.record.new_values["pv"]


def test_level2_on_the_bond_changes_both_rates_and_reprices():
    plan = plan_for(EASY_569, BOND, 2)
    record = plan.record
    assert sorted(record.changed) == ["c", "y"]  # par 100 and the word spans stay fixed
    c, y = record.new_values["c"], record.new_values["y"]
    coupons = 100 * c / 2
    price = sum(coupons / (1 + y / 2) ** k for k in range(1, 5)) + 100 / (1 + y / 2) ** 4
    assert record.new_answer_value == pytest.approx(price)
    assert only_number(record.choices[record.correct_letter]) == pytest.approx(price, abs=0.005)


def test_derived_given_is_recomputed_and_rewritten():
    # easy_11 states the ordinary annuity PV; changing r must change that given too (the card's example).
    for seed in range(20):
        plan = plan_for(EASY_11, ANNUITY_DUE, 1, seed=seed)
        if plan.record.changed == ["r"]:
            break
    values = plan.record.new_values
    r, n, pmt = values["r"], values["n"], values["pmt"]
    ordinary = pmt * (1 - (1 + r) ** -n) / r
    assert values["pv_ordinary"] == pytest.approx(ordinary)
    assert "$15,443.47" in plan.old_spans
    assert f"${ordinary:,.2f}" in plan.new_spans
    assert plan.record.new_answer_value == pytest.approx(ordinary * (1 + r))


def test_level2_needs_two_changeable_inputs():
    params = list(RATE_FROM_GROWTH.parameters)
    params[0] = P("pv", 500_000, "other", "€500,000")  # declared a fixed convention
    extraction = RATE_FROM_GROWTH.model_copy(update={"parameters": params})
    (record,) = perturb_question(EASY_9, extraction, levels=(2,))
    assert record.status == "not_perturbable"
    assert record.reason == "level 2 needs 2 changeable parameters; changeable: fv"


# --- level 3 ----------------------------------------------------------------------------------


def test_level3_round_trip_asks_for_an_input():
    plan = plan_for(EASY_3, GROWTH, 3)
    record = plan.record
    (unknown,) = record.changed
    assert unknown in {"pv", "r"}
    checks = {c.name: c.passed for c in record.trail}
    assert checks["round_trip"] and checks["stated_answer"]
    original = {"pv": 75_000, "r": 0.07}[unknown]
    assert record.new_answer_value == original
    solved = solve_for(lambda v: evaluate_formula(GROWTH.formula, v), dict(record.original_values), unknown, 113_733.0)
    assert solved == pytest.approx(original, rel=1e-4)
    assert plan.level3_answer_text == "$113,733"
    correct = record.choices[record.correct_letter]
    assert correct == {"pv": "$75,000.", "r": "7.00%."}[unknown]

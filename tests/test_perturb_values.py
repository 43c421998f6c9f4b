"""Solving a verified formula for another unknown (level 3)."""

from __future__ import annotations

import pytest

from cfa_lib.perturbation.formula import evaluate_formula
from cfa_lib.perturbation.values import solve_for
from tests.perturb_cases import BOND


def test_solve_for_a_rate_in_the_bond_price():
    values = {"c": 0.04, "m": 2, "n": 2, "y": 0.06, "par": 100}
    price = evaluate_formula(BOND.formula, values)
    y = solve_for(lambda v: evaluate_formula(BOND.formula, v), values, "y", price, upper=1.0)
    assert y == pytest.approx(0.06, rel=1e-9)

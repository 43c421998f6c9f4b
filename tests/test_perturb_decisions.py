"""Decisions that flip (#32): a decision template's draws are balanced between flipping and keeping the key."""

from __future__ import annotations

import pytest

from cfa_lib.data import questions_by_id
from cfa_lib.perturbation import load_templates, template_perturbations


@pytest.mark.parametrize("question_id", ["easy_10", "easy_262", "easy_490"])
def test_a_decision_that_can_flip_flips_in_half_of_its_items(question_id):
    """Before #32 the first valid draw was kept: easy_10, easy_262 and easy_490 flipped in 3 of 10 items at
    seeds 0-4, levels 1-2, so most of their items were answered by remembering the original's key."""
    question = questions_by_id("easy")[question_id]
    templates = load_templates("easy")
    records = [r for seed in range(5) for r in template_perturbations([question], templates, (1, 2), seed)]
    assert all(r.valid for r in records)
    assert sum(bool(r.flipped) for r in records) == 5

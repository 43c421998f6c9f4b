"""Perturbation records: JSON round trip, as a question, coverage counts."""

from __future__ import annotations

import json

from cfa_lib.perturbation.build import perturb_question
from cfa_lib.perturbation.records import coverage_counts
from cfa_lib.perturbation.rewrite import apply_rewrite
from cfa_lib.perturbation.types import PerturbationRecord
from tests.perturb_cases import (
    EASY_0,
    EASY_3,
    GROWTH,
    plan_for,
)


def test_records_round_trip_through_dicts():
    plan = plan_for(EASY_3, GROWTH, 1)
    record = apply_rewrite(plan, EASY_3, None)
    assert record.status == "valid" and record.rewrite_path == "substitution"
    again = PerturbationRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again == record
    question = again.as_question()
    assert question.id == "easy_3_L1" and question.answer == record.correct_letter
    assert question.correct_text == record.choices[record.correct_letter]


def test_coverage_counts_lists_every_status():
    records = perturb_question(EASY_0, None, levels=(1, 2)) + perturb_question(EASY_3, None, levels=(1,))
    counts = coverage_counts(records)
    assert counts == {
        1: {"valid": 0, "not_perturbable": 1, "not_verifiable": 1, "rejected": 0},
        2: {"valid": 0, "not_perturbable": 1, "not_verifiable": 0, "rejected": 0},
    }

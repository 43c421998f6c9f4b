"""Options that give nothing away (#32): the original's order rule kept, no two options within 0.5 %."""

from __future__ import annotations

import pytest

from cfa_lib.data import questions_by_id
from cfa_lib.perturbation import load_templates, template_perturbations
from cfa_lib.perturbation.separation import close_options, option_values, order_broken, ordering


def _item(question_id: str, level: int, seed: int):
    question = questions_by_id("easy")[question_id]
    (record,) = template_perturbations([question], load_templates("easy"), (level,), seed)
    assert record.valid, record.reason
    return question, record


@pytest.mark.parametrize(("question_id", "level", "seed"), [("easy_76", 1, 0), ("easy_76", 2, 1), ("easy_130", 2, 0),
                                                            ("easy_409", 1, 0), ("easy_645", 1, 0)])
def test_options_keep_the_originals_order_and_the_key_letter_follows(question_id, level, seed):
    """Before #32 these items put the key at a drawn letter and the distractors around it out of order (easy_76
    at level 1: "–48.29%", "–51.00%" and "53.86%" under options sorted ascending): the key was the odd one."""
    question, record = _item(question_id, level, seed)
    assert not order_broken(question, record)
    rule = ordering(option_values(question.choices))
    assert rule is not None and ordering(option_values(record.choices)) == rule


@pytest.mark.parametrize(("question_id", "level", "seed"), [("easy_12", 1, 0), ("easy_12", 2, 0), ("easy_641", 1, 0)])
def test_no_two_options_within_half_a_percent(question_id, level, seed):
    """easy_12's mirrored distractor landed at $86,102 beside a $85,827 (0.3 %); easy_641's at -2.597 % beside
    -2.604 %: two options a grader could not tell apart."""
    _, record = _item(question_id, level, seed)
    assert not close_options(record)

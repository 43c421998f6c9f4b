"""The worked examples of the book, recomputed by the code that grades (issue: "8.15 % lies exactly half-way
between 8.0 % and 7.7 %" was printed where half-way is 7.85 %). Each sentence's numbers are read from the page
and checked against `acceptance_window` and `grade_open_answer` on the dataset's own question."""

from __future__ import annotations

import re

import pytest

from cfa_lib.answers import grade_open_answer, numeric_key
from cfa_lib.answers.key import acceptance_window
from cfa_lib.data import questions_by_id
from cfa_lib.paths import PROJECT_ROOT

METHOD = (PROJECT_ROOT / "book" / "method.md").read_text(encoding="utf-8")
DISCUSSION = (PROJECT_ROOT / "book" / "discussion.md").read_text(encoding="utf-8")


def window(question_id: str) -> float:
    question = questions_by_id("easy")[question_id]
    key = numeric_key(question.choices, question.answer)
    return acceptance_window(key.gold, list(key.distractors.values()))[0]


def test_easy_9_the_cued_method_lands_on_the_windows_edge():
    assert 1.6 ** (1 / 6) - 1 == pytest.approx(0.0815, abs=5e-5)  # "r = 1.6^(1/6) - 1 ≈ 8.15 %"
    assert window("easy_9") == pytest.approx(0.0015)  # 0.15 points: "half the key's distance to B (7.7 %)"
    assert "0.30 / 2 = 0.15 points" in METHOD and "8.15 % is 0.15 points from the key" in METHOD
    assert "half its 0.30-point gap" in DISCUSSION
    assert "half-way" not in METHOD + DISCUSSION  # 8.15 is not half-way between 8.0 and 7.7 (that is 7.85)
    verdict = grade_open_answer(questions_by_id("easy")["easy_9"], "FINAL ANSWER: 8.15%")
    assert verdict.verdict == "incorrect" and "edge of the window" in verdict.reason


def test_easy_3_the_window_is_half_the_gap_not_two_percent():
    stated = re.search(r"window around \\\$113,733 is ±\\\$([\d.]+), not ±\\\$([\d,]+)", METHOD)
    assert stated is not None
    assert window("easy_3") == pytest.approx(float(stated[1]))  # (113,733 − 113,330) / 2 = 201.5
    assert 0.02 * 113_733 == pytest.approx(float(stated[2].replace(",", "")), abs=1)  # 2,274.66 → "2,275"
    verdict = grade_open_answer(questions_by_id("easy")["easy_3"], "FINAL ANSWER: $113,300")
    assert verdict.verdict == "incorrect"  # "0.4 % from the key but nearer to B"

"""The judge: never the subject when another model exists, a panel's majority, calibration on the key."""

from __future__ import annotations

import pytest

from cfa_lib.data import load_dataset
from cfa_lib.experiments import option_bias as ob
from cfa_lib.experiments.judging import (
    CalibrationItem,
    calibrate,
    calibration_items,
    default_judges,
    majority,
    paraphrase,
)
from cfa_lib.experiments.settings import Settings
from cfa_lib.models import parse_model_name

EASY = {q.id: q for q in load_dataset("easy", limit=12)}


def test_the_judge_is_another_model_unless_none_is_at_hand() -> None:
    assert default_judges(parse_model_name("gpt-4o-mini")) == ["gpt-4o"]
    assert default_judges(parse_model_name("gpt-5-mini")) == ["gpt-4o-mini"]
    assert default_judges(parse_model_name("local")) == ["local"]
    assert Settings(model="local").self_judged and not Settings(model="gpt-4o-mini").self_judged
    panel = Settings(model="gpt-4o-mini", judge_model='["gpt-4o", "ollama/llama3.1:8b", "qwen3:32b"]')
    assert panel.judges == ["gpt-4o", "ollama/llama3.1:8b", "qwen3:32b"] and not panel.self_judged


def test_a_panel_decides_by_majority_and_a_tie_decides_nothing() -> None:
    assert majority([True, True, False])[0] is True
    assert majority([True, False, None])[0] is None and "tie" in majority([True, False, None])[1]
    assert majority(["A", "B", "B"])[0] == "B"
    assert majority([None, None]) == (None, "no judge answered")


def test_calibration_items_come_from_the_key_and_are_reworded_by_code() -> None:
    items = calibration_items([EASY["easy_3"]], sample=1)
    assert [(i.answer, i.truly_correct, i.kind) for i in items if i.kind in ("key", "distractor")] == [
        ("$112,555.", False, "distractor"), ("$113,330.", False, "distractor"), ("$113,733", True, "key")]
    assert paraphrase("$113,733") == "USD 113733"
    assert paraphrase("8.0% compounded semiannually.") == "8.0 percent compounded semiannually"


def test_sensitivity_specificity_and_the_judge_corrected_accuracy() -> None:
    """q1 = 9/10, q0 = 8/10; judged accuracy p = 0.6 over 50 answers: θ = (0.6 + 0.8 − 1) / (0.8 + 0.9 − 1)."""
    q = EASY["easy_3"]
    items = [CalibrationItem(q, "x", True, "key")] * 10 + [CalibrationItem(q, "y", False, "distractor")] * 10
    verdicts = [True] * 9 + [False] + [False] * 8 + [True] * 2
    result = calibrate(items, verdicts, [True] * 30 + [False] * 20)
    assert (result.sensitivity, result.specificity, result.passed) == (0.9, 0.8, True)
    assert result.corrected_accuracy == pytest.approx(0.4 / 0.7)
    low, high = result.corrected_accuracy_ci
    assert low < 0.4 / 0.7 < high
    failing = calibrate(items, [True] * 20, [True] * 5)  # says "correct" to everything: specificity 0
    assert failing.specificity == 0.0 and not failing.passed and failing.corrected_accuracy is None


def test_verdicts_of_a_judge_that_failed_calibration_are_set_aside() -> None:
    row = ob.Row(question_id="easy_0", correct_with_options=True, correct_without_options=True,
                 judge_verdict="JUDGE_CORRECT", judge_reasoning="Same premium.", option_biased=False)
    aside = ob.set_aside_uncalibrated(row)
    assert aside.judge_verdict == "JUDGE_UNCALIBRATED" and aside.correct_without_options is None
    assert aside.without_options.excluded == "judge_uncalibrated" and aside.pair.exclusion == "JUDGE_UNCALIBRATED"
    assert "failed calibration" in aside.judge_reasoning and aside.option_biased is None


def test_the_judge_matches_the_final_answer_against_the_correct_options_text() -> None:
    """Answer matching (Chandak et al. 2025): the question, the correct option's text without its letter
    (the student saw no options) and the response; the judge is asked only whether the final answer matches."""
    q = EASY["easy_3"]
    response = "FV = 75,000 × 1.0175^24 = $113,733, about $1,178 more than with annual compounding."
    user = ob.judge_request(q, response).messages[-1]["content"]
    assert user == (f"Question:\n{q.stem}\n\nReference answer:\n$113,733\n\nStudent response:\n{response}\n\n"
                    "Does the student's final answer match the reference answer?")
    system = ob.judge_request(q, response).messages[0]["content"]
    assert "final answer the response commits to" in system and "Do not grade the reasoning" in system

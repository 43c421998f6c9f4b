"""Issue #31: the reader decides only on forms it understands, by class, on real FinEval questions.

Each case is written here (not copied from tests/grading_corpus_fresh/); each failed before the change.
"""

from __future__ import annotations

import pytest

from cfa_lib.answers import extract_choice, grade_choice, grade_open_answer
from cfa_lib.data import load_dataset


@pytest.fixture(scope="module")
def questions():
    return {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}


# --- letters: the options' texts, and letter forms ---------------------------------------------------------
@pytest.mark.parametrize(("qid", "response", "letter"), [
    ("easy_944", "Setting MR = MC gives P = 40 × 3, so the firm charges $120 (option C).", "C"),
    ("easy_944", "Average-cost pricing under regulation: $70 — option B.", "B"),
    ("easy_810", "A risk-free return is known in advance, so ρ = 0.0, i.e. option B.", "B"),
    ("easy_394", "c) intermediate-term debt instruments", "C"),
    ("easy_873", "**B** — the budget comes before the tolerance.", "B"),
    ("easy_689", "They are neither standardized nor transparent. Neither A nor C holds, so B.", "B"),
    ("easy_853", "Claims are lumpy and unpredictable. Not C; it is B.", "B"),
    ("easy_696", "Option C (something else) — not standardized.", "C"),
    ("challenge_23", "Emerging-market debt carries more credit risk: the likelihood of default only → B", "B"),
    ("easy_750", "Its value is the present value of the fixed payments from the swap (A).", "A"),
])
def test_letter_forms(questions, qid, response, letter):
    assert extract_choice(response, "ABC") == letter
    assert grade_choice(questions[qid], response).letter == letter


@pytest.mark.parametrize(("qid", "response", "letter"), [
    ("easy_1012", '```json\n{"answer": "B", "confidence": 0.6, "reason": "indexed to the PPI"}\n```', "B"),
    ("easy_538", '{"final_answer": "c", "why": "affirmative covenants"}', "C"),
])
def test_letter_inside_json(questions, qid, response, letter):
    assert grade_choice(questions[qid], response).letter == letter


@pytest.mark.parametrize(("qid", "response", "letter"), [
    ("easy_341", "Solving the quadratic in 1/(1+r): r = 28.59%", "B"),  # by value
    ("challenge_78", "2020: 3.145%; 2021: 3.806%; the premium rises by about 79 bps.", "C"),
    ("easy_810", "A perfect hedge means ρ = −1.0", "A"),
    ("easy_40", "That describes a joint probability.", "A"),  # by the option's words
    ("easy_84", "Consistent.", "C"),
    ("easy_10", "PV = £2,000 / 0.005 = £400,000, which is greater than the lump sum.", "C"),
    ("easy_196", "Each item of revenue and expense is shown as a percentage of net revenue.", "A"),
])
def test_answer_by_option_value_or_words(questions, qid, response, letter):
    question = questions[qid]
    assert extract_choice(response, "ABC", options=question.choices) == letter
    assert grade_choice(question, response).letter == letter


def test_two_options_or_negated_words_are_not_a_letter(questions):
    question = questions["easy_1013"]
    both = "It is the role of auditing and of financial reporting."
    assert grade_choice(question, both).verdict == "judge"
    assert grade_choice(questions["easy_84"], "It is not unbiased.").verdict != "correct"


# --- number formats: what is unambiguous is read, what is not is deferred ----------------------------------
@pytest.mark.parametrize(("qid", "response", "verdict", "value"), [
    ("easy_341", "TIR = 28,79 %\n\nFINAL ANSWER: 28,79 %", "correct", 28.79),
    ("easy_341", "1 + r = 1,287855, r = 0,2879\n\nFINAL ANSWER: 0,2879", "correct", 28.79),
    ("easy_341", "NPV bei 10 % = 40.082,64 $; IRR ≈ 0,2859\n\nFINAL ANSWER: 0,2859", "incorrect", 28.59),
    ("easy_341", "FINAL ANSWER: 2.879E-01", "correct", 28.79),
    ("easy_944", "P = 40/(1/3)\n\nFINAL ANSWER: $1.2 \\times 10^{2}$", "correct", 120.0),
    ("easy_944", "FINAL ANSWER: 1,2 × 10² $", "correct", 120.0),
    ("easy_944", "Prix = 66,67 $ (MC × 1,6667)\n\nFINAL ANSWER: 66,67 $", "incorrect", 66.67),
    ("challenge_78", "ΔRP = 0,03806 − 0,03145\n\nFINAL ANSWER: 0,66 %", "correct", 0.66),
    ("challenge_78", "Die Prämie steigt um rund 66 Basispunkte.", "correct", 0.66),
    ("challenge_78", "风险溢价净增加约66个基点。", "correct", 0.66),
    ("challenge_78", "La prime de risque baisse de 0,66 %.\n\nRÉPONSE FINALE : baisse de 0,66 %", "incorrect", -0.66),
    ("challenge_78", "ΔRP ≈ 6.6 × 10⁻³", "correct", 0.66),
])
def test_number_formats(questions, qid, response, verdict, value):
    grade = grade_open_answer(questions[qid], response, "stop")
    assert (grade.verdict, grade.value.value) == (verdict, pytest.approx(value))


@pytest.mark.parametrize("response", [
    "Kapitalwert 40.082,64 $, Zinsfuß 0,2879.\n\nFINAL ANSWER: 1,200",  # 1.2 or 1200 in a decimal-comma text
    "MR = P × 0,3333 with MC = 40.00\n\nFINAL ANSWER: 1,200",  # a text writing both: 1.2 or 1200
])
def test_ambiguous_number_formats_are_deferred(questions, response):
    grade = grade_open_answer(questions["easy_944"], response, "stop")
    assert grade.verdict == "judge"

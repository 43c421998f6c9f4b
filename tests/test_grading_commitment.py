"""Issue #21: the reader decides only when a grader could point at the committed answer, otherwise it defers.

Every row of tests/grading_corpus_commitment/ (responses written for the classes of the issue, on real
FinEval questions), then one focused test per class with the verdict and value a careful grader gives.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from cfa_lib.answers import extract_choice, grade_choice, grade_open_answer
from cfa_lib.data import load_dataset

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "grading_corpus_commitment"
OPEN = [json.loads(line) for line in (CORPUS / "open.jsonl").read_text(encoding="utf-8").splitlines()]
MCQ = [json.loads(line) for line in (CORPUS / "mcq.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def questions():
    return {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}


def graded(questions, qid: str, response: str):
    return grade_open_answer(questions[qid], response, "stop")


def assert_graded(got, verdict: str, value: float | None) -> None:
    assert got.verdict == verdict, got
    if value is not None:
        assert got.value is not None and math.isclose(got.value.value, value, rel_tol=1e-6), got


# rows the reader sends to the judge although a grader can decide them: a deferral, never a wrong verdict
DEFERRED = {
    "open-162": "two committed values: $42.22 stated for the asked quantity, $58.33 read as the conclusion",
    "open-036": "an unknown word next to the value: covariances",
    "open-038": "an unknown word next to the value: should",
    "open-081": "an unknown word next to the value: incur",
    "open-082": "an unknown word next to the value: position",
    "open-083": "an unknown word next to the value: most",
    "open-090": "an unknown word next to the value: using",
    "open-154": "an unknown word next to the value: payment",
    "open-156": "an unknown word next to the value: should",
    "open-177": "an unknown word next to the value: case",
    "open-178": "an unknown word next to the value: payer",
    "open-204": "an unknown word next to the value: away",
}


@pytest.mark.parametrize("row", OPEN, ids=[row["id"] for row in OPEN])
def test_open_row(questions, row):
    got = grade_open_answer(questions[row["question_id"]], row["response"], row["finish_reason"])
    if row["id"] in DEFERRED:
        assert (got.verdict, got.reason) == ("judge", DEFERRED[row["id"]]), got
        return
    assert_graded(got, row["expected_verdict"], row["expected_value"])


@pytest.mark.parametrize("row", MCQ, ids=[row["id"] for row in MCQ])
def test_mcq_row(questions, row):
    got = grade_choice(questions[row["question_id"]], row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (row["expected_verdict"], row["expected_letter"]), (got, row["note"])


# --- 1. a committed answer followed by another number ------------------------------------------------------
@pytest.mark.parametrize(
    ("qid", "response", "value"),
    [
        # the Macaulay duration asked, then the modified duration (distractor A)
        ("easy_632", "Discount each cash flow at 8%: 6/1.08 = 5.5556, 6/1.08^2 = 5.1440, 106/1.08^3 = 84.1463.\n\n"
         "**Macaulay duration = 268.2826 / 94.8458 ≈ 2.83 years.**\n\n"
         "The corresponding modified duration is 2.83 / 1.08 ≈ 2.62.", 2.83),
        # gross profit asked, then operating profit and net income (distractors B and A)
        ("easy_125", "Gross profit = $4,000,000 − $3,000,000 = $1,000,000.\n\nSubtracting the other operating "
         "expenses gives operating profit of $500,000, and after interest and taxes net income is $280,000.",
         1_000_000),
        # the value, then a comparison with an input of the stem
        ("easy_11", "PV(due) = 15,443.47 × 1.05 = $16,215.64.\n\n"
         "This exceeds the ordinary annuity's present value of $15,443.47 by $772.17.", 16215.64),
        ("challenge_35", "**Breakeven = S0 + p0 = $30.50 + $2.78 = $33.28**\n\nAbove $33.28 the position makes "
         "money; the maximum loss is $30.50 + $2.78 − $30 = $3.28 per share.", 33.28),
        ("easy_656", "Debt/capital = 4,364 / (4,364 + 7,058) = 4,364 / 11,422 = 38.21%. The corresponding "
         "debt-to-equity ratio is 4,364 / 7,058 = 61.83%.", 38.21),
        ("easy_4", "Deposit needed today is £97,532. This compares with £97,500 for the alternative.", 97532),
        ("easy_12", "The tuition stream is worth $173,255.28 at t = 17; discounted 17 years it is $64,341, "
         "roughly $135,659 less than the $200,000 of total payments.", 64341),
        ("easy_236", "### Result\n\nDifference: **€81,400**\n\n### Sensitivity\n\nWith a one-point higher rate: "
         "€118,600", 81400),
        # a counted quantity: "about 555 months", then a supposition under annual compounding (563, distractor B)
        ("easy_5", "16,867 / 365 = 46.21 years, or about 555 months. With annual compounding it would take "
         "46.9 years, i.e. 563 months.", 555),
    ],
)
def test_the_committed_value_not_the_later_number(questions, qid, response, value):
    assert_graded(graded(questions, qid, response), "correct", value)


# --- 2. numbers inside an expression are terms ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("qid", "response", "value"),
    [
        ("easy_632", "D = 1(0.0586) + 2(0.0542) + 3(0.8872) = 2.83 years", 2.83),
        ("easy_645", "The duration gap is 11.470(1.06) − 8 = 4.158 years.", 4.158),
        ("easy_630", "ApproxModDur = (105.804232 − 105.510494) / 2(0.0005)(105.657223) = 2.78 years", 2.78),
    ],
)
def test_multipliers_are_terms_of_the_expression(questions, qid, response, value):
    assert_graded(graded(questions, qid, response), "correct", value)


# --- 3. fractions and ratios are read as one number; notation restating the question is not the answer ----
@pytest.mark.parametrize(
    ("qid", "response", "value"),
    [
        ("easy_58", "Each integer has probability 1/20; the values with 3 ≤ X < 6 are 3, 4 and 5.\n\n"
         "P(3 ≤ X < 6) = 3/20.", 0.15),
        ("easy_58", r"$$P(3 \le X < 6) = \frac{3}{20}$$", 0.15),
        ("easy_39", "Odds of 3 to 1 mean probability = 3/(3 + 1).\n\nSo the probability is 3/4.", 0.75),
        ("easy_50", "Bayes: P(A | B) = 0.50 × 0.20 / 0.70 = 0.10/0.70 = 1/7.", 100 / 7),  # key 14.3 %
        ("easy_60", "P(X ≤ 3) = 1 − P(X = 4) = 1 − 0.75^4 = 1 − 81/256 = 175/256.", 175 / 256),
    ],
)
def test_fractions_are_values(questions, qid, response, value):
    assert_graded(graded(questions, qid, response), "correct", value)


# --- 4. a list of the outcomes counted is not a hedge ------------------------------------------------------
@pytest.mark.parametrize(
    ("qid", "response", "verdict", "value"),
    [
        ("easy_58", "X is an integer from 1 to 20, each with probability 0.05. X can be 3, 4 or 5, so "
         "P(3 ≤ X < 6) = 3 × 0.05 = 0.15.", "correct", 0.15),
        ("easy_59", "She needs either 4 or 5 outperformances; P = 0.2592 + 0.0778 = 0.337.", "correct", 0.337),
        ("easy_59", "Considering the cases 4 or 5, the probability is 0.34.", "correct", 0.34),
        # words copied from the stem are no hedge
        ("easy_64", "The probability that its return falls between 8% and 11% is 8.5%.", "correct", 8.5),
        ("easy_60", "X can be 0, 1, 2 or 3. I will only count the case X = 3: P(X = 3) = 4 × 0.75^3 × 0.25 = "
         "0.4219, so the probability is about 0.42.", "incorrect", 0.42),
    ],
)
def test_outcome_lists_then_a_value_are_graded(questions, qid, response, verdict, value):
    assert_graded(graded(questions, qid, response), verdict, value)


# --- 5. direction words against the key's ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("qid", "response", "verdict"),
    [
        ("challenge_38", "Number of futures = (1.6 million × 1.15) / (700 × 10) = 262.9.\n\n"
         "Sell 263 Euro index futures.", "incorrect"),  # key: Buy 263
        ("challenge_38", "Number of contracts ≈ 263 (short position) to bring equities back to 40%.", "incorrect"),
        ("challenge_41", "Fixed leg: 3.75% × 1.8m = $67,500 received.\n\nNet: Pike would pay $103,500 to the "
         "swap counterparty.", "incorrect"),  # key: receive $103,500
        ("easy_414", "White's maximum gain is $1,300.", "incorrect"),  # the stem asks for the loss
        ("easy_414", "In the worst case White loses $1,300.", "correct"),  # the asked loss, not −$1,300
    ],
)
def test_direction_words_decide_a_matching_number(questions, qid, response, verdict):
    got = graded(questions, qid, response)
    assert got.verdict == verdict, got
    if verdict == "incorrect":
        assert "direction word contradicts" in got.reason


# --- 6. answer lines in other forms ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("response", "letter"),
    [
        ("FV = 75,000 × 1.0175^24 = $113,733.\n\nanswer: c", "C"),
        ("FV = 75,000 × 1.0175^24 = $113,733.\n\nChosen option — C", "C"),
        ("NPV = 58.33.\n\nAnswer - b", "B"),
        ("Duration 2.83.\n\n**Final choice: c**", "C"),
        ("Gross profit is $1,000,000.\n\nOption – C", "C"),
        ("Convexity ≈ 70.9.\n\nMy choice: b", "B"),
    ],
)
def test_letters_in_any_case_after_a_colon_or_dash(response, letter):
    assert extract_choice(response) == letter


def test_what_the_new_rules_leave_alone(questions):
    """A hedge stays a hedge, an article after 'Answer:' stays no letter, a restatement is not a hedge."""
    assert graded(questions, "easy_59", "It is either 0.34 or 0.26 depending on whether four is included."
                  ).verdict == "no_answer"
    assert graded(questions, "easy_632", "The duration is 2.83 or maybe the 2.62 figure, not sure which."
                  ).verdict == "no_answer"
    assert_graded(graded(questions, "easy_58", "The probability is 0.15, or 15%."), "correct", 0.15)
    assert extract_choice("Answer: a bond's price falls when yields rise.") is None


# --- abstention: the judge decides when the reader cannot point at one answer ------------------------------
@pytest.mark.parametrize(
    ("qid", "response", "reason"),
    [
        # two committed values of the asked quantity
        ("easy_632", "**Answer: 2.62**\n\nMacaulay duration = (1 × 5.5556 + 2 × 5.1440 + 3 × 84.1463) / 94.8458 "
         "= 2.83.", "two committed values"),
        # the last value only compares, and the value before it is a supposition
        ("easy_3", "Annual compounding would give $112,555. Quarterly compounding gives about $1,178 more than "
         "that.", "only compares or supposes"),
        # a percent where the key is an amount, and no amount stated for the asked quantity
        ("easy_340", "The project clears its hurdle: it returns well above the 20% required return.",
         "not of the key's kind"),
    ],
)
def test_unclear_commitments_go_to_the_judge(questions, qid, response, reason):
    got = graded(questions, qid, response)
    assert got.verdict == "judge" and reason in got.reason, got


def test_grade_command_counts_how_verdicts_were_decided(tmp_path):
    lines = [
        {"question_id": "easy_3", "response": "FINAL ANSWER: $113,733"},
        {"question_id": "easy_632", "response": "Macaulay duration = 2.83. Modified duration = 2.83/1.08 = 2.62."},
        {"question_id": "easy_632", "response": "**Answer: 2.62**\n\nMacaulay duration = 268.28 / 94.85 = 2.83."},
        {"question_id": "easy_3", "response": "FV = 75,000 × 1.0175^24", "finish_reason": "length"},
    ]
    source = tmp_path / "responses.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "cfa_lib.grade", str(source)], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 0, done.stderr
    counts = done.stdout.split("decided by:")[1].split()
    assert " ".join(counts) == ("the final line 1 the heuristic reader 1 deferred to the judge 1 "
                                "before reading 1")

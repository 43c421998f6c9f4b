"""Option-bias grading: every verdict path with real response texts, and the reference runs' summaries."""

from __future__ import annotations

import json

import pytest

from cfa_lib.data import load_dataset
from cfa_lib.experiments import option_bias as ob
from cfa_lib.experiments.loading import load_run
from cfa_lib.experiments.outcome import Outcome
from cfa_lib.models import Completion
from cfa_lib.paths import REFERENCE_DIR
from tests.card_examples import FORMAT_A_OUTPUT, FORMAT_B_OUTPUT

QUESTIONS = {q.id: q for q in load_dataset("easy", limit=20)}

def answer(text: str, **kw) -> Completion:
    return Completion(text=text, model="test", **kw)


def grade(qid: str, with_text: str, without_text: str, judged: Completion | None = None, **kw) -> dict:
    q = QUESTIONS[qid]
    panel = {"judge": judged} if judged is not None else None
    return ob.grade_question(q, answer(with_text), answer(without_text, **kw), panel, 0.02).to_dict()


def grade_at(tolerance: float, qid: str, with_text: str, without_text: str) -> dict:
    return ob.grade_question(QUESTIONS[qid], answer(with_text), answer(without_text), None, tolerance).to_dict()


def summarize(rows: list[dict]) -> ob.OptionBiasSummary:
    return ob.OPTION_BIAS.summarize([ob.Row.from_dict(row) for row in rows], {})


def test_card_example_is_option_biased_at_one_percent() -> None:
    row = grade_at(0.01, "easy_9", FORMAT_A_OUTPUT, FORMAT_B_OUTPUT)
    assert row["answer_with"] == "C" and row["correct_with_options"] is True
    assert row["judge_verdict"] == "NUMERICAL_MISMATCH"
    assert row["answer_without"] == "8.15%"
    assert row["correct_without_options"] is False and row["option_biased"] is True
    assert row["response_without"] == FORMAT_B_OUTPUT  # full response kept


def test_card_example_is_on_the_edge_of_the_default_window() -> None:
    """8.15% is 1.9% (0.15 points) from 8.0%, half the key's gap to 7.7%: the acceptance window (gold ±
    min(2 %, half the gap to the nearest option) = ± 0.15) excludes its edge, so the card's answer is a
    mismatch even at 2 %."""
    row = grade("easy_9", FORMAT_A_OUTPUT, FORMAT_B_OUTPUT)
    assert row["judge_verdict"] == "NUMERICAL_MISMATCH" and row["option_biased"] is True


def test_semiannual_answer_matches() -> None:
    text = "(1 + r/2)^12 = 1.6, so r/2 = 3.99% and the stated annual rate is 7.98% compounded semiannually."
    row = grade("easy_9", FORMAT_A_OUTPUT, text)
    assert row["judge_verdict"] == "NUMERICAL_MATCH" and row["option_biased"] is False


def test_value_closer_to_distractor_is_a_mismatch_inside_tolerance() -> None:
    # easy_3: C $113,733 is right; $113,300 is within 2% of it but nearer to B's $113,330.
    q = load_dataset("easy", limit=4)[3]
    QUESTIONS[q.id] = q
    row = grade(q.id, "ANSWER: C", "FV = 75,000 × 1.0175^24. Final answer: $113,300")
    assert row["judge_verdict"] == "NUMERICAL_MISMATCH"
    row = grade(q.id, "ANSWER: C", "FV = 75,000 × (1 + 0.07/4)^24 = $113,733.21")
    assert row["judge_verdict"] == "NUMERICAL_MATCH"


def test_text_answer_goes_to_the_judge() -> None:
    text = "The nominal risk-free rate equals the real risk-free rate plus a premium for expected inflation."
    correct = answer("", parsed={"correct": True, "reasoning": "Names expected inflation."})
    row = grade("easy_0", "ANSWER: C", text, correct)
    assert row["judge_verdict"] == "JUDGE_CORRECT" and row["judge_reasoning"] == "Names expected inflation."
    wrong = answer("", parsed={"correct": False, "reasoning": "Says liquidity."})
    row = grade("easy_0", "ANSWER: C", "It is the premium for liquidity.", wrong)
    assert row["judge_verdict"] == "JUDGE_INCORRECT" and row["option_biased"] is True


def test_numeric_gold_without_a_number_in_the_response_goes_to_the_judge() -> None:
    judged = answer("", parsed={"correct": False, "reasoning": "No rate given."})
    row = grade("easy_9", FORMAT_A_OUTPUT, "We would need to solve for the periodic rate first.", judged)
    assert row["judge_verdict"] == "JUDGE_INCORRECT"


def test_failures_are_excluded_not_wrong() -> None:
    failed_judge = answer("", error="HTTP 500 after 5 attempts", error_kind="failed")
    row = grade("easy_0", "ANSWER: C", "Expected inflation.", failed_judge)
    assert row["judge_verdict"] == "JUDGE_FAILED" and row["correct_without_options"] is None
    row = grade("easy_0", "ANSWER: C", "", error="timeout", error_kind="failed")
    assert row["judge_verdict"] == "MODEL_FAILED" and row["option_biased"] is None
    assert ob.Row.from_dict(row).without_options == Outcome.exclude("failed", "timeout")
    row = grade("easy_0", "ANSWER: C", "   ")
    assert row["judge_verdict"] == "NO_ANSWER" and row["correct_without_options"] is False
    summary = summarize([grade("easy_0", "ANSWER: C", "Expected inflation.", failed_judge),
                         grade_at(0.01, "easy_9", FORMAT_A_OUTPUT, FORMAT_B_OUTPUT)])
    assert summary.n_paired == 1 and summary.excluded_reasons == {"JUDGE_FAILED": 1}
    assert summary.accuracy_with_options == 1.0 and summary.accuracy_without_options == 0.0


def test_no_letter_is_wrong_and_counted() -> None:
    row = grade("easy_9", "It depends on the compounding convention.", FORMAT_B_OUTPUT)
    assert row["answer_with"] is None and row["correct_with_options"] is False and row["no_answer_with"]
    assert summarize([row]).n_no_answer_with_options == 1


@pytest.mark.parametrize("model, b, c, acc_with, acc_without", [
    ("gpt-4o-mini", 147, 127, 0.8256, 0.8062),
    ("gpt-5-mini", 117, 50, 0.9283, 0.8634),
])
def test_reference_runs_recompute_their_own_summary(model, b, c, acc_with, acc_without) -> None:
    path = REFERENCE_DIR / f"A5_option_bias_{model}.json"
    mine, theirs = load_run(ob.OPTION_BIAS, path).as_published, json.loads(path.read_text())["summary"]
    assert (mine.mcnemar_test.b, mine.mcnemar_test.c) == (b, c) == (
        theirs["mcnemar_test"]["b"], theirs["mcnemar_test"]["c"])
    assert round(mine.accuracy_with_options, 4) == acc_with == theirs["accuracy_with_options"]
    assert round(mine.accuracy_without_options, 4) == acc_without == theirs["accuracy_without_options"]
    assert round(mine.option_bias, 4) == theirs["option_bias"]
    assert mine.n_biased_questions == theirs["n_biased_questions"]
    assert mine.mcnemar_test.chi2 == pytest.approx(theirs["mcnemar_test"]["chi2"], abs=1e-4)
    assert mine.mcnemar_test.significant == theirs["mcnemar_test"]["significant"]


def test_options_that_share_the_number_go_to_the_judge() -> None:
    # easy_277: C "a gain of €3.3 million on the income statement" against A "other comprehensive income of
    # €3.3 million": the right number in the wrong place is not a match.
    q = load_dataset("easy", limit=278)[277]
    QUESTIONS[q.id] = q
    judged = answer("", parsed={"correct": False, "reasoning": "Puts the gain in OCI."})
    row = grade(q.id, "ANSWER: C", "It is recognised in other comprehensive income: €3.3 million.", judged)
    assert row["judge_verdict"] == "JUDGE_INCORRECT"


def test_truncated_and_refused_answers_are_excluded_or_counted_never_guessed() -> None:
    """A response cut by the token limit is excluded (both formats); a refusal is not correct, counted apart."""
    cut = "FV = 75,000 × (1 + 0.07/4)^24. First, 0.07/4 = 0.0175, and 1.0175^24 is about"
    row = grade("easy_9", FORMAT_A_OUTPUT, cut, finish_reason="length")
    assert row["judge_verdict"] == "TRUNCATED" and row["correct_without_options"] is None
    assert row["open_status"] == "truncated"
    refusal = "I can't answer this without the answer choices. Please provide options A, B and C."
    row = grade("easy_9", FORMAT_A_OUTPUT, refusal)
    assert row["judge_verdict"] == "NO_ANSWER" and row["correct_without_options"] is False
    assert row["open_status"] == "no_answer"
    q = QUESTIONS["easy_9"]
    cut_mcq = ob.grade_question(q, answer("Let me compute the rate: (1.6)^(1/12) =", finish_reason="length"),
                                answer("FINAL ANSWER: 7.98%"), None, 0.02)
    assert cut_mcq.correct_with_options is None and cut_mcq.pair.exclusion == "TRUNCATED (with options)"
    assert cut_mcq.with_options.excluded == "truncated"
    assert cut_mcq.answer_source == "final_line" and cut_mcq.judge_verdict == "NUMERICAL_MATCH"


@pytest.mark.parametrize("model, changes, n, bias, n_answerable, bias_answerable", [
    ("gpt-4o-mini", {"refusal judged correct: not correct": 3}, 1032, 0.0223, 704, 0.0412),
    ("gpt-5-mini", {"empty open answer: excluded, not judged": 58,
                    "no letter recorded with options: excluded, not wrong": 10,
                    "refusal judged correct: not correct": 56}, 972, 0.1101, 660, 0.0621),
])
def test_reference_runs_regraded(model, changes, n, bias, n_answerable, bias_answerable) -> None:
    """easy_31 (gpt-5-mini): "I can't choose the correct statement without seeing the answer choices. Please
    paste the list" was judged CORRECT by the study's judge; here it is no answer, so not correct."""
    run = load_run(ob.OPTION_BIAS, REFERENCE_DIR / f"A5_option_bias_{model}.json", keys="original")  # the rules alone
    assert run.regrade_changes == changes
    s = run.summary
    assert (s.n_paired, round(s.option_bias, 4)) == (n, bias)
    assert (s.answerable.n_paired, round(s.answerable.option_bias, 4)) == (n_answerable, bias_answerable)


def test_a_reply_whose_answer_matches_two_options_is_excluded_not_guessed() -> None:
    from cfa_lib.data import questions_by_id
    from cfa_lib.experiments.outcome import grade_letter
    from cfa_lib.models import Completion

    question = questions_by_id("easy")["easy_3"]  # A $112,555, B $113,330, C $113,733
    reply = Completion(text='{"answer": "A", "final_answer": "C"}', model="m", finish_reason="stop")
    outcome = grade_letter(reply, question)
    assert outcome.excluded == "letter_undecided" and outcome.correct is None
    from cfa_lib.experiments.study_files import file_code, letter_error, letter_from_file
    assert file_code(outcome) == "LETTER_UNDECIDED" and "two letters" in outcome.reason

    assert letter_from_file(None, None, letter_error(outcome)).excluded == "letter_undecided"  # as a file reads back

"""The hand-labelled grading corpus (tests/grading_corpus/): every row's verdict, value and letter, and
focused tests per class of the issue, on real response texts of the corpus."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import cfa_lib
from cfa_lib import grade_open_answer
from cfa_lib.answers import Number, extract_choice, extract_number, grade_choice, numeric_key
from cfa_lib.answers.commitment import final_answer_line
from cfa_lib.answers.hedges import is_hedge
from cfa_lib.answers.question_unit import stem_unit
from cfa_lib.data import load_dataset
from cfa_lib.prompts import OPEN_SYSTEM, PROMPT_VERSION

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "grading_corpus"
OPEN = [json.loads(line) for line in (CORPUS / "open.jsonl").read_text(encoding="utf-8").splitlines()]
MCQ = [json.loads(line) for line in (CORPUS / "mcq.jsonl").read_text(encoding="utf-8").splitlines()]
ROWS = {row["id"]: row for row in OPEN + MCQ}

# Labels whose expected_value disagrees with the corpus's own rules (the verdicts agree); see the report.

# Rows labelled 'incorrect' that the reader defers on purpose: without an answer line, the key's value stands in the
# second half of the response (an aside, 'The following year it rises to about $77,780'), so the value read is not
# a safe 'incorrect' (settle.key_in_second_half). A deferral costs a judge call; it is never a wrong verdict.
DEFERRED = {"open-060", "open-062", "open-086"}
# Without an answer line, a word next to the value that the reader's English lexicon does not know defers the row
# (cfa_lib.answers.neighbourhood): 'a 3% chance', 'amortisation expense ≈ ¥9,876,543'. A deferral, not an error.
UNREAD_WORD = {
    "open-043": "chance", "open-084": "amortisation", "open-095": "applies", "open-099": "reduction",
    "open-100": "price", "open-136": "would", "open-227": "back", "open-230": "leased", "open-232": "target",
}


@pytest.fixture(scope="module")
def questions():
    return {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}


def grade(questions, row_id: str):
    row = ROWS[row_id]
    return grade_open_answer(questions[row["question_id"]], row["response"], row["finish_reason"])


@pytest.mark.parametrize("row", OPEN, ids=[row["id"] for row in OPEN])
def test_open_row(questions, row):
    got = grade_open_answer(questions[row["question_id"]], row["response"], row["finish_reason"])
    if row["id"] in DEFERRED:
        assert (got.verdict, row["expected_verdict"]) == ("judge", "incorrect"), got
        assert "second half" in got.reason
        return
    if row["id"] in UNREAD_WORD:
        assert (got.verdict, got.reason) == ("judge", f"an unknown word next to the value: {UNREAD_WORD[row['id']]}")
        return
    assert got.verdict == row["expected_verdict"], (got, row["note"])
    if row["expected_value"] is not None:
        assert got.value is not None and math.isclose(got.value.value, row["expected_value"], rel_tol=1e-6), got
    if row["expected_verdict"] in ("correct", "incorrect"):
        assert got.answer_source == row["answer_source"]


@pytest.mark.parametrize("row", MCQ, ids=[row["id"] for row in MCQ])
def test_mcq_row(questions, row):
    got = grade_choice(questions[row["question_id"]], row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (row["expected_verdict"], row["expected_letter"]), (got, row["note"])


def test_value_doubts_are_still_graded_right(questions):
    assert grade(questions, "open-023").value == Number(3.70, "$")
    assert grade(questions, "open-045").value == Number(0.68, None)


# --- 1. the last number is not the answer --------------------------------------------------------------
@pytest.mark.parametrize(
    ("row_id", "value"),
    [
        ("open-037", 7.99),  # "For reference, ... 8.148%"
        ("open-047", 0.625),  # ", which means the probability of a down move is 0.375"
        ("open-050", 124000),  # "Answer:" heading, then the method, then "For comparison, FIFO ... £122,000"
        ("open-064", 2.2),  # "... determines the next coupon ... 2.00%"
        ("open-065", 98.11),  # "The bond trades at a discount of 1.89"
        ("open-069", 4.4),  # "On a 360-day money-market basis ... 4.34%"
        ("open-161", 0.75),  # "If ... 14.5 bps ..., but Exhibit 2 says gross, so the correct figure is 75 bps"
    ],
)
def test_committed_conclusion_not_last_number(questions, row_id, value):
    got = grade(questions, row_id)
    assert got.verdict == "correct" and math.isclose(got.value.value, value), got


def test_final_answer_line_wins(questions):
    got = grade(questions, "open-068")  # FINAL ANSWER 7.21%, then "For comparison ... 7.46%"
    assert got.answer_source == "final_line" and got.value == Number(7.21, "%")
    assert final_answer_line("x\n**FINAL ANSWER:**\n$5.54") == "$5.54"
    assert final_answer_line("<no line>") is None


def test_think_block_never_counts(questions):
    assert grade(questions, "open-267").value == Number(3866.56, "£")  # a FINAL ANSWER inside <think>
    assert grade(questions, "open-268").verdict == "no_answer"  # nothing after the block


# --- 2. scale words and stem units -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("row_id", "value"),
    [
        ("open-077", 1003333),  # narrow no-break spaces
        ("open-082", 169.9e6),  # \boxed{\$169.9\ \text{million}}
        ("open-085", 100e6),  # bare 100 with "(€ millions)" in the stem
        ("open-088", 2.36),  # bare 236 "in basis points"
        ("open-097", -12.0),  # (12.0)%; open-099, '$(0.41) million' after 'a reduction:', now defers on the word
        ("open-107", 5.54),  # "FINAL ANSWER:    $ 5.54"
    ],
)
def test_scale_words(questions, row_id, value):
    got = grade(questions, row_id)
    assert math.isclose(got.value.value, value, rel_tol=1e-9), got


def test_stem_unit_reading(questions):
    assert stem_unit(questions["easy_579"].stem).bps
    assert stem_unit(questions["easy_212"].stem).scale == 1e6
    assert stem_unit(questions["easy_3"].stem) is None
    assert stem_unit(questions["challenge_50"].stem) is None  # "($ billions)" in an exhibit, not the question


# --- 3. sign words ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("So the stock experienced a continuously compounded decline of 10.90%.", -10.9),
        ("The stock **fell by 10.32%** over the period.", -10.32),
        ("The bond's price falls by approximately 3.487%.", -3.487),
        ("Answer: the share's value dropped 16%.", -16.0),
        ("The weakest linear relationship is the correlation of negative 0.24.", -0.24),
        ("With the market rate above the coupon, the price **drops to 96.28** per 100 of par.", 96.28),
        ("The bond's price rises by about 1.78%.", 1.78),
    ],
)
def test_sign_words(text, value):
    assert math.isclose(extract_number(text).value, value)


def test_sign_decides_against_a_signed_key(questions):
    assert grade(questions, "open-127").verdict == "incorrect"  # "a decrease of $0.41 million", key +$0.41m
    assert grade(questions, "open-123").verdict == "incorrect"  # "a decrease of 1.78%", key +1.78%


# --- 4. hedges ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("row_id", ["open-139", "open-141", "open-146", "open-151", "open-156", "open-163",
                                    "open-165"])
def test_hedges_are_no_answer(questions, row_id):
    assert grade(questions, row_id).verdict == "no_answer"


def test_alternatives_then_a_choice_is_graded(questions):
    assert grade(questions, "open-142").verdict == "correct"
    assert grade(questions, "open-161").verdict == "correct"
    assert not is_hedge("By symmetry, a return between 5% and 11% would be twice that.")
    assert is_hedge("FINAL ANSWER: either 8.0% or 8.16%")


def test_words_with_either_go_to_the_judge(questions):
    q = questions["easy_470"]  # correct option: "They are either callable or putable."
    assert grade_open_answer(q, "They are either callable or putable.").verdict == "judge"


# --- 5. refusals -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("row_id", ["open-166", "open-172", "open-188", "open-190"])
def test_refusals_are_no_answer(questions, row_id):
    assert grade(questions, row_id).verdict == "no_answer"


def test_complaint_then_answer_is_graded(questions):
    assert grade(questions, "open-184").verdict == "correct"
    assert grade(questions, "open-186").verdict == "incorrect"


# --- 6. truncation ------------------------------------------------------------------------------------------
def test_truncated_open_and_mcq(questions):
    assert grade(questions, "open-196").verdict == "truncated"  # "≈ $113,733" stated, then cut
    assert grade(questions, "open-201").verdict == "correct"  # FINAL ANSWER reached before the cut
    row = ROWS["mcq-001"]
    assert grade_choice(questions[row["question_id"]], row["response"], "length").verdict == "truncated"
    row = ROWS["mcq-006"]
    assert grade_choice(questions[row["question_id"]], row["response"], "length").verdict == "correct"


# --- 7. echoes and the window --------------------------------------------------------------------------------
@pytest.mark.parametrize(("row_id", "verdict"), [("open-217", "incorrect"), ("open-212", "incorrect"),
                                                 ("open-215", "correct"), ("open-233", "correct")])
def test_echoes(questions, row_id, verdict):
    assert grade(questions, row_id).verdict == verdict


# --- 8. label numbers -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("qid", ["easy_61", "easy_716", "easy_826", "challenge_44", "challenge_4"])
def test_label_numbers_are_not_keys(questions, qid):
    assert numeric_key(questions[qid].choices, questions[qid].answer) is None


def test_counts_stay_numeric(questions):
    for qid in ("easy_63", "easy_48", "challenge_47", "challenge_38"):
        assert numeric_key(questions[qid].choices, questions[qid].answer) is not None, qid
    assert grade(questions, "open-237").verdict == "judge"  # FINAL ANSWER: Kurtosis of 3


# --- 9. MCQ: the ANSWER line wins, negations --------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "letter"),
    [
        ("ANSWER: C\n\nIf the rate had been compounded annually instead, the answer would be A ($112,555).", "C"),
        ("ANSWER: C\n\nHad the $2.00 been next year's dividend, the answer would be B ($66.67).", "C"),
        ("So it's not A (simple discount) or C (annual compounding) — it's B.", "B"),
        ("So a 100 bp rise causes a decline of **less than 5%** — the answer is not C but **B**.", "B"),
        ("ANSWER: ~~A~~ C?\n\nHonestly it could be either.", None),
    ],
)
def test_mcq_answer_line_and_negations(text, letter):
    assert extract_choice(text) == letter


# --- the API, the prompt, the command -------------------------------------------------------------------------
def test_top_level_exports(questions):
    assert cfa_lib.load_dataset is load_dataset and cfa_lib.extract_choice is extract_choice
    got = grade_open_answer(questions["easy_3"], "FV = $113,733.21\n\nFINAL ANSWER: $113,733.21")
    assert got.verdict == "correct" and got.answer_source == "final_line"
    assert got.to_dict() == {"verdict": "correct", "value": 113733.21, "unit": "$", "letter": None,
                             "answer_source": "final_line", "reason": got.reason}
    assert got.correct is True and grade_open_answer(questions["easy_3"], "").correct is None


def test_open_prompt_asks_for_the_final_line():
    assert OPEN_SYSTEM.endswith("End your response with one line: FINAL ANSWER: <value with its unit>.")
    assert len(PROMPT_VERSION) == 12


def test_grade_command(tmp_path):
    lines = [
        json.dumps({"question_id": "easy_3", "response": "FINAL ANSWER: $113,733", "finish_reason": "stop"}),
        "not json",
        json.dumps({"question_id": "easy_3", "response": "Quarterly rate = 1.75%, FV = 75,000 ×",
                    "finish_reason": "length"}),
        json.dumps({"question_id": "easy_999999", "response": "x"}),
        json.dumps({"response": "x"}),
        json.dumps({"question_id": "challenge_61", "response": "Opportunity cost: 45 bps."}),
    ]
    source = tmp_path / "responses.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "verdicts.jsonl"
    done = subprocess.run([sys.executable, "-m", "cfa_lib.grade", str(source), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 1, done.stderr
    assert "line 2: not JSON" in done.stderr
    assert "line 4: unknown question id 'easy_999999'" in done.stderr
    assert "line 5: missing field question_id" in done.stderr
    verdicts = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [v["verdict"] for v in verdicts] == ["correct", "truncated", "correct"]
    assert verdicts[2] == {"question_id": "challenge_61", "verdict": "correct", "value": 0.45, "unit": "%",
                           "answer_source": "heuristic", "reason": verdicts[2]["reason"]}
    assert "correct    2" in done.stdout and "bad lines  3" in done.stdout


def test_grade_command_skips_an_undecodable_line_and_grades_the_rest(tmp_path):
    good = json.dumps({"question_id": "easy_3", "response": "FINAL ANSWER: $113,733"}).encode()
    latin1 = json.dumps({"question_id": "easy_3", "response": "FINAL ANSWER: 113 733 €"},
                        ensure_ascii=False).encode("cp1252")  # a Windows export, not UTF-8
    source = tmp_path / "responses.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + good + b"\n" + latin1 + b"\n" + good + b"\n")
    out = tmp_path / "verdicts.jsonl"
    done = subprocess.run([sys.executable, "-m", "cfa_lib.grade", str(source), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 1, done.stderr
    assert "line 2: not UTF-8 (byte 0x80 at column" in done.stderr and "Traceback" not in done.stderr
    assert [json.loads(line)["verdict"] for line in out.read_text(encoding="utf-8").splitlines()] == ["correct"] * 2
    assert "bad lines  1" in done.stdout


def test_grade_command_grades_against_the_audited_keys_as_every_run_does(tmp_path):
    """The key audit corrected easy_77 (A to B: the false statement is B's 'shorter tails') and set easy_61 aside
    (several options right): the command grades against the audited key and names the question set aside;
    `--keys original` grades both against the dataset's keys."""
    lines = [json.dumps({"question_id": "easy_77", "format": "mcq", "response": "ANSWER: B"}),
             json.dumps({"question_id": "easy_61", "format": "mcq", "response": "ANSWER: B"})]
    source = tmp_path / "responses.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def grade(*extra: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
        out = tmp_path / "verdicts.jsonl"
        done = subprocess.run([sys.executable, "-m", "cfa_lib.grade", str(source), "--out", str(out), *extra],
                              capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
        return done, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]

    done, verdicts = grade()
    assert done.returncode == 0, done.stderr
    assert [(v["question_id"], v["verdict"]) for v in verdicts] == [("easy_77", "correct")]
    assert "line 2: easy_61 is set aside by the key audit (several_right)" in done.stderr
    assert "set aside  1" in done.stdout
    done, verdicts = grade("--keys", "original")
    assert [(v["question_id"], v["verdict"]) for v in verdicts] == [("easy_77", "incorrect"), ("easy_61", "correct")]

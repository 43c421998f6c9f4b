"""Issue #31: rewrites of corpus rows that no grader reads differently, found by benchmarks/grading_invariance.py.

Each case is a real corpus row, rewritten the way models often write (a heading first, the question restated
before the reply, its inputs listed after it, the answer label in another language); before the change each
rewrite turned the row's decided verdict, letter or value into another one. The label is the writer's, for the row
as written.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from benchmarks.grading import corpus_row
from benchmarks.grading_invariance import REWRITES
from cfa_lib.answers import grade_choice, grade_open_answer
from cfa_lib.answers.structured import data_block


def _graded(row_id: str, corpus: str, rewrite):
    question, row = corpus_row(row_id, corpus)
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    return grade(question, rewrite(row["response"], question.stem), row["finish_reason"]), row


@pytest.mark.parametrize(("corpus", "row_id", "value"), [
    ("grading_corpus_kept_out_16", "T-open-136", 58.54),  # {"price_per_100": 58.54, "ytm": 0.045, "years": 12}
    ("grading_corpus_kept_out_20", "X-open-048", 0.64),  # Answer: {"value": 64.0, "unit": "bps"} (key in %)
])
def test_a_json_reply_under_a_heading_is_read_as_json(corpus, row_id, value):
    got, row = _graded(row_id, corpus, lambda text, stem: "## Solution\n\n" + text)
    assert got.verdict == row["expected_verdict"] and math.isclose(got.value.value, value)


def test_an_xml_reply_with_prose_around_it_is_read_by_its_fields():
    got, _ = _graded("AA-mcq-031", "grading_corpus_kept_out_22",  # '<choice>A</choice><distractors>B = 18.20, ...'
                     lambda text, stem: f"## Solution\n\n{text}\n\nThanks for asking.")
    assert (got.verdict, got.letter) == ("correct", "A")
    # sibling elements are one reply's fields; two with prose between them are not one reply
    assert data_block("<a>1</a>\n<b>2</b>") == ({"a": "1", "b": "2"}, "")
    assert data_block("<a>1</a>\nThen:\n<b>2</b>") is None
    assert data_block("Reply:\n<r>\n<choice>B</choice>\n</r>") == ({"choice": "B"}, "Reply:\n\n")


def test_an_answer_by_the_options_words_under_a_heading():
    got, _ = _graded("U-mcq-056", "grading_corpus_kept_out_17",  # 'Default risk. For ..., loss severity ... secondary.'
                     lambda text, stem: "## Solution\n\n" + text)
    assert (got.verdict, got.letter) == ("correct", "A")


@pytest.mark.parametrize("label", ["Endgültige Antwort:", "Réponse finale :", "Respuesta final:", "最终答案："])
def test_the_final_answer_line_in_other_languages(label):
    # '$820,027' on the answer line, then 'should the $200,000 common dividend be added back? No ...'
    got, _ = _graded("U-open-115", "grading_corpus_kept_out_17",
                     lambda text, stem: text.replace("FINAL ANSWER:", label))
    assert got.verdict == "correct" and math.isclose(got.value.value, 820027)


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    ("grading_corpus_kept_out_12", "P-open-222", "no_answer", None),  # a refusal: the stem's $50,000 is no answer
    ("grading_corpus_kept_out_6", "J-mcq-085", "correct", "C"),  # '(42 − 65 + 2)/65 = −32.3%' after the stem
    ("grading_corpus_kept_out_24", "AB-open-038", "incorrect", None),  # {"answer": 41.0, "confidence": 0.86}
    ("grading_corpus_fresh", "fopen-145", "no_answer", None),  # a reasoning block and nothing after it
])
def test_the_question_restated_before_the_reply(corpus, row_id, verdict, letter):
    got, _ = _graded(row_id, corpus, lambda text, stem: f"**Question.** {stem}\n\n{text}")
    assert (got.verdict, got.letter) == (verdict, letter), got


@pytest.mark.parametrize(("corpus", "row_id", "inputs", "value"), [
    ("grading_corpus_kept_out_11", "O-open-048", "376, 3%", 1721.97),  # {"pv": 1721.97, "payments": 5, ...}
    # 'FINAL ANSWER: €10.173.255' and inputs written with decimal points: two dot groups have one reading
    ("grading_corpus_kept_out_2", "eopen-011", "10, 6.5, 6.0", 10173255),
])
def test_the_questions_inputs_listed_after_the_reply(corpus, row_id, inputs, value):
    got, row = _graded(row_id, corpus, lambda text, stem: f"{text.rstrip()}\n\n(Inputs: {inputs}.)")
    assert got.verdict == row["expected_verdict"] and math.isclose(got.value.value, value)


@pytest.mark.parametrize(("corpus", "row_id", "verdict"), [
    # 'The value $77.30 matches none of the options exactly.' (no_answer): the closing list no longer hides the close
    ("grading_corpus_kept_out_40", "AR-mcq-068", "no_answer"),
    ("grading_corpus_kept_out_35", "AP-open-112", "no_answer"),  # 'It depends on the payment timing:' and a value each
    ("grading_corpus_kept_out_22", "AA-mcq-082", "correct"),
    # the question's digits as it writes them ('40' of '$40 million'), and one number under an inputs label
    ("grading_corpus_kept_out_38", "AL-open-097", "no_answer"),  # 'I get $47 million, but ... $39 million instead.'
    ("grading_corpus", "open-169", "no_answer"),  # '... Question 8 isn't included here ... Please provide that ...'
])
def test_a_closing_list_of_the_questions_inputs_is_dropped(corpus, row_id, verdict):
    """A paragraph after the reply that only lists the question's numbers (`benchmarks/grading_invariance.py`'s
    'the question's numbers listed last') answers nothing: each of these rows' verdicts changed under it before."""
    listed_last = REWRITES["the question's numbers listed last"]
    got, row = _graded(row_id, corpus, lambda text, stem: listed_last(text, stem, False))
    assert got.verdict == row["expected_verdict"] == verdict, got


def test_a_closing_list_of_the_questions_inputs_is_dropped_as_written():
    """AE-open-053: '**Result: 5.34**', the working, then 'Restating the givens: 7%; 20; 10.594.' (labelled correct,
    5.336): the list was read as a second value and sent the row to the judge."""
    question, row = corpus_row("AE-open-053", "grading_corpus_kept_out_27")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert got.verdict == row["expected_verdict"] == "correct" and math.isclose(got.value.value, 5.336), got


def test_one_value_said_twice_is_no_list_of_inputs():
    """'about 100 per 100 of par value' states 100, which the stem also writes ('per 100 of par'): a result."""
    got, row = _graded("open-217", "grading_corpus", lambda text, stem: text)
    assert got.verdict == row["expected_verdict"] == "incorrect" and got.value.value == 100


def test_a_refusal_that_restates_one_of_the_questions_numbers_commits_to_none():
    """'Please provide the answer choices; I can't select the closest value without them.' then '(Duration given:
    7.020.)': a refusal still; the same number after an answer marker is a committed answer (an echo may be right)."""
    got, row = _graded("open-182", "grading_corpus", lambda text, stem: f"{text}\n\n(Duration given: 7.020.)")
    assert got.verdict == row["expected_verdict"] == "no_answer"
    got, _ = _graded("open-182", "grading_corpus", lambda text, stem: f"{text}\n\nAnswer: 7.020")
    assert got.verdict == "incorrect" and got.value.value == 7.02


@pytest.mark.parametrize(("corpus", "row_id", "value"), [
    ("grading_corpus_kept_out_14", "R-open-128", 9.40),  # 'Initial answer: 23.58%. On reflection, ... 9.40%.'
    ("grading_corpus_kept_out_12", "P-open-029", -42.97),  # 'FINAL ANSWER: −42.97 %': '"-42.97 %"' keeps its sign
])
def test_a_json_block_closing_a_reply_of_prose_is_its_answer_line(corpus, row_id, value):
    got, row = _graded(row_id, corpus, lambda text, stem: re.sub(
        r"(?m)^FINAL ANSWER: *(.+?) *$", lambda m: '```json\n{"final_answer": "' + m.group(1) + '"}\n```', text))
    assert got.verdict == row["expected_verdict"] and math.isclose(got.value.value, value)


@pytest.mark.parametrize(("corpus", "row_id", "value"), [
    ("grading_corpus", "open-091", 0.45),  # 'FINAL ANSWER: $45\,\text{bps}$' (bps read as percent before)
    ("grading_corpus_kept_out_4", "gopen-031", 113733.2),  # '$1.137332 \times 10^{5}$ USD' (read 1.137332)
])
def test_latex_escaped_inside_a_json_answer_line_reads_as_latex(corpus, row_id, value):
    got, row = _graded(row_id, corpus, lambda text, stem: re.sub(
        r"(?m)^FINAL ANSWER: *(.+?) *$", lambda m: '```json\n' + json.dumps({"final_answer": m.group(1)}) + '\n```',
        text))
    assert got.verdict == row["expected_verdict"] and math.isclose(got.value.value, value)


def test_a_reply_quoted_as_a_whole_reads_as_the_reply():
    # '| ($ in thousands) | |' ... '| **Cash received from customers** | **106,000** |', every line after '> '
    got, row = _graded("L-open-193", "grading_corpus_kept_out_8",
                       lambda text, stem: "\n".join("> " + line for line in text.split("\n")))
    assert got.verdict == row["expected_verdict"] == "correct" and got.value.value == 106_000_000


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    ("grading_corpus_kept_out_11", "O-open-100", "no_answer", None),  # '<think>… about 18%.</think>' and nothing else
    ("grading_corpus_kept_out_21", "Y-mcq-024", "correct", "A"),  # '<analysis>…</analysis>\n<answer>A</answer>'
    ("grading_corpus_kept_out_23", "Z-mcq-026", "no_answer", None),  # {"answer": ["A", "B"], "note": "cannot decide"}
])
def test_a_heading_over_a_reply_says_nothing(corpus, row_id, verdict, letter):
    got, row = _graded(row_id, corpus, lambda text, stem: "## Solution\n\n" + text)
    assert (got.verdict, got.letter) == (verdict, letter) == (row["expected_verdict"], row.get("expected_letter"))


def test_scientific_notation_inside_a_box_keeps_the_box_closed():
    """'FINAL ANSWER: $\\boxed{€2.9243 × 10^4}$': the exponent's reader took the box's closing brace for its own
    and the value was read as €2,924."""
    got, row = _graded("AF-open-020", "grading_corpus_kept_out_28", lambda text, stem: re.sub(
        r"(?m)^FINAL ANSWER: *(.+?) *$", r"FINAL ANSWER: $\\boxed{\1}$", text))
    assert got.verdict == row["expected_verdict"] == "correct" and math.isclose(got.value.value, 29243)


@pytest.mark.parametrize(("corpus", "row_id"), [
    ("grading_corpus_kept_out_33", "AN-mcq-043"),  # 'ANSWER: B' ... 'Wait, I used ... instead ...' 'ANSWER: C'
    ("grading_corpus_kept_out_32", "AM-mcq-046"),  # 'ANSWER: A' ... 'On reflection, B is better.' 'ANSWER: B'
])
def test_two_answer_lines_written_as_json_read_as_answer_lines(corpus, row_id):
    """Each 'ANSWER: X' line written '{"answer": "X"}': the last one answers, as the last answer line does ('instead'
    in the sentence before it made the letter a hypothetical)."""
    got, row = _graded(row_id, corpus, lambda text, stem: re.sub(r"ANSWER: ([A-C])", r'{"answer": "\1"}', text))
    assert (got.verdict, got.letter) == (row["expected_verdict"], row["expected_letter"])



def test_a_value_in_words_on_the_answer_line_is_no_label():
    """kopen-064 ('... which is zero.') with its answer line as JSON, '{"final_answer": "zero"}': 'zero' is a value in
    words, not the question's words restated, so it is no `no_answer` (the judge reads it)."""
    got, row = _graded("kopen-064", "grading_corpus_kept_out", lambda text, stem: REWRITES["the answer line as JSON"](
        text, stem, False))
    assert row["expected_verdict"] == "correct" and got.verdict == "judge", got

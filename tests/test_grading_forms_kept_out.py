"""Issue #31: the forms kept-out corpora 14 to 26 found, each after that corpus's one out-of-sample scoring.

Every case is a row of the corpus as its blind writer wrote and labelled it; each failed before the change (a
confident verdict other than the label). Where the reader now defers to the judge instead of deciding, the test
says so: a deferral is cheap, a wrong verdict is a defect. From the change on these rows are in-sample.
"""

from __future__ import annotations

import math
import re

import pytest

from benchmarks.grading import corpus_question, corpus_row
from cfa_lib.answers import grade_choice, grade_open_answer
from cfa_lib.answers.text import clean
from cfa_lib.data import questions_by_id


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (14, "R-mcq-013", "incorrect", "B"),  # 'The closest match is option (b).'
    (17, "U-mcq-011", "correct", "B"),  # 'That matches option (b).'
    (14, "R-mcq-023", "correct", "A"),  # a table whose row A is marked '✅ selected'
    (14, "R-mcq-024", "correct", "B"),  # {"final_answer": {"letter": "B", "value": "5.00%"}, ...}
    (16, "T-mcq-023", "correct", "C"),  # {"option_scores": {...}, "final": "C"}
    (17, "U-mcq-020", "correct", "B"),  # YAML 'selected_option: B' in a code block
    (15, "S-mcq-048", "correct", "C"),  # '答え：選択肢C' (answer: option C)
    (15, "S-mcq-070", "correct", "A"),  # 'B and C are wrong.': A by elimination
    (15, "S-mcq-075", "incorrect", "A"),  # the same words on an item keyed B
    (16, "T-mcq-069", "correct", "B"),  # 'A and C are wrong — A ignores growth ...'
    (17, "U-mcq-056", "correct", "A"),  # 'Default risk. For ... loss severity and liquidity risk are secondary.'
    (16, "T-mcq-028", "no_answer", None),  # '≈ $33.71. ~~B~~ C?': the value is C's, the letters are two
    (17, "U-mcq-025", "no_answer", None),  # 'EPS ≈ $1.14. That's either B or A ... I'd say B or A.'
    (16, "T-mcq-050", "judge", None),  # 'A looks right … but then again B … I'm not sure any more.' (no_answer)
    (17, "U-mcq-047", "judge", None),  # '→ A. Wait, should it be 360 days? Then 2.50% → B. Or A. Hard to say.'
    (18, "V-mcq-037", "correct", "A"),  # 'Respuesta: la opción a'
])
def test_letter_forms(corpus, row_id, verdict, letter):
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.letter) == (verdict, letter), (grade, row["note"])


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "value"), [
    (15, "S-open-037", "correct", 452_200),  # 'Interest expense for 2015 (€ 000s): 452.2': the note is not 2015's
    (15, "S-open-040", "judge", None),  # '63 dollars' against '$63 million' (incorrect: the unit is spelled out)
    (15, "S-open-113", "correct", 2_997),  # 'Answer: ~~£3,012~~ £2,997'
    (16, "T-open-117", "correct", 5.2),  # '= 7.84%… no, the current yield must use the current value: ... = 5.20%.'
    (16, "T-open-100", "judge", None),  # Portuguese 'Resposta: £5.370' among '£6.620 − £1.250' (correct, 5,370)
    (15, "S-open-079", "no_answer", None),  # 'FINAL ANSWER: 2.80% (365-day basis) / 2.90% (360-day basis)'
    (16, "T-open-072", "no_answer", None),  # '22.4% on a compound (geometric) basis or 24.9% on a simple-average basis'
    (17, "U-open-074", "no_answer", None),  # 'It depends on timing: £3,683.30 per month if ..., or £3,671.07 if ...'
    (17, "U-open-077", "no_answer", None),  # '... $41.86 if it is ... (D1 = D0 × 1.04), $40.25 if it is ...'
    (15, "S-open-077", "judge", None),  # "I think it's $37.42. Hmm, no — maybe $34.97. ... I'm not certain" (no_answer)
    (17, "U-open-119", "judge", None),  # '= 2.0%?? Hmm — or 3.0%... not sure my P(good) is right.' (no_answer)
    # '≈ 36.7 (could print as 36.6 or 36.8 depending on rounding of z)': correct to writer U, while writer M called
    # 'about 2.82% (or 2.81%, depending on rounding)' no_answer (kept-out corpus 9, M-open-107): the judge's
    (17, "U-open-080", "judge", None),
    (9, "M-open-107", "judge", None),
    # exactly half the coarse key's last digit away, nearer the key than any other option: correct to writer V
    # (half-up), not correct half-to-even
    (18, "V-open-102", "judge", None),  # '0.225' against '0.23.'
    (18, "V-open-103", "judge", None),  # '0.215' against '0.22'
    (18, "V-open-127", "judge", None),  # '$11.62. Actually, hmm, maybe it's $12.83. Or was the first right?'
    (18, "V-open-164", "no_answer", None),  # 'FINAL ANSWER: €122,222 (or €49,744 if the payments are made in arrears)'
    (18, "V-open-166", "judge", None),  # '= PMT × [1 − (1 + r)^−5]/r × (1 + r), ... a little under two thousand euros'
    (19, "W-open-032", "correct", 108_000_000),  # a table headed '| Item | Amount ($ 000s) |': '| Result | 108,000 |'
    # '| Base case (answer) | 8.38% |' above '| Alternative method | 8.18% |': the key, 8.18 %, in the second half
    (19, "W-open-051", "judge", None),
    (19, "W-open-069", "no_answer", None),  # '5.76% under a 360-day convention, 5.84% under a 365-day convention.'
    (19, "W-open-078", "correct", 0.65),  # 'Either 0.65 or 0.40; if forced to choose, 0.65.'
    (20, "X-open-037", "correct", 58.97),  # 'Per 1,000 of par the price is 589.7', asked per 100 of par
    (20, "X-open-048", "correct", 0.64),  # 'Answer: {"value": 64.0, "unit": "bps"}' against '64 bps'
    (20, "X-open-050", "incorrect", 416_002),  # '<answer>$416,002</answer> <note>$277,778 if rounded ...</note>'
    (20, "X-open-090", "correct", -21.5),  # 'the answer is 21.5% (a decline)' against −21.5%
    (20, "X-open-126", "incorrect", 270),  # 'Answer: $210.00 … Edit: …, so the answer changes to $270.00.'
    (20, "X-open-143", "correct", 5.0),  # 'FINAL ANSWER: 5.00%' as the last words of a reply cut for length

])
def test_open_forms(corpus, row_id, verdict, value):
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict, (grade, row["note"])
    assert value is None or math.isclose(grade.value.value, value, rel_tol=1e-6), grade


@pytest.mark.parametrize(("corpus", "row_id", "value"), [
    (15, "S-open-018", 1_303_433),  # 'FINAL ANSWER: $13,03,433': Indian lakh grouping
    (17, "U-open-017", 1_060_000),  # '$11,60,000 − $1,00,000 = $10,60,000'
    (17, "U-open-059", 10_540.17),  # {"pv_ordinary": 10038.26, "pv_due": 10540.17, "answer": "pv_due"}
    (17, "U-open-128", 63.1),  # 'FINAL ANSWER: 63.10%' then '... the project should be accepted.': no retraction
    (17, "U-open-099", 68_750),  # 'Réponse : 68 750 $ par an'
    (17, "U-open-104", 806_000),  # '정답: 약 80.6만 유로'
    (15, "S-open-045", 40_368),  # '| **Result** | **$40,368** |' above '| Periods used | 4 |'
    (16, "T-open-040", 48.96),  # '| **Result: V₀ = D₁/(r−g)** | **$48.96** |' above two sensitivity rows
    (15, "S-open-060", 243.91),  # '**Result: $243.91**' then 'Sensitivity: if ... $219.52; 1% lower → $273.18.'
    (19, "W-open-052", 68_000_000),  # '```json {"value": 68.0, "unit": "¥ millions"} ```'
    (19, "W-open-060", 15.1),  # '**$15.10**' then 'Explanation: ... at t = 2. Intermediate figures: 12.08, ...'
])
def test_forms_decided_that_went_to_the_judge(corpus, row_id, value):
    """Deferred before (a cost, not a defect): each is now decided as its writer labelled it."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == row["expected_verdict"] == "correct", (grade, row["note"])
    assert math.isclose(grade.value.value, value, rel_tol=1e-6), grade


@pytest.mark.parametrize(("row_id", "kind", "verdict", "answer"), [
    ("L-open-193", "open", "correct", 106_000_000),  # a table headed '($ in thousands)': '**106,000**' is $106 million
    ("L-mcq-086", "mcq", "correct", "A"),  # {"choice": "Carrying value.", ...}: the option's text as the choice
    ("L-mcq-091", "mcq", "correct", "A"),  # 'Answer: B. Wait — no. ... Investment property is held to earn rent ... A.'
])
def test_kept_out_8_misses(row_id, kind, verdict, answer):
    """Wrong decisions kept-out corpus 8 had kept since its scoring, in sample."""
    _older_corpus_row_is_graded(row_id, "grading_corpus_kept_out_8", kind, verdict, answer)


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "answer"), [
    (5, "I-open-022", "correct", 529.479452),  # '≈ 16,105 days' when months are asked (key 529)
    # '¹ Assumes ... at the end of years 17–20; ...': a span of years, no hedge; the key's value later in a remark
    (6, "J-open-075", "judge", None),
    (7, "K-open-089", "incorrect", 181.15),  # '(the sum of ... the Year 1–3 cash flows discounted at 14%)'
    (9, "M-open-133", "judge", None),  # '£722.21' against '£700.' among £100 and £600: exact, or rounded to hundreds?
])
def test_older_corpora_misses(corpus, row_id, verdict, answer):
    """Wrong decisions kept-out corpora 5 to 9 had kept since their scoring, in sample."""
    _older_corpus_row_is_graded(row_id, f"grading_corpus_kept_out_{corpus}", "open", verdict, answer)


def _older_corpus_row_is_graded(row_id: str, corpus: str, kind: str, verdict: str, answer) -> None:
    question, row = corpus_row(row_id, corpus)
    if kind == "open":
        grade = grade_open_answer(question, row["response"], row["finish_reason"])
        assert grade.verdict == verdict, grade
        assert answer is None or math.isclose(grade.value.value, answer, rel_tol=1e-6), grade
    else:
        grade = grade_choice(question, row["response"], row["finish_reason"])
        assert (grade.verdict, grade.letter) == (verdict, answer), grade


@pytest.mark.parametrize(("corpus", "row_id", "verdict"), [
    # the first pass (8.41 %, the key) in the first half, then 'Hmm, actually ... 8.87% is the answer': a revision
    (20, "X-open-119", "incorrect"),
    # 'Answer: $220.80' then a footnote: 'if one also discounts ... ≈ $210.10', the key: an aside or the answer?
    (8, "L-open-046", "judge"),
])
def test_the_key_in_the_second_half_defers_a_wrong_verdict(corpus, row_id, verdict):
    """Blind sets scored on arrival: half of the wrong 'incorrect' verdicts read without an answer line had the
    key's value in the response's second half; a wrong verdict there is not safe, a revision before it is."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert got.verdict == verdict, got


@pytest.mark.parametrize(("corpus", "row_id", "verdict"), [
    # 'So I'd go with the z-test when ...': no letter, no hedge at the end: it may answer by words; the judge reads
    (9, "M-mcq-024", "judge"),
    (19, "W-mcq-069", "no_answer"),  # 'I can't help with exam questions.': a refusal
    (7, "K-mcq-087", "no_answer"),  # '答案：A或C': two letters at the end
    (7, "K-mcq-082", "no_answer"),  # '≈ 39.8 per 100 of par' against 39.68 and 39.96: rounds to no option
])
def test_no_letter_is_no_answer_only_when_the_response_leaves_the_choice_open(corpus, row_id, verdict):
    """Replayed on the blind sets' first scores, a third of the `no_answer` verdicts given for want of a letter
    were wrong: the response had answered in a form the letter reader did not know."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    assert grade_choice(question, row["response"], row["finish_reason"]).verdict == verdict


def test_corpus_21_misses():
    """Writer Y's two wrong decisions on arrival (ed59f8a)."""
    # '... above the required return (4%), the bond must trade above par — at a premium of a bit under 7 points':
    # a bound in words, and the stem's 4 % in parentheses is no earlier answer to fall back on
    question, row = corpus_row("Y-open-152", "grading_corpus_kept_out_21")
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == "judge"
    # '1 − 0.88⁴ = 0.40 or 0.60 depending on whether ...': a hedge between two options' values, no letter
    question, row = corpus_row("Y-mcq-078", "grading_corpus_kept_out_21")
    assert grade_choice(question, row["response"], row["finish_reason"]).verdict == "no_answer"


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    ("grading_corpus_fresh", "fmcq-011", "correct", "C"),  # 'That is a conditional probability.' (option C's words)
    ("grading_corpus_kept_out_4", "gmcq-004", "correct", "B"),  # 'ANSWER: Nominal' (B's text)
])
def test_a_closing_pleasantry_is_not_the_concluding_sentence(corpus, row_id, verdict, letter):
    """'Hope this helps!' or 'Let me know if you have other questions 😊' after the answer: the concluding sentence
    is the one before it (appended to every corpus row, it changed 90 decisions before they were dropped)."""
    question, row = corpus_row(row_id, corpus)
    for closer in ("", "\n\nHope this helps!", " Let me know if you have other questions 😊", "\nGood luck!"):
        got = grade_choice(question, row["response"] + closer, row["finish_reason"])
        assert (got.verdict, got.letter) == (verdict, letter), closer


def test_a_pleasantry_is_dropped_only_at_the_end_and_without_a_number():
    assert clean("The YTM is 5.12%.\n\nI hope that helps. Good luck!") == "The YTM is 5.12%."
    assert clean("Let me know: the answer is 5%") == "Let me know: the answer is 5%"
    assert clean("Hope this helps: 5.12%") == "Hope this helps: 5.12%"


@pytest.mark.parametrize("variant", ["crlf", "no-break spaces", "narrow no-break spaces"])
@pytest.mark.parametrize(("corpus", "row_id"), [
    ("grading_corpus_fresh", "fopen-041"), ("grading_corpus_fresh", "fmcq-009"), ("grading_corpus", "mcq-006"),
    ("grading_corpus", "mcq-022"), ("grading_corpus_kept_out", "kopen-027"),
])
def test_line_ends_and_no_break_spaces_change_no_verdict(corpus, row_id, variant):
    """Windows line ends and no-break spaces between words (French typography, some chat front ends): each had
    changed up to a hundred decisions over the corpora, correct ones into incorrect among them."""
    question, row = corpus_row(row_id, corpus)
    text = row["response"]
    changed = {"crlf": text.replace("\n", "\r\n"), "no-break spaces": text.replace(" ", "\u00a0"),
               "narrow no-break spaces": text.replace(" ", "\u202f")}[variant]
    grade = grade_choice if row_id.split("-")[-2].endswith("mcq") else grade_open_answer
    before, after = grade(question, text, row["finish_reason"]), grade(question, changed, row["finish_reason"])
    assert (after.verdict, after.letter, after.value) == (before.verdict, before.letter, before.value)
    assert before.verdict == row["expected_verdict"]


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "value"), [
    (7, "K-open-012", "incorrect", 8099.76),  # 'Intrinsic value ≈ ¥8 099.76': cents after it, one number (was ¥8)
    (7, "K-open-017", "judge", None),  # 'sell about 1 475 ... contracts': 1,475, or 1 and 475? (was read as 1)
])
def test_a_digit_a_space_and_three_digits(corpus, row_id, verdict, value):
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert got.verdict == verdict
    assert value is None or math.isclose(got.value.value, value)


@pytest.mark.parametrize(("row_id", "verdict", "letter"), [
    ("AA-open-072", "no_answer", None),  # '≈ 0.40 (or ≈ 0.60 if the question intends "at least three")'
    ("AA-mcq-031", "correct", "A"),  # '<response>…<choice>A</choice><distractors>B = 18.20, C = …</distractors>'
    ("AA-mcq-082", "correct", "C"),  # 'inside the €15.90–€21.45 range, so the stock is fairly valued': C's words
    # '460 months' against 457 (451, 474) and '€47.5' against €48 (€43, €49): on the window's edge away from the
    # nearest option; the method (book, 'The acceptance window') calls the edge not correct, the writer's manual
    # says ≤: a disagreement of conventions, left as the method has it
    ("AA-open-090", "incorrect", None),
    ("AA-open-100", "incorrect", None),
])
def test_corpus_22_misses(row_id, verdict, letter):
    """Writer AA's wrong decisions on arrival (5d6dc01)."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_22")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter), got


def test_a_reply_written_as_xml_is_read_by_its_fields():
    question, row = corpus_row("V-open-055", "grading_corpus_kept_out_18")
    got = grade_open_answer(question, row["response"], row["finish_reason"])  # <final_answer> before <check>
    assert got.verdict == "correct" and math.isclose(got.value.value, 50963.98)
    question, row = corpus_row("U-open-058", "grading_corpus_kept_out_17")  # '<solution>…<final>106.27</final>'
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == "correct"
    question, row = corpus_row("S-open-053", "grading_corpus_kept_out_15")  # an HTML table is not a document
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == "correct"


@pytest.mark.parametrize(("corpus", "row_id", "form", "verdict", "letter"), [
    # the answer label as a heading, the letter or value on its own line below
    ("grading_corpus_kept_out_17", "U-mcq-002", "### Answer\n\n**{}**", "correct", "B"),
    ("grading_corpus_kept_out_3", "fmcq2-059", "### Answer\n\n**{}**", "correct", "B"),
    # 'The answer is (C).' then 'Had the $2.00 been next year's dividend, the answer would be B': '$2.00' ends no
    # sentence, so the 'would' clause is a hypothetical
    ("grading_corpus", "mcq-022", "The answer is **({})**.", "correct", "C"),
    # '— ANSWER: B. Hmm, they also consider business risk ... I'll go with C.': 'Hmm' takes the line back
    ("grading_corpus_kept_out_13", "Q-mcq-070", "The answer is **({})**.", "correct", "C"),
    # '~~ANSWER: B~~ Correction after redoing the arithmetic ...': a struck answer line is withdrawn
    ("grading_corpus_kept_out_14", "R-mcq-047", "The answer is **({})**.", "correct", "C"),
    # 'Option B is correct.' then '(C would be right if the saving were channelled abroad.)': a conditional after it
    ("grading_corpus_kept_out_12", "P-mcq-012", "Option {} is correct.", "incorrect", "B"),
    ("grading_corpus_kept_out_3", "fmcq2-059", "Option {} is correct.", "correct", "B"),
])
def test_the_answer_line_in_other_common_forms(corpus, row_id, form, verdict, letter):
    """Each row's last 'ANSWER: X' line rewritten in another form models use: before, each of these changed the
    row's verdict (the heading form turned correct rows incorrect)."""
    question, row = corpus_row(row_id, corpus)
    text = re.sub(r"(?m)^ANSWER: ([ABC])\s*$", lambda m: form.format(m.group(1)), row["response"])
    assert text != row["response"]
    got = grade_choice(question, text, row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter), got


def test_the_final_answer_label_as_a_heading():
    question, row = corpus_row("H-open-003", "grading_corpus_fresh_2")
    text = row["response"].replace("FINAL ANSWER:", "### Final Answer\n")
    assert text != row["response"]
    assert grade_open_answer(question, text, row["finish_reason"]).verdict == row["expected_verdict"] == "correct"


def test_a_final_answer_heading_over_prose_is_no_answer_line():
    """gpt-5-mini's stored easy_567 reply, cut by the study's storage: 'Final answer\\nPrice per 10'. A heading
    counts as the answer line only when the value opens the next line."""
    question = corpus_question({"question_id": "easy_567"})
    text = "Sum:\nPV ≈ 2.8846153846 + 95.22925 = 98.1138653846\n\nFinal answer\nPrice per 10"
    assert grade_open_answer(question, text).verdict == "judge"


@pytest.mark.parametrize("row_id", ["AB-open-060", "AB-open-105"])
def test_corpus_24_doubts(row_id):
    """'I'd say 15.00%. Actually, maybe 18.00%. Hard to be sure without the options.' and 'It's 4.00%. No wait,
    5.00%. Or maybe the first one was right.': a response doubting its answer is the judge's, not graded on its
    last value (writer AB, scored on arrival at e6e5370)."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_24")
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == "judge"


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "value", "letter"), [
    # '**$66 million** (i.e. $66,000,000, or about $0.07 billion)': one value restated, rounded, not a hedge
    (25, "AC-open-125", "correct", 66_000_000, None),
    # 'I get CHF 869. Double-check: the other candidate figure, CHF 1,087, comes from a different convention ...'
    (26, "AD-open-055", "judge", None, None),  # (incorrect; it read the key's 1,087 after the double-check)
    # '... it could also be 0.61 if I misread the timing. Leaning towards 0.39 but I'm not certain.' (incorrect)
    (26, "AD-open-068", "judge", None, None),
    (26, "AD-mcq-020", "correct", None, "A"),  # 'Correct choice → **a)**'
    (26, "AD-mcq-097", "correct", None, "A"),  # '... B and C can be ruled out.'
])
def test_corpora_25_and_26_forms(corpus, row_id, verdict, value, letter):
    """Writers AC and AD's misses on arrival (40e0e2a); where the reader now defers, the label is in the comment."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter), got
    assert value is None or math.isclose(got.value.value, value)


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (26, "AD-open-039", "correct", None),  # YAML 'result:' holding indented 'value: 14.0' and 'unit: "%"'
    (26, "AD-open-041", "no_answer", None),  # {"answer": null, "reason": "The question cannot be answered without ..."}
    (26, "AD-open-067", "no_answer", None),  # 'As an AI language model, I can't provide specific ... advice.'
    (26, "AD-mcq-033", "correct", "A"),  # '<analysis>...</analysis>\n<answer>A</answer>': sibling elements
    (26, "AD-mcq-039", "correct", "B"),  # '<final choice="B"/>': a letter in an attribute
    (26, "AD-mcq-060", "correct", "B"),  # 'Resposta correta: alternativa B'
    (26, "AD-mcq-061", "correct", "C"),  # '所以应选第三个选项' (so choose the third option)
    (26, "AD-mcq-062", "correct", "B"),  # 'الإجابة: ب ($119 million)' (answer: B, in Arabic letters)
    (26, "AD-mcq-078", "no_answer", None),  # 'I get 1,300.5. None of the options match this figure.'
    (25, "AC-mcq-034", "no_answer", None),  # 'I get −40.4500%, which is not exactly any of the listed options.'
    (26, "AD-mcq-100", "correct", "C"),  # '| C | £883 | Correct |' among rows marked 'Incorrect'
    (23, "Z-open-049", "correct", None),  # '<reasoning>…</reasoning>\n<answer>10.88×</answer>': a multiple's sign
])
def test_corpus_26_forms_it_deferred(corpus, row_id, verdict, letter):
    """Forms writer AD's set sent to the judge on arrival (coverage 89.6 %), now decided; the same rules decide 18
    rows of earlier corpora that went to the judge too, each as its writer labelled it."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter) == (row["expected_verdict"], row.get("expected_letter")), got


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (27, "AE-open-084", "correct", None),  # '**FINAL ANSWER: $174**' closing a reply cut for length: the bold closes
    (27, "AE-open-115", "no_answer", None),  # 'Can't be sure—could be $15, could be $16, could be $16.'
    (27, "AE-open-117", "no_answer", None),  # 'Under 360-day convention: 5.10%' ... 'Both are used in practice.'
    (27, "AE-open-156", "correct", None),  # 'roughly 9.17 to 9.74 depending on rounding; I would report 9.45'
    (28, "AF-open-075", "no_answer", None),  # 'Under one convention it is 3.60%, under the other 5.40%.'
    # (AF-open-091, 'Loss on the margin position: 57.0% for the month' against −57.0 %, is the judge's now: 'position'
    # is a word the reader's lexicon does not know next to a value without an answer line)
    (29, "AG-open-067", "no_answer", None),  # 'Probably around 4.00%, but it could be 5.00% — I can't be sure ...'
    (29, "AG-open-098", "no_answer", None),  # 'It depends on the convention: 3.50% if ..., or 3.30% under ...'
    (29, "AG-open-113", "no_answer", None),  # 'O valor deve ficar entre US$ 109.000 e US$ 123.000.'
    (29, "AG-mcq-044", "correct", "A"),  # {"respuesta": "A", "valor": "undervalued", ...}
])
def test_corpora_27_to_29_forms(corpus, row_id, verdict, letter):
    """Misses of the three sets scored once on the session's final reader fc71049, fixed after that score."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter) == (row["expected_verdict"], row.get("expected_letter")), got


def test_a_dot_group_with_the_currency_after_it_is_deferred_when_read_as_thousands_it_is_the_key():
    """AG-open-075, 'Quindi, the value is circa **136.007 $**.' after inputs written '$150,000 ... 22.49%': the
    writer reads $136,007 (the key); the English reading, 136.007, was graded incorrect. The currency after the
    number is how continental texts write amounts, so the judge reads it."""
    question, row = corpus_row("AG-open-075", "grading_corpus_kept_out_29")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (grade.verdict, row["expected_verdict"]) == ("judge", "correct")
    assert "continental" in grade.reason


@pytest.mark.parametrize(("corpus", "row_id", "verdict"), [
    # '**$1,185,400**. That's about $1.19 million, or 1,185.4k.': one value restated, not two offered (no_answer)
    (30, "AH-open-065", "correct"),
    # '**Final Answer: 590 months / 583 months**': two values on the answer line (incorrect on 590; label no_answer)
    (31, "AI-open-081", "judge"),
    # '= 5.72%' then 'Rounded: ≈ 6%' against the key 5.72 %: the writer grades the rounding (incorrect), the reader
    # graded the computed value (correct); graders split, so the judge reads it
    (31, "AI-open-104", "judge"),
    (31, "AI-open-105", "judge"),
])
def test_corpora_30_and_31_forms(corpus, row_id, verdict):
    """Misses of the two sets scored mid-session (on e985abb and 18be3fb), fixed after that score."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == verdict


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (30, "AH-open-044", "no_answer", None),  # 'Answer: $12,093 ... or is it $10,762? ... both have merit.'
    (30, "AH-mcq-029", "no_answer", None),  # "I'll say B. No wait, A. ... I can't settle this without ..."
    (30, "AH-mcq-063", "no_answer", None),  # "My result is $45.84, which doesn't match any option exactly."
    (31, "AI-mcq-074", "no_answer", None),  # "I can't help pick an answer for what appears to be a live exam ..."
    (31, "AI-mcq-042", "incorrect", "A"),  # 'La opción correcta es la A, porque ...'
    (29, "AG-mcq-051", "correct", "A"),  # 'Правильный ответ — вариант A.'
    (29, "AG-mcq-058", "correct", "A"),  # 'Nicht B, sondern A.'
    (30, "AH-open-054", "incorrect", None),  # '... on second thought ... Redoing: £4,905.' then '**Final: £4,905**'
    (21, "Y-mcq-077", "correct", "C"),  # "... doesn't match any option exactly; the closest option is 0.53, so ..."
])
def test_forms_corpora_30_and_31_deferred(corpus, row_id, verdict, letter):
    """Rows of corpora 29 to 31 that went to the judge where the writer's label is plain, now decided as labelled
    (and a guard: a 'no option matches' followed by a choice still chooses)."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter) == (row["expected_verdict"], row.get("expected_letter")), got


@pytest.mark.parametrize(("row_id", "verdict"), [
    ("AM-open-038", "judge"),  # 'The company paid **$13** in salaries.' (stem in $ millions): '$13' may drop 'million'
    ("AM-mcq-031", "no_answer"),  # 'Could be B (€827,000) or A (€449,000) — the values are close.'
    ("AM-mcq-032", "no_answer"),  # 'My computed value lies between options A and B, so I can't pick one confidently.'
    ("AM-mcq-047", "judge"),  # '= 5.10%' (option C), then 'Let me reconsider... B? No, C. Actually B. Hmm.'
])
def test_corpus_32_forms(row_id, verdict):
    """Misses of corpus 32, scored once mid-session on 737d80e, fixed after that score."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_32")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    assert grade(question, row["response"], row["finish_reason"]).verdict == verdict


@pytest.mark.parametrize(("corpus", "row_id", "value"), [
    (33, "AN-open-049", 2.21),  # '| **Total** | **+2.21%** |' then '| (duration-only estimate) | +2.18% |'
    (33, "AN-open-060", 30817.0),  # '| **Difference (Year 5)** | **€30,817** | |' then '| 6 | €0 | €77,344 |'
    (33, "AN-open-070", 8.4),  # '| **Total expected return** | **8.4%** |' then '| Total without buybacks | 6.9% |'
    (25, "AC-open-005", 31.41),
])
def test_the_one_bold_value_is_the_answer(corpus, row_id, value):
    """A response that bolds one value commits to it, whatever table row or figure follows (judge before)."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.value.value) == ("correct", value) == (row["expected_verdict"], value)


def test_bold_inside_code_is_no_bold():
    """'1.03**3' in a Python block is a power, not bold: the value after the block is read (Q-open-133 went to the
    judge as 'the response bolds 3')."""
    question, row = corpus_row("Q-open-133", "grading_corpus_kept_out_13")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.value.value) == ("correct", 4830283.0) == (row["expected_verdict"], 4830283.0)


def test_a_python_dict_reply_is_read_by_its_fields():
    """AN-open-046, "{'price_per_100': 97.28, 'coupon': 4.0, 'ytm': 5.0, 'par': 100}": a JSON object written as a
    Python dict is read by the field naming the asked price (judge before: the last number, 100, stood after the
    key's value)."""
    question, row = corpus_row("AN-open-046", "grading_corpus_kept_out_33")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.value.value) == ("correct", 97.28)


@pytest.mark.parametrize(("corpus", "row_id", "value"), [
    (32, "AM-open-102", 0.79),  # 'Respuesta: aproximadamente US$ 0.79 por acción'
    (32, "AM-open-106", 46.14),  # '정답: 내부수익률(IRR)은 약 46.14%입니다.'
    (33, "AN-open-112", 15.73),  # 'Réponse : environ 15,73 $ par action.'
])
def test_words_for_share_and_copulas_in_other_languages_are_known(corpus, row_id, value):
    """'acción', 'action', '입니다' next to the value were unknown words (judge); they name the share the question
    prices or say 'is'."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.value.value) == ("correct", value) == (row["expected_verdict"], value)


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (34, "AO-open-057", "correct", None),  # '**297.51 months**, i.e. about 24.79 years or 9,049 days': one value
    (34, "AO-open-089", "judge", None),  # '= 1.10%', then 'Bond A is expected to lose 1.10% relative to Treasuries.'
    (35, "AP-open-051", "judge", None),  # 'Total ≈ 1.42%, i.e. the price would decrease by 1.42%.'
    (35, "AP-open-112", "no_answer", None),  # 'It depends on the payment timing:' then a value for each timing
    (35, "AP-open-013", "correct", None),  # INI '[answer]' 'cash_collected = 32' ... 'change_in_ar = 13'
    (34, "AO-mcq-032", "no_answer", None),  # 'So the answer is either B (90 percent) or C (150 percent), depending ...'
    (34, "AO-mcq-045", "judge", None),  # '... so A. But hold on — ... So B? Or stay with A?'
    (34, "AO-mcq-067", "no_answer", None),  # "I'm not comfortable picking one of these options: ..."
])
def test_corpora_34_and_35_forms(corpus, row_id, verdict, letter):
    """Misses of corpora 34 and 35, scored once mid-session on 5039d0e, fixed after that score."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter), got


@pytest.mark.parametrize(("row_id", "verdict", "letter"), [
    ("AL-mcq-049", "no_answer", None),  # 'It depends on ...: under one reading the answer is A, under the other B.'
    ("AL-mcq-103", "correct", "A"),  # 'The first option listed is the right one.'
    ("AL-mcq-116", "correct", "B"),  # 'Ответ: Б (второй вариант)': Б is the second letter
])
def test_corpus_38_forms(row_id, verdict, letter):
    """Misses of corpus 38, kept out until the final reader 6a6a46b and scored once on it; fixed after that score."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_38")
    got = grade_choice(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter) == (row["expected_verdict"], row.get("expected_letter")), got


def test_most_likely_marks_the_value_a_response_prefers():
    """S-open-076, 'Most likely $165.82, although with different rounding you might see $166.32.': $165.82 is read."""
    question, row = corpus_row("S-open-076", "grading_corpus_kept_out_15")
    assert grade_open_answer(question, row["response"], row["finish_reason"]).value.value == 165.82


@pytest.mark.parametrize(("corpus", "row_id", "reason"), [
    # a comparison in words where the asked quantity's value should be: no value is committed
    (36, "AJ-open-146", "only compares the asked quantity"),  # '... its price per 100 of par is above 100.'
    (38, "AL-open-163", "only compares the asked quantity"),  # 'D1 = ... = 2.9432' then 'So the intrinsic value
    # comes out well below the undiscounted total of the payments'
    (9, "M-open-209", "only compares the asked quantity"),  # '... price will end up slightly above the current $111.00'
    (40, "AR-open-150", "bounds its answer"),  # '... the answer is a low single-digit annual rate, comfortably under
    # ten percent.'
    (18, "V-open-155", "operand of a formula"),  # 'The answer is ..., i.e. BEY = (redemption/principal − 1) × 365/days'
])
def test_an_answer_in_words_is_the_judges(corpus, row_id, reason):
    """Rows labelled judge that the reader graded incorrect on a bound, an intermediate or an operand: a response
    that describes its answer only in words commits to no value the reader can grade."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert row["expected_verdict"] == got.verdict == "judge" and reason in got.reason, got


@pytest.mark.parametrize(("corpus", "row_id", "verdict"), [
    (36, "AJ-mcq-062", "judge"),  # 'ANSWER: 7.42%' against 7.29 %, 7.56 %, 8.16 %: in 7.29 %'s window, on no option
    (40, "AR-mcq-068", "no_answer"),  # 'The value $77.30 matches none of the options exactly.' (key $77)
    (40, "AR-mcq-072", "no_answer"),  # 'The value £5,187.91 matches none of the options exactly.' (key £5,188)
])
def test_a_value_on_no_option_names_no_letter(corpus, row_id, verdict):
    """An MCQ reply that gives a value no option states (labelled no_answer) was graded by the option whose window
    holds it; the value must round to the option, and a reply saying no option matches chooses none."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    got = grade_choice(question, row["response"], row["finish_reason"])
    assert (row["expected_verdict"], got.verdict, got.letter) == ("no_answer", verdict, None), got


def test_a_value_that_rounds_to_an_option_still_names_it():
    """AA-mcq-092: '3.3%' against option A, 3.33%: they agree at the coarser precision, so the letter stands."""
    question, row = corpus_row("AA-mcq-092", "grading_corpus_kept_out_22")
    got = grade_choice(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (row["expected_verdict"], row["expected_letter"]) == ("correct", "A"), got


@pytest.mark.parametrize(("row_id", "verdict"), [
    ("AV-open-066", "no_answer"),  # 'Range: -4.1%–-4.0%': a range between two negative values
    ("AV-open-081", "judge"),  # '$48.0 million. Actually, maybe it should be $39.0 million... I'm not fully sure ...'
    # (labelled no_answer; a tentative revision leaves the judge to read it)
])
def test_corpus_41_forms(row_id, verdict):
    """Misses of corpus 41, scored once mid-session on 3a50345; fixed after that score."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_41")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (row["expected_verdict"], got.verdict) == ("no_answer", verdict), got


@pytest.mark.parametrize(("row_id", "verdict", "letter"), [
    # 'Hmm, wait. ... maybe they only want exactly four, which would be 0.33. Let me reconsider which reading is
    # intended before giving a number.' (labelled no_answer): the answer is still to come, so the judge reads it
    ("AW-open-100", "judge", None),
    # '... the sale price less the £2,000 of expenses — ...' (labelled judge): £2,000 is an operand in words
    ("AW-open-120", "judge", None),
    # 'Basic EPS comes to $1.47 — 1,000,000 / (628,259 + 50,000) = 1,000,000 / 678,259.': a fraction has no precision
    # of its own to fall short of the options'
    ("AW-mcq-043", "correct", "B"),
])
def test_corpus_42_forms(row_id, verdict, letter):
    """Misses of corpus 42, scored once mid-session on 4ed54c7; fixed after that score."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_42")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter), got


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (43, "AX-open-044", "no_answer", None),  # '{"final_answer": null, "reason": "insufficient information"}'
    (43, "AX-mcq-022", "no_answer", None),  # '{"answer": null, "note": "need more data"}'
    (43, "AX-mcq-062", "no_answer", None),  # 'ANSWER: D' against options A, B, C
    (43, "AX-mcq-037", "correct", "B"),  # 'Doğru cevap B şıkkıdır.' (the right answer is option B)
    (43, "AX-open-099", "correct", None),  # 'Đáp án: khoảng 22.134,36 $' (answer: about ...)
    (43, "AX-open-101", "incorrect", None),  # 'الإجابة: تقريباً 35.00%' (answer: approximately ...)
    (43, "AX-open-125", "no_answer", None),  # a FINAL ANSWER inside <think>, then "I'm going to need the answer
    # choices to be sure."
    (37, "AK-open-062", "correct", None),  # 'Jawaban: sekitar US$68 juta' (juta: million)
    (36, "AJ-open-117", "correct", None),  # 'Svar: cirka 81 miljoner pund' (Swedish millions of pounds)
    (37, "AK-open-035", "correct", None),  # 'Đáp án: 7,00 triệu USD' (triệu: million)
])
def test_corpus_43_coverage(corpus, row_id, verdict, letter):
    """Rows corpus 43 (scored once mid-session on 4ed54c7) showed the reader sending to the judge although they are
    plain: an empty JSON answer, a letter that is no option, answer and scale words of more languages. Each went to
    the judge before; now it is decided as labelled."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (row["expected_verdict"], row.get("expected_letter")) == (verdict, letter), got


@pytest.mark.parametrize(("row_id", "verdict"), [
    ("AZ-open-074", "correct"),  # '= −0.5100, or negative 51 percent': one value, its sign said in words
    ("AZ-open-102", "no_answer"),  # '... 正確な金額を計算できません。選択肢を教えていただけますか？' (cannot compute;
    # could you tell me the options?)
    ("AZ-open-134", "no_answer"),  # 'FINAL ANSWER: The required rate of return'
    ("AZ-open-136", "no_answer"),  # 'Answer: The answer is'
    ("AZ-open-099", "correct"),  # '... 542 месяца' (months)
])
def test_corpus_45_forms(row_id, verdict):
    """Rows of corpus 45, scored once mid-session on f5f24fd: one miss (the first) and plain rows sent to the judge."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_45")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert row["expected_verdict"] == got.verdict == verdict, got


@pytest.mark.parametrize(("row_id", "verdict", "letter"), [
    ("AY-open-111", "no_answer", None),  # '答案：约94.34美元或85.29美元' (answer: about $94.34 or $85.29)
    ("AY-mcq-022", "correct", "B"),  # '| **Answer** | **B** |' above '| Check: ... | $78.67 (option A, wrong) |'
    ("AY-open-107", "correct", None),  # '... 404개월' (months)
])
def test_corpus_44_forms(row_id, verdict, letter):
    """Rows of corpus 44, scored once mid-session on 6e437f8: its two misses and a plain row sent to the judge."""
    question, row = corpus_row(row_id, "grading_corpus_kept_out_44")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (row["expected_verdict"], got.verdict, got.letter) == (verdict, verdict, letter), got


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    (46, "AS-open-023", "judge", None),  # 'FINAL ANSWER: €1.208' for €1,208: money with three decimals reads two ways
    (46, "AS-open-075", "no_answer", None),  # '... roughly $19 to $20 per share. ... I can't narrow it down further'
    (46, "AS-mcq-028", "no_answer", None),  # "I'll leave it at A or B depending on the interpretation."
    (46, "AS-mcq-030", "no_answer", None),  # "... → A. But if the rate is set in arrears ... It's either A or B."
    (47, "AT-open-085", "judge", None),  # 'The question gives $1,130,000, 10, 1, 2015. To find ... you would use ...'
    # (labelled no_answer: the inputs restated are no answer; the judge reads what is left)
    (47, "AT-open-111", "judge", None),  # 'The numbers come out as £18,663 and £19,206.'
    (47, "AT-open-152", "judge", None),  # "near £1,580, but could you share the answer choices? I'd rather match
    # against them before committing." (labelled no_answer)
    (47, "AT-open-154", "incorrect", None),  # 'So the answer is 3.40%. Oops — ... so the answer should be 3.70%.'
    (48, "AU-open-080", "no_answer", None),  # '≈ 3.24% using 365 days (about 3.19% if a 360-day year is used instead)'
    (48, "AU-open-084", "no_answer", None),  # '0.2997 → 0.30 if rounded, 0.29 if truncated to two decimals.'
    (48, "AU-open-091", "correct", None),  # 'In accounting-style notation the return is (22.68%).' (−22.68 %)
    (48, "AU-mcq-090", "no_answer", None),  # 'So A and B are both defensible.'
])
def test_corpora_46_to_48_forms(corpus, row_id, verdict, letter):
    """Misses of corpora 46 to 48, kept out until the final reader 37898c3 and scored once on it; fixed after that
    score, so from then on in sample. Where the reader now defers, the test says so."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.letter) == (verdict, letter), got


@pytest.mark.parametrize(("corpus", "row_id", "word"), [
    (49, "BA-open-126", "down"),  # 'it is about 26 percent down, i.e. a moderate decline.' (−26 %, read as +26)
    (47, "AT-open-132", "revenue"),  # '| Memo: share of revenue | 0.12 |' under '| **Cash collected** | **109** |'
    (6, "J-open-012", "omzet"),  # Dutch, 'Totale omzet ≈ 730,045' (labelled judge: 730,045 or 730.045)
])
def test_a_value_in_prose_decides_only_among_words_the_reader_knows(corpus, row_id, word):
    """Without an answer line the value stands in prose the reader must understand: an English word next to it that
    the reader's grammar does not read ('down' after a value, the noun of another quantity) defers, as a word of
    another language always did. Each row was decided wrongly before."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    got = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (got.verdict, got.reason) == ("judge", f"an unknown word next to the value: {word}")


def test_a_value_in_prose_with_known_words_is_still_decided():
    """The words that state a result ('comes to', 'worth', 'paid', 'lost') are known: such prose is decided."""
    questions = questions_by_id("easy")
    assert grade_open_answer(questions["easy_478"], "The share lost 12.0% over the period.",
                             "stop").verdict == "correct"
    assert grade_open_answer(questions["easy_478"], "The holding period return comes to about −12.0%.",
                             "stop").verdict == "correct"
    assert grade_open_answer(questions["easy_478"], "Loss on the share: 12.0% for the period.",  # a loss label
                             "stop").value.value == -12.0
    got = grade_open_answer(questions["easy_478"], "The holding period return is about 12.0% down.", "stop")
    assert (got.verdict, got.reason) == ("judge", "an unknown word next to the value: down")


@pytest.mark.parametrize(("corpus", "row_id", "reason"), [
    # 'FINAL ANSWER: 3.88%', 'Hmm, using the par of $15 and the value of $18.56: ... = 4.13%.', 'FINAL ANSWER: 4.13%'
    (52, "BG-open-134", "two FINAL ANSWER lines disagree (3.88%, then 4.13%) and nothing between takes the first back"),
    # 'ANSWER: B', 'Checking with simple return: ... closest to C.', 'ANSWER: A'
    (52, "BG-mcq-045", "two answer lines name B and A, and nothing between takes the first back"),
])
def test_two_answer_lines_that_disagree_defer(corpus, row_id, reason):
    """Corpus 52, scored once mid-session: two answer lines with different answers and nothing between that says
    the first was wrong (labelled no_answer; the reader took the last). 'Wait — I dropped a term', 'On reflection,
    B is better' between them still make the last line the answer."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert (row["expected_verdict"], got.verdict, got.reason) == ("no_answer", "judge", reason), got
    question, row = corpus_row("AM-mcq-046", "grading_corpus_kept_out_32")  # 'ANSWER: A', 'On reflection, B ...'
    assert grade_choice(question, row["response"], row["finish_reason"]).letter == "B"
    question, row = corpus_row("W-open-125", "grading_corpus_kept_out_19")  # 'Wait — I dropped a term.'
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == "correct"


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "value", "reason"), [
    # '= (18.42%)', then 'A negative total return of 18.42%: ... the $9 price drop.' against −18.4 %
    (56, "BI-open-069", "correct", -18.42, ""),
    # '600.000 − RW = 38.243 × 14 = 535.402', then 'FINAL ANSWER: 64,598' (labelled judge: 64.598 or 64,598)
    (52, "BG-open-015", "judge", None, "'64,598' in a text that groups thousands with dots"),
    # '... works out to 106.27 ... The 111.88 and 135.88 figures don't fit any reasonable convention.' (key A, 106.27)
    (56, "BI-mcq-022", "judge", None, "the closing sentences state the values of two or more options"),
    # corpus 59: '... 118.82. It's a premium bond, so 85.71 is impossible, and 112.54 would need a higher yield. 118.82
    # it is.' (read as A), '$13.85 — not $14.83 or $19.19.' (read as no_answer), '→ (B) −36.20%. ... −38.10% and
    # −32.30% are off.' (read as A): options weighed by value in words the judge reads
    (59, "BL-mcq-061", "judge", None, "the closing sentences state the values of two or more options"),
    (59, "BL-mcq-080", "judge", None, "the closing sentences state the values of two or more options"),
    (59, "BL-mcq-024", "judge", None, "the closing sentences state the values of two or more options"),
    # corpus 61: 'Under the current-yield convention the value is 1.14/0.065 = $17.54; under the issue-price
    # convention it stays at $25.00.', 'B if the new-issue rate of 6% is used (...), C if the weighted historical rate
    # is used.' (both no_answer, read as committed)
    (61, "BK-open-089", "no_answer", None, "the response closes on a value under each of two conventions"),
    (61, "BK-mcq-037", "no_answer", None, "two letters, each under its own reading"),
    # corpus 60: 'Ergebnis: ein Rückgang des Kurses von etwa 2,87 %.' (−2.87 %), '答え：55ベーシスポイント' (0.55 %)
    (60, "BM-open-020", "correct", -2.87, ""),
    (60, "BM-open-023", "correct", 0.55, ""),
    # 'So the yield is 4%, although with rounding 4.0–4.1% would be consistent.' (correct; read as a hedge)
    (59, "BL-open-102", "judge", None, "the response puts the other values it offers down to rounding"),
    # 'Probably A (28), although if they expect rounding of the standard error first it could be C.'
    (58, "BH-mcq-026", "no_answer", None, "the last sentence leans to one letter and says it could be another"),
    # '3. No — B is 2.81%, too far. So maybe A, but I'm not fully sure the quote convention matches.' (no_answer)
    (51, "BF-mcq-050", "judge", None, "the last sentence offers its letter only as a maybe"),
])
def test_mid_session_corpora_forms(corpus, row_id, verdict, value, reason):
    """Misses of corpora 51, 52, 56, 58 to 61, scored once mid-session, each wrong before its change."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert got.verdict == verdict and got.reason.startswith(reason), got
    if value is not None:
        assert math.isclose(got.value.value, value)


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "reason"), [
    (55, "BC-open-081", "judge", "the answer line states two values"),  # "FINAL ANSWER: 5.96% / 5.88%" (both in window)
    (57, "BJ-open-144", "no_answer", "the response offers alternatives"),  # 'FINAL ANSWER: 3.56%? or 3.51%'
    (57, "BJ-mcq-051", "no_answer", "the answer line offers a second letter"),  # 'ANSWER: C, or B if only exactly four'
    (54, "BE-mcq-025", "no_answer", "two letters are left open"),  # 'Réponse : A ou B'
])
def test_kept_out_corpora_53_to_57_forms(corpus, row_id, verdict, reason):
    """Misses of the four sets kept out until the final reader 2c59fb0 and scored once on it (all labelled
    no_answer), fixed after that score, so from then on in sample."""
    question, row = corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice if "mcq" in row_id else grade_open_answer
    got = grade(question, row["response"], row["finish_reason"])
    assert row["expected_verdict"] == "no_answer" and got.verdict == verdict and got.reason.startswith(reason), got

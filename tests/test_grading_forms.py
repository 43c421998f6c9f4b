"""Issue #31: the reader decides only on forms it understands, by class, on real FinEval questions.

Each case is written here (not copied from tests/grading_corpus_fresh/); each failed before the change.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks.grading import corpus_row
from cfa_lib.answers import Number, extract_choice, grade_choice, grade_open_answer
from cfa_lib.answers.key import option_value
from cfa_lib.data import Question, load_dataset

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def questions():
    return {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}


# --- letters: the options' texts, and letter forms ---------------------------------------------------------
@pytest.mark.parametrize(("response", "verdict", "letter"), [
    ("ANSWER: B) daily", "judge", None),  # the letter says B (quarterly), the words say A: before, incorrect B
    ("ANSWER: A) daily", "correct", "A"),
    ("ANSWER: A — though some banks compound quarterly.", "correct", "A"),  # an aside, not a restatement
])
def test_a_letter_whose_restatement_names_another_option(questions, response, verdict, letter):
    grade = grade_choice(questions["easy_2"], response, "stop")  # key A, daily.
    assert (grade.verdict, grade.letter) == (verdict, letter)


@pytest.mark.parametrize(("response", "verdict", "letter"), [
    # the prompt's 'ANSWER: C' in capitals inside a line, after an earlier answer line: the revision wins
    ("ANSWER: B\nWait, recheck: quarterly rate 1.75%, 24 periods → 113,733. ANSWER: C", "correct", "C"),
    ("My answer: option three.", "correct", "C"),  # options counted in words
    ("Ответ: В", "judge", None),  # Cyrillic В: B by its shape, C by its place; before, decided no_answer
])
def test_letter_revisions_counted_options_and_the_cyrillic_ve(questions, response, verdict, letter):
    grade = grade_choice(questions["easy_3"], response, "stop")  # key C, $113,733
    assert (grade.verdict, grade.letter) == (verdict, letter)


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


# --- keys written coarser than the tolerance: what rounds to the key and is nearest to it -------------------
@pytest.mark.parametrize(("qid", "response", "verdict"), [
    ("easy_810", "Measured on monthly data ρ ≈ 0.03.\n\nFINAL ANSWER: 0.03", "correct"),
    ("easy_810", "FINAL ANSWER: –0.04", "correct"),
    ("easy_6", "The difference is €5.56.\n\nFINAL ANSWER: €5.56", "correct"),  # the issue's own example
])
def test_coarse_key(questions, qid, response, verdict):
    assert grade_open_answer(questions[qid], response, "stop").verdict == verdict


@pytest.mark.parametrize(("qid", "response"), [
    ("easy_810", "FINAL ANSWER: 0.06"),  # rounds to 0.1, not to the key's 0.0 (a guard: incorrect before and after)
    ("easy_6", "FINAL ANSWER: €6.6"),
])
def test_coarse_key_keeps_what_does_not_round_to_it(questions, qid, response):
    assert grade_open_answer(questions[qid], response, "stop").verdict == "incorrect"


# --- structured replies: the field that answers, not the last number ----------------------------------------
@pytest.mark.parametrize(("qid", "response", "verdict", "value"), [
    ("easy_341", '```json\n{"npv": 40082.64, "irr": 0.2879, "periods": 2}\n```', "correct", 28.79),
    ("easy_944", '{"average_cost": 70, "price": 120, "markup_factor": 3.0, "profit_per_unit": 50}', "correct",
     120.0),
    ("easy_944", '{"answer": 70, "unit": "USD", "confidence": 0.7}', "incorrect", 70.0),
    ("easy_810", '```json\n{"correlation": 0.0, "covariance": 0.0, "n": 60}\n```', "correct", 0.0),
])
def test_json_reply(questions, qid, response, verdict, value):
    grade = grade_open_answer(questions[qid], response, "stop")
    assert (grade.verdict, grade.value.value) == (verdict, pytest.approx(value))


def test_json_reply_without_an_answer_field_is_deferred(questions):
    reply = '{"rp_2020": 3.145, "rp_2021": 3.806, "sharpe": 0.25}'
    assert grade_open_answer(questions["challenge_78"], reply, "stop").verdict == "judge"


# the field whose name shares most words with the asked quantity (each deferred before, 'no field for the asked
# quantity'); a field holding one of the question's numbers is an input ('"rate": 0.03' of a 3 % rate)
@pytest.mark.parametrize(("corpus", "row_id", "verdict", "value"), [
    ("grading_corpus_kept_out_10", "N-open-082", "correct", 544.0),  # max_loss, not max_loss_per_share
    ("grading_corpus_kept_out", "kopen-035", "incorrect", 4.08),  # breakeven_move_pct
    ("grading_corpus_fresh_2", "H-open-051", "incorrect", 85714.0),  # depreciation_2010, not annual_depreciation
    ("grading_corpus_kept_out_6", "J-open-055", "correct", 603.0),  # contracts, not premium_per_contract
    ("grading_corpus_kept_out_29", "AG-open-104", "correct", 5.05),  # {"最终答案": "5.05%"}: the final answer
    ("grading_corpus_kept_out_12", "P-open-049", "judge", None),  # pv_ordinary_annuity and pv_annuity_due tie
])
def test_json_field_naming_the_asked_quantity(corpus, row_id, verdict, value):
    question, row = corpus_row(row_id, corpus)
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert (grade.verdict, None if grade.value is None else grade.value.value) == (verdict, value)


# --- units and scale after the number; where the value stands -----------------------------------------------
@pytest.mark.parametrize(("qid", "response", "verdict", "value"), [
    ("easy_944", "- MC = USD 40/unit\n- 1 − 1/1.5 = 1/3\n\n**Price: USD 120/unit** (vs. MC of USD 40/unit)", "correct",
     120.0),
    ("challenge_78", "FINAL ANSWER: +66 bps (premium 3.145% → 3.806%)", "correct", 0.66),
    ("challenge_78", "The 2021 premium is 3.806%.\n\nThe premium rises by 66 bps, from 3.15% to 3.81%.", "correct",
     0.66),
])
def test_value_position_and_units(questions, qid, response, verdict, value):
    grade = grade_open_answer(questions[qid], response, "stop")
    assert (grade.verdict, grade.value.value) == (verdict, pytest.approx(value))


def test_scale_in_parentheses_after_the_number():
    from cfa_lib.answers.final_number import extract_number
    assert extract_number("Net income: 169.9 (in $ millions)").value == pytest.approx(169.9e6)
    assert extract_number("Total = 450 in thousands").value == pytest.approx(450e3)


def test_answer_line_with_two_values_for_other_quantities_is_deferred(questions):
    line = "FINAL ANSWER: principal 1,020; coupon 30.60"
    assert grade_open_answer(questions["easy_531"], line, "stop").verdict == "judge"


# --- hedges before the value ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("qid", "response"), [
    ("easy_944", "It depends on regulation: $70 if it prices at average cost, $120 if it maximises profit."),
    ("easy_2", "Daily gives 4.0808% and continuous 4.0811%, so it could be either daily or continuous."),
    ("easy_30", "It is mildly platykurtic or close to normal; I can't say which without a test."),
    ("easy_583", "Depende de las opciones. ¿Podría indicarme las alternativas?"),
])
def test_hedges_are_no_answer(questions, qid, response):
    assert grade_open_answer(questions[qid], response, "stop").verdict == "no_answer"


# --- kept-out corpus misses (issue #31, second round): the general form behind each ---------------------------
def test_dot_thousands_in_a_text_that_groups_with_dots(questions):
    """'1.000.000 USD' shows the text groups thousands with dots, so '900.000 USD' is 900,000 (kopen-001); alone,
    '900.000' is 900 or 900,000 and is deferred."""
    response = ("Under accrual accounting revenue is recognised when earned, net of returns.\n\nGross revenue: "
                "1.000.000 USD\nLess returns: 100.000 USD\nNet revenue: 900.000 USD\n\nCash collected (800.000 USD) "
                "and COGS (700.000 USD) do not change net revenue.\n\nFINAL ANSWER: 900.000 USD")
    grade = grade_open_answer(questions["easy_127"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 900000.0)
    assert grade_open_answer(questions["easy_127"], "FINAL ANSWER: 900.000 USD", "stop").verdict == "judge"


def test_yaml_reply_is_read_by_its_fields(questions):
    """A fenced YAML mapping is data like JSON: the field for the asked quantity answers, not the last line
    (kopen-034)."""
    response = ("```yaml\nbasis: accrual\ngross_revenue: 1000000\nless_returns: 100000\nnet_revenue: 900000\n"
                "cash_collected: 800000   # affects receivables, not revenue\ncogs: 700000\n```\n"
                "Net revenue reported for 2009 is the net_revenue line.")
    grade = grade_open_answer(questions["easy_127"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 900000.0)


def test_json_answer_block_after_prose_is_the_letter(questions):
    """Prose, then a fenced {"answer": "C"}: the block is the answer line (kmcq-029)."""
    response = ("A bond issued by a foreign (South African) issuer in the UK market, in sterling, to UK investors is "
                "a foreign bond (a 'bulldog'). It's not a Eurobond, because the currency is the local currency of "
                "the market where it's sold.\n\n```json\n{\"answer\": \"C\"}\n```")
    assert grade_choice(questions["easy_526"], response).letter == "C"
    assert grade_choice(questions["easy_526"], "So A.\n\n```json\n{\"answer\": \"C\"}\n```").verdict == "judge"


@pytest.mark.parametrize(("qid", "response"), [
    ("challenge_87", "It depends how you read 'percentage change': the stock must rise or fall 3.71% to reach either "
                     "breakeven, but the total width of the profitable-outcome gap is 7.41% of spot. Both are "
                     "reasonable answers."),  # kopen-059: 'both are reasonable answers' leaves the two values open
    # kopen-112: 'the answer differs depending on ...' in Korean
    ("challenge_88", "490 풋을 매도하면 순비용은 16.83달러이고, 490 풋을 매수하면 22.47달러입니다. "
                     "어떤 구조를 의미하는지에 따라 답이 달라집니다."),
])
def test_hedges_in_more_words_and_languages_are_no_answer(questions, qid, response):
    assert grade_open_answer(questions[qid], response, "stop").verdict == "no_answer"


def test_value_restated_as_a_percent_of_another_amount_is_no_hedge(questions):
    """'$28.67, or about 115% of the $25 issue price' restates one value; it offers no alternative (kopen-106)."""
    response = ("Treat the preferred as a growing perpetuity with growth equal to the required yield spread: V = D × "
                "(1 + r) / r = 1.75 × 1.065 / 0.065 = $28.67, or about 115% of the $25 issue price.")
    grade = grade_open_answer(questions["easy_356"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("incorrect", 28.67)


def test_loss_words_of_other_languages_sign_the_value(questions):
    """Spanish 'pérdida del 15,4 %' is a loss: −15.4 % (kopen-082), as 'loss of 15.4 %' is."""
    response = ("Inversión inicial de capital propio: 12.010 $. Valor final del capital: 10.160 $.\nRentabilidad = "
                "10.160 / 12.010 − 1.\n\nEl inversor sufrió una pérdida del 15,4 % en el mes.")
    grade = grade_open_answer(questions["easy_409"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", -15.4)


def test_bare_number_on_two_options_by_its_two_readings_is_deferred(questions):
    """'0.30' against options 0 %, 30 %, 70 % is 30 % as a fraction and 0.30 % (rounding to the key '0%') as
    points: two options, so the judge reads it (kopen-062; it was graded correct)."""
    response = ("The distribution is uniform on [0,1], so the probability of a value up to 0.30 equals the length of "
                "the interval, 0.30.\n\nFINAL ANSWER: 0.30")
    assert grade_open_answer(questions["easy_70"], response, "stop").verdict == "judge"
    assert grade_open_answer(questions["easy_70"], "FINAL ANSWER: 0", "stop").verdict == "correct"


def test_key_sentence_with_a_date_holds_several_numbers(questions):
    """Option B 'a liability of £982,674 on the 31 December 2010 balance sheet.' states an item, a statement and a
    date: no numeric key (labelling rule 2), so a committed amount is the judge's (fopen-038)."""
    response = ("Carrying amount at 31 Dec 2010 = 978,938.2 + 3,736.3 = £982,674.5\n\nFINAL ANSWER: Bond liability of "
                "£982.67 thousand on the 31 December 2010 balance sheet")
    assert grade_open_answer(questions["easy_270"], response, "stop").verdict == "judge"


@pytest.mark.parametrize(("qid", "response", "letter"), [
    ("easy_539", "투자등급과 투기등급 채권의 차이는 신용도에 있습니다.\n\n정답: B", "B"),  # kmcq-028
    ("challenge_71", "The AMC does not permit partial compliance claims, and firms cannot claim compliance while "
                     "citing deficiencies. So not A and not C — GLL can only claim compliance once it complies with "
                     "the entire Code: B.", "B"),  # kmcq-021
    ("challenge_29", "Statement 1 — a large illiquid allocation is risky if sponsor contributions may fall and the "
                     "plan might need liquidity. Statements 2 and 3 are not appropriate (size hurts active equity; "
                     "tactical tilts on 5-year CMEs aren't strategic rebalancing).", "A"),  # kmcq-022
    ("easy_157", "Depreciation expense is an expense account and sales returns and allowances is a contra-revenue "
                 "account. Neither A nor B is a contra asset, so C: the allowance for doubtful accounts reduces "
                 "accounts receivable.", "C"),  # kmcq-003
    ("easy_650", "First mortgage debt is secured by specific property and sits at the top of the priority of "
                 "claims.\n\n**Answer: First mortgage debt (A)** — certainly not junior subordinated debt.",
     "A"),  # kmcq-019
    ("easy_34", "Correlation has the same sign as covariance; the means are irrelevant. It can't be negative (A) and "
                "it can't be zero (B) when covariance is positive, which leaves C.", "C"),  # kmcq-015
])
def test_more_letter_forms(questions, qid, response, letter):
    assert grade_choice(questions[qid], response).letter == letter


def test_words_that_nearly_state_an_option_are_deferred(questions):
    """Option C of easy_744 is written 'onvenience yield'; 'The answer is convenience yield.' nearly states it: the
    judge reads it, it is no no_answer (kmcq-001)."""
    response = ("When a commodity is scarce, holders of the physical good earn a benefit from having it on hand that "
                "the forward buyer does not get, which can push spot above forward.\n\nThe answer is convenience "
                "yield.")
    assert grade_choice(questions["easy_744"], response).verdict == "judge"


# --- tests/grading_corpus_kept_out_2 (in-sample after its first scoring) ----------------------------------
def test_apostrophe_thousands(questions):
    """Swiss grouping '¥7'220.39' is 7,220.39, not 7 (eopen-004)."""
    response = ("PV of the expected price: 9'000/1.12⁴ = 9'000/1.573519 = 5'719.66\n\nIntrinsic value = 1'500.73 + "
                "5'719.66 = ¥7'220.39\n\nFINAL ANSWER: ¥7'220.39")
    grade = grade_open_answer(questions["easy_503"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 7220.39)


@pytest.mark.parametrize("note", ["(in $ 000s)", "($000s)", "(€ 000s)", "in thousands"])
def test_thousands_notes_scale_the_number(questions, note):
    """'28,936 (in $ 000s)' is 28,936,000 as '169.9 (in $ millions)' is 169,900,000 (eopen-020)."""
    response = ("**Amounts in $ 000s**\n\nCarrying amount, 31 Dec 2015 = 28,701 + 235 = 28,936\n\n"
                f"**FINAL ANSWER: 28,936 {note}**")
    grade = grade_open_answer(questions["easy_273"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 28936000)


def test_cjk_compound_multipliers(questions):
    """'1億6,990万' is 10⁸ + 6,990 × 10⁴ = 169,900,000, not 6.99 (eopen-089); a form read only in part is deferred."""
    response = ("企業価値（EV）= 10.2 × 2,200万ドル = 2億2,440万ドル\n株主資本価値 = EV − 負債の時価 + 現金\n"
                "= 2億2,440万 − 5,600万 + 150万\n= 1億6,990万ドル\n\n答え：約1億6,990万ドル")
    grade = grade_open_answer(questions["easy_513"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 169900000)
    assert grade_open_answer(questions["easy_513"], "答え：1.699亿ドル", "stop").verdict == "correct"
    for partial in ("答え：約1億6千万ドル", "答え：約一億6990万ドル"):
        assert grade_open_answer(questions["easy_513"], partial, "stop").verdict == "judge"


@pytest.mark.parametrize(("response", "verdict", "value"), [
    ("정답: 약 11만 3,733달러", "correct", 113733),  # Korean 만 (10⁴) and the units after it, not 3,733
    ("FINAL ANSWER: 11万3733美元", "correct", 113733),  # the same sum in Chinese, written without a space
    ("정답: 약 11만 2,555달러", "incorrect", 112555),  # distractor A
    ("답: 11.37만 달러", "correct", 113700),
])
def test_korean_man_and_the_units_after_a_whole_man(questions, response, verdict, value):
    """easy_3 (key C, $113,733): a number after a whole 万/만 is its units; before, '11만 3,733' was read as 3,733."""
    grade = grade_open_answer(questions["easy_3"], response, "stop")
    assert (grade.verdict, grade.value.value) == (verdict, value)


@pytest.mark.parametrize(("response", "value"), [("Answer: ~8½%", 8.5), ("FINAL ANSWER: 8 ½ %", 8.5)])
def test_a_vulgar_fraction_is_part_of_its_number(questions, response, value):
    """easy_64 (key A, 8.5 %): '8½%' is 8.5 %; before, it was read as 8 and graded incorrect."""
    grade = grade_open_answer(questions["easy_64"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", value)


@pytest.mark.parametrize(("response", "verdict"), [
    ("FINAL ANSWER: $3.80\n\nCorrection: that's basic. Diluted is $3.70.", "judge"),  # was incorrect
    ("FINAL ANSWER: $3.70\n\nWait, that's wrong: I forgot the dividends. It should be $3.80.", "judge"),  # was correct
    ("FINAL ANSWER: $3.70\n\nCheck: 200 / 54 = 3.7037, and basic EPS is $3.80.", "correct"),  # a check, not a revision
])
def test_a_final_line_taken_back_after_it_goes_to_the_judge(questions, response, verdict):
    """easy_142 (key C, $3.70): the FINAL ANSWER line wins over steps and checks after it, not over a retraction."""
    assert grade_open_answer(questions["easy_142"], response, "stop").verdict == verdict


@pytest.mark.parametrize(("response", "verdict", "value"), [
    ('{"answer": {"value": 3.70, "unit": "USD per share"}}', "correct", 3.7),  # was deferred: no field read
    ('{"answer": {"value": 3.80, "unit": "USD"}}', "incorrect", 3.8),
])
def test_an_answer_field_holding_a_value_field(questions, response, verdict, value):
    grade = grade_open_answer(questions["easy_142"], response, "stop")  # key C, $3.70
    assert (grade.verdict, grade.value.value) == (verdict, value)


@pytest.mark.parametrize("response", [
    "The FV is $113,733 under quarterly compounding, or $112,555 if compounded annually.",
    "Depending on the compounding convention, the answer is $113,733 (quarterly) or $113,330 (semiannual).",
])
def test_a_value_under_each_of_two_conventions_is_a_hedge(questions, response):
    """easy_3 (key C, $113,733): manual rule 5, 'X under one convention, Y under another', even with X right;
    before, both were graded correct."""
    assert grade_open_answer(questions["easy_3"], response, "stop").verdict == "no_answer"


@pytest.mark.parametrize(("response", "value"), [
    ("Answer (in USD '000): 113.7", 113700),  # before: 113.7, incorrect
    ("FV ($ thousands): 113.733", 113733),
    ("FV (in millions): 0.1137", 113700),
])
def test_a_scale_note_on_the_label_before_the_value(questions, response, value):
    grade = grade_open_answer(questions["easy_3"], response, "stop")  # key C, $113,733
    assert (grade.verdict, grade.value.value) == ("correct", value)


@pytest.mark.parametrize("response", [
    "Antwort: Der Endwert beträgt rund 113.733 USD.",  # before: 113.733, incorrect
    "Risposta: circa 113.733 dollari.",
    "Antwoord: ongeveer $113.733",
])
def test_the_only_dot_group_on_the_key_as_thousands_goes_to_the_judge(questions, response):
    """easy_3 (key C, $113,733): '113.733' with no other number to settle the dot is 113,733 by the text's
    convention and 113.733 by the English one; one reading is right, the other wrong, so the judge reads it."""
    assert grade_open_answer(questions["easy_3"], response, "stop").verdict == "judge"
    assert grade_open_answer(questions["easy_64"], "FINAL ANSWER: 8.482%", "stop").verdict == "correct"  # a percent


def test_a_range_of_scaled_values_is_a_hedge(questions):
    """easy_3 (key C, $113,733): '$113.7k–$113.8k' is a range (manual rule 5); before, read as $113,700, correct."""
    assert grade_open_answer(questions["easy_3"], "FV ≈ $113.7k–$113.8k.", "stop").verdict == "no_answer"


def test_units_that_do_not_follow_a_whole_man_are_deferred(questions):
    assert grade_open_answer(questions["easy_3"], "答案：11万12,345美元", "stop").verdict == "judge"
    assert grade_open_answer(questions["easy_3"], "정답: 11만 3천 달러", "stop").verdict == "judge"  # 천 not read


@pytest.mark.parametrize("response", [
    # eopen-092: Turkish prefix percent with a decimal comma, 'düşüş' (decline)
    "Süre etkisi: −7,140 × 0,005 = −0,0357\nKonveksite etkisi: 0,5 × 66,200 × (0,005)² = +0,0008275\nToplam fiyat "
    "değişimi = −0,0357 + 0,0008 = −0,0349\n\nCevap: fiyatta yaklaşık %3,49 düşüş beklenir.",
    "Ответ: снижение на 3,49 %.",
    "Risposta: un calo del 3,49 %.",
    "답: 약 3.49% 하락합니다.",
    "答え：約3.49%の下落",
])
def test_decline_words_of_more_languages_sign_the_value(questions, response):
    grade = grade_open_answer(questions["easy_641"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", -3.49)


def test_lone_comma_group_that_is_the_key_with_a_decimal_comma_is_deferred(questions):
    """'70,906' is the text's only comma group: as thousands it misses the key 70.906, with a decimal comma it is
    the key; nothing settles it (eopen-012). Other comma groups settle it as thousands ('28,701 + 235 = 28,936')."""
    response = ("Step 1 – Inputs: PV0 = 98.722, PV− = 98.782, PV+ = 98.669, ΔYield = 0.001.\nStep 3 – Numerator = "
                "98.782 + 98.669 − 197.444 = 0.007\nStep 4 – Denominator = 0.000001 × 98.722\nStep 5 – Result\n\n"
                "FINAL ANSWER: 70,906")
    assert grade_open_answer(questions["easy_639"], response, "stop").verdict == "judge"
    settled = "PV0 = 98.722; 1,144 is the wrong sum.\n\nFINAL ANSWER: 70,906"
    assert grade_open_answer(questions["easy_639"], settled, "stop").verdict == "incorrect"
    assert grade_open_answer(questions["easy_273"], "FINAL ANSWER: $28,936,215", "stop").verdict == "correct"


def test_negation_then_a_letter_commits_and_a_named_letter_is_never_no_answer(questions):
    """'It's not C, since ... It is B.' commits to B (cmcq-023); a letter named in no form the reader decides on is
    the judge's, not no_answer (that needs a refusal, open alternatives or no letter at all)."""
    response = ("Pecking order theory (asymmetric information): managers prefer internal financing first, then debt, "
                "and new equity last because issuing equity signals overvaluation. It's not C, since equity is the "
                "least preferred source. It is B.")
    assert (grade_choice(questions["easy_376"], response).verdict, extract_choice(response, "ABC")) == ("incorrect",
                                                                                                          "B")
    unread = "It's not C, since equity is the least preferred source. B seems fine to me."
    assert grade_choice(questions["easy_376"], unread).verdict == "judge"
    assert grade_choice(questions["easy_376"], "Either A or C could work.").verdict == "no_answer"
    assert grade_choice(questions["easy_376"], "Cevap: B").letter == "B"


@pytest.mark.parametrize(("qid", "response", "word"), [
    ("easy_478", "Stopa zwrotu = (42 − 50 + 2) / 50 = −6 / 50\n\nOdpowiedź: strata 12,0%.", "strata"),
    ("easy_570", "Kurs = 31,358454 + 81,184928 = 112,543382\n\n"
                 "Antwort: Der Preis der Anleihe beträgt ca. 112,54 je 100 Nennwert.", "je"),
])
def test_an_unknown_word_next_to_the_value_defers(questions, qid, response, word):
    """fopen2-083, fopen2-077: a word the reader does not know next to the committed value may change it (a loss, a
    price per 100 of face); English words the reader's grammar reads ('a loss of ... on the shares') are known."""
    grade = grade_open_answer(questions[qid], response, "stop")
    assert (grade.verdict, grade.reason) == ("judge", f"an unknown word next to the value: {word}")
    assert grade_open_answer(questions["easy_478"], "Odpowiedź: około −12,0%.", "stop").verdict == "correct"
    assert grade_open_answer(questions["easy_478"], "The holding period return is a loss of 12.0% on the "
                             "shares.", "stop").verdict == "correct"


def test_scale_words_of_italian_and_turkish(questions):
    """fopen2-088: 'milyon' is million ('22 milyon $' is $22 million, not 22)."""
    response = ("Ödenen maaş = maaş gideri + maaş borçlarındaki azalış = 20 + (3 − 1) = 22\n\n"
                "Cevap: yaklaşık 22 milyon $.")
    grade = grade_open_answer(questions["easy_192"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 22_000_000)


def test_or_inside_an_expression_is_no_hedge(questions):
    """fopen2-023: 'P(X = 3, 4 or 5) = ...' counts outcomes inside an argument; it offers no alternatives."""
    grade = grade_open_answer(questions["easy_58"], "P(3 ≤ X < 6) = P(X = 3, 4 or 5) = 3 × (1/20) = 15%", "stop")
    assert grade.verdict == "correct"


def test_a_table_or_footnote_after_the_stated_value_does_not_replace_it(questions):
    """fopen2-041: '= **13.89%**' then a table whose last cell is 5.45% (an option): deferred. fopen2-056: a
    footnote (¹ ...) after '**7.21%**¹' is a note, not the conclusion."""
    table = ("R_USD = (1 + R_EUR)(1 + R_FX) − 1 = (1.08)(1.054545) − 1 = **13.89%**\n\n| Component | Value |\n"
             "|---|---|\n| Local-currency return | 8.00% |\n| USD/EUR return (1.10 → 1.16) | 5.45% |")
    assert grade_open_answer(questions["challenge_39"], table, "stop").verdict == "judge"
    footnote = ("75 = 100 / (1 + r)^48 → (1 + r) = (100/75)^(1/48) = 1.006011\n\n"
                "Annual YTM (periodicity 12) = 12 × 0.6011% = **7.21%**¹\n\n"
                "¹ The monthly periodic yield is 0.601%; on an annual-compounding basis the same bond yields 7.46%.")
    grade = grade_open_answer(questions["easy_577"], footnote, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 7.21)


@pytest.mark.parametrize(("qid", "response"), [
    ("easy_501", "It depends on how the $2.00 dividend is interpreted:\n\n- If $2.00 is the dividend just paid (D0), "
                 "then V = 2.08 / (0.07 − 0.04) = $69.33.\n- If $2.00 is next year's dividend (D1), then V = 2.00 / "
                 "0.03 = $66.67.\n\nSo the intrinsic value is $69.33 under the first reading or $66.67 under the "
                 "second."),
    ("easy_409", "Sale = 500 × 28 = 14,000; less commission 10\n\nI'll say the return is −12.5%, since the price fell "
                 "from $32 to $28.\nActually, including the interest, dividends and commissions: (14,000 − 10 − "
                 "4,000 − 80 + 250 − 12,010)/12,010 = −15.4%.\nBut if the question only wants the price effect, it is "
                 "−12.5%."),
])
def test_alternatives_left_open_at_the_end_are_no_answer(questions, qid, response):
    """fopen2-057: 'X under the first reading or Y under the second'; fopen2-067: a closing 'if ..., it is X' after
    a different stated value: the response never settles."""
    assert grade_open_answer(questions[qid], response, "stop").verdict == "no_answer"


def test_a_value_that_rounds_to_two_options_names_none(questions):
    """fmcq2-016: 'about $77.8 thousand' is $77,780 (B) and $77,807 (C) at its precision: no single option."""
    response = ("Carrying value at 1 Jan 2017 ≈ 1,944,499; × 4% ≈ 77,780. Rounding to the nearest hundred, the "
                "interest expense in 2017 is about $77.8 thousand.")
    assert grade_choice(questions["easy_274"], response).verdict == "no_answer"
    assert grade_choice(questions["easy_274"], "The interest expense in 2017 is about $77,780.").letter == "B"


# --- tests/grading_corpus_kept_out_4 (in-sample after its first scoring) ----------------------------------

def test_a_dot_group_in_a_decimal_comma_text_is_deferred_unless_dots_group_thousands(questions):
    """gopen-029: '70.906' where the working writes '0,001' (decimal commas) and no number groups thousands with
    dots is 70,906 by the text's convention or an English 70.906: a careful grader cannot tell. Where another
    number settles the dots ('81.481,48'), the reading stands."""
    working = "(98,782 + 98,669 − 2·98,722) / (0,001² · 98,722)\n\nFINAL ANSWER: 70.906"
    assert grade_open_answer(questions["easy_639"], working, "stop").verdict == "judge"
    settled = "Barwert 81.481,48; (0,001² · 98.722)\n\nFINAL ANSWER: 70.906"
    grade = grade_open_answer(questions["easy_639"], settled, "stop")
    assert (grade.verdict, grade.value.value) == ("incorrect", 70906)


def test_a_participle_after_the_asked_noun_still_names_it(questions):
    """gopen-071: 'Cash paid for salaries = ... = $22 million' states the asked cash; a later 'a decline of $2
    million' (the payable) is another quantity, never read as −$2 million (first deferred, since kept-out set 8 set
    aside as a change the question does not ask for). open-278: a term named after its number ('$20 million
    expense + ...') is not the statement's value."""
    later = ("Cash paid for salaries = expense + decrease in salaries payable = 20 + 2 = $22 million.\n\n"
             "Salaries payable fell from $3 million to $1 million, a decline of $2 million.")
    grade = grade_open_answer(questions["easy_192"], later, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 22_000_000)
    terms = "Cash paid for salaries = $20 million expense + $2 million reduction in salaries payable = **$22 million**."
    grade = grade_open_answer(questions["easy_192"], terms, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 22_000_000)


def test_a_count_restated_in_the_asked_unit_is_a_statement(questions):
    """gopen-074: '46.21 years' then 'That is about 555 months': the months asked for are stated; with the years
    read as the conclusion the two values disagree, so the judge decides (never 'incorrect' on the years)."""
    response = ("n = ln(4) / [365 × ln(1 + 0.03/365)] = 1.386294 / 0.0299988 = 46.21 years\n\n"
                "That is about 555 months (46.21 × 12 = 554.5), i.e. roughly 46.2 years.")
    assert grade_open_answer(questions["easy_5"], response, "stop").verdict == "judge"


def test_a_bare_working_value_and_its_scaled_answer_are_one_value(questions):
    """fopen2-101: 'Cash received = 100 - 10 = 90' then '$90 million': one value in two scales."""
    response = "Cash received = Revenue − ΔAR = 100 − 10 = 90\n\n$$\\boxed{\\$90\\text{ million}}$$"
    grade = grade_open_answer(questions["easy_189"], response, "stop")
    assert (grade.verdict, grade.value.value) == ("correct", 90_000_000)


@pytest.mark.parametrize(("response", "letter"), [
    ("Согласно МСФО, метод ЛИФО не допускается ни при каких обстоятельствах.\n\nОтвет: А", "A"),  # Cyrillic А
    ("答案：Ｃ", "C"),  # full-width
    ("Согласно МСФО ЛИФО запрещён. Ответ: Б.", "B"),  # Б, the second Cyrillic letter
    ("В соответствии с МСФО ЛИФО запрещён. Ответ: В.", None),  # В: B by its shape, C by its place: no guess
])
def test_letters_in_other_scripts(questions, response, letter):
    """gmcq-030 (easy_325): a Russian answer written with the Cyrillic 'А' (U+0410); writer L read 'Б' as B."""
    assert extract_choice(response) == letter


# --- tests/grading_corpus_fresh_2 (written blind on perturbed items; in-sample after its first scoring) ----------

def _corpus_row(row_id: str, corpus: str = "grading_corpus_fresh_2") -> tuple[Question, dict]:
    """A row of a corpus written on perturbed items and the question it answers (the item frozen in the row)."""
    return corpus_row(row_id, corpus)


def test_a_no_break_space_before_the_scale_word_keeps_the_scale():
    """H-open-028 (cf-easy_142-L3-s44): the stem writes '$266\u00a0million' and the rebuilt options copy it; the
    option was read as $266, so '266.1 (USD millions)' was graded incorrect. A generated level-3 item's key in
    millions was wrong for every answer."""
    assert option_value("$266\u00a0million.") == Number(266_000_000, "$")
    question, row = _corpus_row("H-open-028")
    grade = grade_open_answer(question, row["response"], "stop")
    assert grade.verdict == "correct" and math.isclose(grade.value.value, 266_100_000)


def test_a_bare_number_is_read_in_the_scale_every_amount_of_the_stem_uses(questions):
    """H-open-039: '65.9' against '£66 million.' where the stem writes '£24 million': a careful grader reads
    £65.9 million. easy_192 likewise ('$20 million', '$3 million', '$1 million'). Where the stem writes
    amounts in full (easy_513: 'EBITDA = $22,000,000'), a bare '169' is the key only in the options' scale:
    the judge decides. A number written in full ('22,000,000') is never scaled."""
    question, row = _corpus_row("H-open-039")
    assert grade_open_answer(question, row["response"], "stop").verdict == "correct"
    assert grade_open_answer(questions["easy_192"], "FINAL ANSWER: 22", "stop").value.value == 22_000_000
    wrong = grade_open_answer(questions["easy_192"], "FINAL ANSWER: 18", "stop")
    assert (wrong.verdict, wrong.value.value) == ("incorrect", 18_000_000)
    assert grade_open_answer(questions["easy_192"], "FINAL ANSWER: 22,000,000", "stop").verdict == "correct"
    assert grade_open_answer(questions["easy_513"], "FINAL ANSWER: 169", "stop").verdict == "judge"


@pytest.mark.parametrize(("row_id", "verdict", "value"), [
    ("H-open-035", "correct", 2_160_000),  # '$21.6 lakh': a lakh is 100,000
    ("H-open-032", "correct", 107.215),  # '$1,072.15 per $1,000 par' against a price per 100 of par
    ("H-open-107", "correct", 2.5),  # 'declined by about 2.5%' answers 'The decline ... is closest to'
    ("H-open-095", "correct", None),  # 'Roughly CHF 790–800 per unit; call it CHF 794.'
    ("H-open-088", "no_answer", None),  # '... about 21.9 under the first and 4.16 under the second'
    ("H-open-198", "no_answer", None),  # '≈ 0.30 if ... standard deviations; if they are ... variances, ≈ 0.20'
    ("H-open-011", "judge", None),  # '658,824 contracts': its only own comma group ('$112,000' is the stem's)
    ("H-open-109", "judge", None),  # 'loss on sale of €2.3 million' after '€16 million': never €16m incorrect
])
def test_fresh_corpus_2_forms(row_id, verdict, value):
    question, row = _corpus_row(row_id)
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict, (grade, row["note"])
    if value is not None:
        assert math.isclose(grade.value.value, value, rel_tol=1e-9)


def test_a_par_basis_the_question_does_not_state_is_the_judges(questions):
    """'per $1,000 par' against a question that names no par basis: which basis the key uses is not known."""
    grade = grade_open_answer(questions["easy_192"], "FINAL ANSWER: $22 per $1,000 par", "stop")
    assert grade.verdict == "judge"


@pytest.mark.parametrize(("response", "letter"), [
    ("FIFO COGS = 115,936.\n\nANSWER: ~~B~~ A", "A"),  # H-mcq-044: a struck letter corrected
    ("ANSWER: ~~A~~ C?", None),  # the manual's example: a retracted letter beside a doubted one
])
def test_a_struck_letter_then_another(response, letter):
    assert extract_choice(response) == letter


# --- tests/grading_corpus_kept_out_5 (in-sample after its first scoring) ----------------------------------

@pytest.mark.parametrize(("row_id", "verdict", "value"), [
    ("I-open-086", "correct", 89.19),  # prose '(t = 4):' then a JSON block: its present_value field answers
    ("I-open-098", "correct", 8.666),  # 'DM = 0.08666' in a question asked in basis points: a fraction, 867 bps
    ("I-open-172", "correct", 52.31),  # '= $47.30' then 'Wait, ... next year's dividend: V₀ = $52.31'
    ("I-open-016", "correct", 122.35),  # '**122.35**' then 'Sensitivity: if the rate rose to 3.0%, ... 118.82'
    ("I-open-108", "correct", 20_988),  # a footnote '¹ DDB rate = 33.33%; year-5 DDB charge = €39,506'
    ("I-open-163", "correct", 58_000_000),  # 'All figures in $000s.' ... '= 58,000'
    ("I-open-060", "no_answer", None),  # '0.448; if ... exactly four, 0.323. Both interpretations are defensible.'
    ("I-open-132", "no_answer", None),  # '184 contracts ... or 212 ... the question doesn't specify which approach'
    ("I-open-145", "no_answer", None),  # 'Under one convention the price is about 52, under the other about 54.'
])
def test_kept_out_5_forms(row_id, verdict, value):
    question, row = _corpus_row(row_id, "grading_corpus_kept_out_5")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict, (grade, row["note"])
    if value is not None:
        assert math.isclose(grade.value.value, value, rel_tol=1e-9)


def test_a_letter_before_a_japanese_copula():
    """I-mcq-064 (easy_75): '正解はCです。' (the correct answer is C): a CJK word right after the letter."""
    assert extract_choice("対数正規分布は負の値をとりません。\n\n正解はCです。") == "C"


# --- tests/grading_corpus_kept_out_6 to _9 (in-sample after their first scoring) ---------------------------

@pytest.mark.parametrize(("corpus", "row_id", "verdict", "value"), [
    ("6", "J-open-048", "correct", 0.78),  # 'FINAL ANSWER: 78 cents' against '$0.78'
    ("6", "J-open-043", "correct", 610.44),  # '50.87 years' when the question asks for months
    ("6", "J-open-150", "truncated", None),  # 'FINAL ANSWER: 42' cut by the token limit (the working says 422.1)
    ("6", "J-open-179", "no_answer", None),  # 'entre el 6,5 % y el 6,7 %'
    ("6", "J-open-062", "correct", 2_860_000),  # a JSON reply whose one field naming the asked noun answers
    ("7", "K-open-067", "correct", 1.5),  # 'decline_in_portfolio_value: 1.5%' in unfenced 'name: value' lines
    ("5", "I-open-100", "correct", 39.0625),  # 'min_margin_requirement': the field naming the asked requirement
    # kept-out sets 8 and 9
    ("8", "L-open-020", "correct", 22.89),  # '$22.89, a drop of $4.11 per share': the price asked, not the drop
    ("9", "M-open-076", "correct", 112),  # '≈ $112.00, an expected gain of about $1.00 per share (0.9%)'
    ("9", "M-open-118", "correct", 29),  # 'falls to $29 — a drop of $21 from the $50 purchase price'
    ("8", "L-open-168", "correct", 0.22),  # '≈ 0.22' then 'Check: ...; there are 4 quarters and p = 0.94.'
    ("8", "L-open-114", "correct", 1230),  # the table bolds 'Contracts to sell' 1,230 (its one bold value) above 4.8
    ("9", "M-open-081", "judge", None),  # '**$64,400**' then 'carrying amount = $565,200'
])
def test_kept_out_6_to_9_open_forms(corpus, row_id, verdict, value):
    question, row = _corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict, (grade, row["note"])
    if value is not None:
        assert math.isclose(grade.value.value, value, rel_tol=1e-6)


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "letter"), [
    ("6", "J-mcq-016", "incorrect", "B"),  # a lone 'b.' closing the reply
    ("7", "K-mcq-010", "incorrect", "C"),  # 'donc la bonne réponse est (c).'
    ("7", "K-mcq-087", "no_answer", None),  # '答案：A或C': two letters
    ("7", "K-mcq-082", "no_answer", None),  # '≈ 39.8' against 39.68 and 39.96: it rounds to neither
    ("6", "J-mcq-025", "judge", None),  # '(A), not the multistage DDM (C)': never C, the letter ruled out
])
def test_kept_out_6_and_7_letter_forms(corpus, row_id, verdict, letter):
    question, row = _corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_choice(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.letter) == (verdict, letter), (grade, row["note"])


def test_a_change_the_question_asks_for_is_no_aside(questions):
    """open-129 (easy_319): 'implies a decline of $420,000 in average receivables' answers a question about the
    change; 'a drop of ...' is set aside only where a level is asked."""
    response = ("AR2003 = 300 × 19/365 = 15.616M; ... with growth the required cut in the collection period implies a "
                "decline of $420,000 in average receivables.")
    assert grade_open_answer(questions["easy_319"], response, "stop").value.value == -420_000


@pytest.mark.parametrize(("corpus", "row_id", "verdict", "reason"), [
    ("5", "I-open-051", "judge", "an earlier result"),  # '= £413.89 per quarter.' then 'a total of £16,556 ...'
    ("7", "K-open-081", "judge", "an earlier result"),  # '≈ £259.84 per quarter.' then '£15,590 of deposits ...'
    # 'r ≈ 10.10%, ...; the implied payout ratio is 47.4%': now deferred before, on the word next to the value
    ("8", "L-open-187", "judge", "an unknown word next to the value: ratio"),
    # 'annual_expected_credit_loss: 0.37%' first of four 'name: value' lines; deferred on the name's last word
    ("9", "M-open-062", "judge", "an unknown word next to the value: effect"),
    ("8", "L-open-154", "incorrect", ""),  # '$13m gap', then 'decreased by $13 million': the same value, signed
    ("7", "K-open-097", "incorrect", ""),  # '9.11%', then 'I'll go with the additive version ... 8.9%': taken back
    ("6", "J-open-089", "incorrect", ""),  # '2.31%', then 'Hmm, wait ... 1.89%': corrected
])
def test_an_earlier_result_on_the_key_is_not_overruled_by_an_aside(corpus, row_id, verdict, reason):
    """Issue #31: a value graded wrong after an earlier result that is the key, not taken back, may be an aside
    after the answer: the judge decides. A revision, a choice or the same value signed keeps the verdict."""
    question, row = _corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict and grade.reason.startswith(reason), (grade, row["note"])


@pytest.mark.parametrize(("row_id", "verdict"), [
    ("N-open-137", "no_answer"),  # 'about +1.97% to +1.99%': a range, no choice
    ("N-open-139", "no_answer"),  # 'either about −39.1% (if ... included ...) or about −40.8% (if ...)'
])
def test_kept_out_10_hedges(row_id, verdict):
    """Found by kept-out corpus 10 after its one scoring (in-sample from then on)."""
    question, row = _corpus_row(row_id, "grading_corpus_kept_out_10")
    assert grade_open_answer(question, row["response"], row["finish_reason"]).verdict == verdict


@pytest.mark.parametrize(("corpus", "row_id", "reason"), [
    ("11", "O-open-094", "a later value, 5.12%"),  # 'r = 5.74%? No — ... r = 5.12%': a question is no statement
    ("11", "O-open-108", "a later value, 1.36"),  # 'appreciated by about 4.6%: the USD/EUR rate rises to 1.36'
    ("11", "O-open-075", "a later value, $0.018"),  # 'commissions = $180, ...: about $0.018 per share'
])
def test_a_later_value_on_the_key_sends_a_wrong_reading_to_the_judge(corpus, row_id, reason):
    """Found by kept-out corpus 11 after its one scoring: a value graded wrong before a later value that is the
    key may be a step; the judge decides. A later value in a remark (parentheses, 'if ... would', a footnote,
    'above the 4.2% you would get') keeps the verdict (bopen-017 and the rows of tests/grading_corpus stay
    decided: benchmarks/grading.py)."""
    question, row = _corpus_row(row_id, f"grading_corpus_kept_out_{corpus}")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == "judge" and grade.reason.startswith(reason), (grade, row["note"])


@pytest.mark.parametrize(("row_id", "verdict", "value"), [
    ("O-open-021", "no_answer", None),  # '4.97% on a 365-day year, or 4.90% on a 360-day year'
    ("O-open-117", "no_answer", None),  # '≈ 2.75% on a 365-day basis, or about 2.71% if ... a 360-day year'
    ("O-open-058", "correct", 1001),  # '24 024 / 24 = 1 001': a text that groups thousands by spaces
])
def test_kept_out_11_conventions_and_space_groups(row_id, verdict, value):
    """Found by kept-out corpus 11 after its one scoring (in-sample from then on)."""
    question, row = _corpus_row(row_id, "grading_corpus_kept_out_11")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict and (value is None or grade.value.value == value), grade


def test_a_conclusion_that_leaves_two_letters_open_commits_to_none():
    """N-mcq-068 (kept-out corpus 10): '... 3.28% (B), or ... 3.23% (A). It depends on the day-count you use, so
    A or B.' is no answer, whatever letters came before."""
    question, row = _corpus_row("N-mcq-068", "grading_corpus_kept_out_10")
    grade = grade_choice(question, row["response"], row["finish_reason"])
    assert (grade.verdict, grade.letter) == ("no_answer", None)
    assert extract_choice("I'd say the answer is B, so A or B.", "ABC") is None


@pytest.mark.parametrize(("row_id", "verdict", "value"), [
    ("P-open-048", "no_answer", None),  # '... if in thousands, $7,000. Either reading is possible ...'
    ("P-open-095", "no_answer", None),  # '$38,400. Hmm, but ... closer to $34,900. I can't rule either out'
    ("P-open-150", "correct", 72_200),  # Portuguese 'US$ 72.200' among '445.800', '518.000': dots group thousands
    ("P-open-187", "correct", 26.92),  # full-width '約２６．９２％'
    ("P-open-210", "correct", 95.723),  # '$957.23 per $1,000 bond' against a key per 100 of par
    ("P-open-215", "judge", None),  # 'FINAL ANSWER: 60 quarterly deposits of £306.11': two values on the line
    ("P-open-219", "incorrect", None),  # 'FINAL ANSWER: 0.4875%' against the probability 0.49
    ("P-open-057", "correct", 15.33),  # JSON: 'inputs': {'price': 25, ...}, 'result': {'margin_call_price': 15.33}
])
def test_kept_out_12_open_forms(row_id, verdict, value):
    """Found by kept-out corpus 12 after its one scoring (in-sample from then on)."""
    question, row = _corpus_row(row_id, "grading_corpus_kept_out_12")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict, (grade, row["note"])
    assert value is None or math.isclose(grade.value.value, value, rel_tol=1e-4), grade


@pytest.mark.parametrize(("row_id", "letter"), [
    ("P-mcq-007", "C"),  # 'Neither A nor B is the inaccurate one, so it must be C — ...'
    ("P-mcq-081", "C"),  # 'Of the three, the third option is least likely to affect capital structure.'
    ("P-mcq-093", "B"),  # '... so the second option fits best.'
])
def test_kept_out_12_letter_forms(row_id, letter):
    """Found by kept-out corpus 12 after its one scoring (in-sample from then on)."""
    question, row = _corpus_row(row_id, "grading_corpus_kept_out_12")
    assert grade_choice(question, row["response"], row["finish_reason"]).letter == letter


@pytest.mark.parametrize(("row_id", "verdict", "value"), [
    ("Q-open-054", "correct", 21),  # '7 choose 2, which is twenty-one unique covariance terms'
    ("Q-open-094", "no_answer", None),  # '33.1%. Hmm, or ... 49.4%. I'd need to check which base ...'
    ("Q-open-112", "correct", 980),  # '≈ CHF 980 per unit — roughly CHF 975–985 given rounding'
    ("Q-open-120", "no_answer", None),  # 'On a 365-day ... basis ... 3.77%; on a 360-day ... basis it is 3.71%.'
    ("Q-open-176", "no_answer", None),  # '約4.99%か5.0%のどちらかです' (either 4.99% or 5.0%)
    ("Q-open-202", "no_answer", None),  # 'With a 365-day year ... $4,109,589; with a 360-day year it is $4,166,667.'
])
def test_kept_out_13_open_forms(row_id, verdict, value):
    """Found by kept-out corpus 13 after its one scoring at the end of the session (in-sample from then on)."""
    question, row = _corpus_row(row_id, "grading_corpus_kept_out_13")
    grade = grade_open_answer(question, row["response"], row["finish_reason"])
    assert grade.verdict == verdict, (grade, row["note"])
    assert value is None or math.isclose(grade.value.value, value, rel_tol=1e-6), grade


def test_an_answer_line_that_corrects_itself():
    """Q-mcq-034 (kept-out corpus 13): 'ANSWER: A — no, C.' commits to C."""
    question, row = _corpus_row("Q-mcq-034", "grading_corpus_kept_out_13")
    assert grade_choice(question, row["response"], row["finish_reason"]).letter == "C"
    assert extract_choice("ANSWER: B (wait, no: it is B)", "ABC") == "B"

"""Verified perturbations on real CFA-Easy questions, with hand-written generator replies (no model)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfa_lib.data import Question
from cfa_lib.formula import evaluate_formula
from cfa_lib.models.types import Completion
from cfa_lib.perturb import (
    ExtractedParameter,
    FormulaExtraction,
    PerturbationRecord,
    Plan,
    QuestionRewrite,
    apply_rewrite,
    build_perturbations,
    count_span,
    coverage_counts,
    find_numbers,
    perturb_question,
    rebuild_choices,
    solve_for,
    substitute_values,
    verify_extraction,
)

# Rows of datasets/FinEval/CFA_Easy.json, as cfa_lib.data parses them.
EASY_3 = Question(
    id="easy_3",
    dataset="easy",
    index=3,
    stem="The value in six years of $75,000 invested today at a stated annual interest rate of 7% "
    "compounded quarterly is closest to:",
    choices={"A": "$112,555.", "B": "$113,330.", "C": "$113,733"},
    answer="C",
)
EASY_11 = Question(
    id="easy_11",
    dataset="easy",
    index=11,
    stem="At a 5% interest rate per year compounded annually, the present value (PV) of a 10-year ordinary "
    "annuity with annual payments of $2,000 is $15,443.47. The PV of a 10-year annuity due with the same "
    "interest rate and payments is closest to:",
    choices={"A": "$14,708.", "B": "$16,216.", "C": "$17,443"},
    answer="B",
)
EASY_569 = Question(
    id="easy_569",
    dataset="easy",
    index=569,
    stem="A bond offers an annual coupon rate of 4%, with interest paid semiannually. The bond matures in "
    "two years. At a market discount rate of 6%, the price of this bond per 100 of par value is closest to:",
    choices={"A": "93.07.", "B": "96.28.", "C": "96.33."},
    answer="B",
)
EASY_9 = Question(
    id="easy_9",
    dataset="easy",
    index=9,
    stem="An investment of €500,000 today that grows to €800,000 after six years has a stated annual "
    "interest rate closest to:",
    choices={
        "A": "7.5% compounded continuously.",
        "B": "7.7% compounded daily.",
        "C": "8.0% compounded semiannually.",
    },
    answer="C",
)
EASY_0 = Question(
    id="easy_0",
    dataset="easy",
    index=0,
    stem="The nominal risk-free rate is best described as the sum of the real risk-free rate and a premium for:",
    choices={"A": "maturity.", "B": "liquidity.", "C": "expected inflation."},
    answer="C",
)
EASY_361 = Question(
    id="easy_361",
    dataset="easy",
    index=361,
    stem=(
        "Two years ago, a company issued $20\xa0million in long-term bonds at par value with a coupon "
        "rate of 9%. The company has decided to issue an additional $20\xa0million in bonds and "
        "expects the new issue to be priced at par value with a coupon rate of 7%. The company has "
        "no other debt outstanding and has a tax rate of 40%. To compute the company's weighted "
        "average cost of capital, the appropriate after-tax cost of debt is closest to:"
    ),
    choices={"A": "4.2%.", "B": "4.8%.", "C": "5.4%."},
    answer="A",
)


def P(name, value, kind, span, description="", derived_from=""):  # noqa: N802 - reads like a table row
    return ExtractedParameter(
        name=name, value=value, kind=kind, span=span, description=description, derived_from=derived_from
    )


def not_computable(reason: str) -> FormulaExtraction:
    return FormulaExtraction(computable=False, reason=reason, parameters=[], asked_quantity="", unit="", formula="")


GROWTH = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("pv", 75_000, "amount", "$75,000", "amount invested today"),
        P("r", 0.07, "rate", "7%", "stated annual interest rate"),
        P("m", 4, "other", "quarterly", "compounding periods per year"),
        P("t", 6, "count", "six years", "years"),
    ],
    asked_quantity="future value",
    unit="$",
    formula="pv * (1 + r/m) ** (m*t)",
)
ANNUITY_DUE = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("r", 0.05, "rate", "5%", "annual interest rate"),
        P("n", 10, "count", "10-year", "years of payments"),
        P("pmt", 2000, "amount", "$2,000", "annual payment"),
        P(
            "pv_ordinary",
            15443.47,
            "amount",
            "$15,443.47",
            "PV of the ordinary annuity",
            derived_from="pmt * (1 - (1 + r) ** -n) / r",
        ),
    ],
    asked_quantity="PV of the annuity due",
    unit="$",
    formula="pv_ordinary * (1 + r)",
)
BOND = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("c", 0.04, "rate", "4%", "annual coupon rate"),
        P("m", 2, "other", "semiannually", "coupons per year"),
        P("n", 2, "count", "two years", "years to maturity"),
        P("y", 0.06, "rate", "6%", "market discount rate"),
        P("par", 100, "other", "100", "par value"),
    ],
    asked_quantity="bond price per 100 of par",
    unit="per 100 of par",
    formula="par * (c/m * (1 - (1 + y/m) ** (-m*n)) / (y/m) + (1 + y/m) ** (-m*n))",
)
RATE_FROM_GROWTH = FormulaExtraction(
    computable=True,
    reason="",
    parameters=[
        P("pv", 500_000, "amount", "€500,000", "amount invested today"),
        P("fv", 800_000, "amount", "€800,000", "value after six years"),
        P("t", 6, "count", "six years"),
        P("m", 2, "other", "semiannually"),
    ],
    asked_quantity="stated annual rate compounded semiannually",
    unit="%",
    formula="m * ((fv / pv) ** (1 / (m * t)) - 1)",
)


def _number(text: str) -> float:
    (found,) = find_numbers(text)
    return found.number


# --- check 1 -----------------------------------------------------------------------------------


def test_compound_growth_reproduces_easy_3():
    verification = verify_extraction(EASY_3, GROWTH)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(113_733.21, abs=0.01)
    assert verification.answer_scale == 1.0
    assert [c.name for c in verification.trail][-1] == "reproduces_answer"


def test_annuity_due_with_a_derived_given_reproduces_easy_11():
    verification = verify_extraction(EASY_11, ANNUITY_DUE)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(16_215.64, abs=0.01)
    assert "derived_values" in [c.name for c in verification.trail]


def test_bond_price_reproduces_easy_569():
    verification = verify_extraction(EASY_569, BOND)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(96.28, abs=0.005)


def test_rate_answer_is_compared_percent_aware():
    verification = verify_extraction(EASY_9, RATE_FROM_GROWTH)
    assert verification.ok, verification.reason
    assert verification.original_answer_value == pytest.approx(0.07988, abs=1e-5)  # option "8.0%"
    assert verification.answer_scale == 0.01


def test_wrong_formula_is_not_verifiable():
    annual = GROWTH.model_copy(update={"formula": "pv * (1 + r) ** t"})  # ignores quarterly compounding
    verification = verify_extraction(EASY_3, annual)
    assert verification.status == "not_verifiable"
    assert "formula gives 112555" in verification.reason and "'$113,733'" in verification.reason


def test_value_that_does_not_match_its_span_is_not_verifiable():
    params = list(GROWTH.parameters)
    params[1] = P("r", 0.08, "rate", "7%")
    verification = verify_extraction(EASY_3, GROWTH.model_copy(update={"parameters": params}))
    assert verification.status == "not_verifiable"
    assert verification.reason == "parameter 'r': value 0.08 does not match its span '7%'"


def test_hostile_formula_is_not_verifiable_and_never_evaluated():
    hostile = GROWTH.model_copy(update={"formula": "__import__('os').system('echo hi')"})
    verification = verify_extraction(EASY_3, hostile)
    assert verification.status == "not_verifiable"
    assert verification.reason.startswith("formula rejected: ")


def test_conceptual_question_is_not_perturbable():
    records = perturb_question(EASY_0, None, levels=(1, 2, 3))
    assert [r.status for r in records] == ["not_perturbable"] * 3
    assert records[0].reason == "correct option C ('expected inflation.') carries no number"


def test_generator_saying_not_computable_is_not_perturbable():
    reply = not_computable("needs the yield on existing debt, a judgement")
    (record,) = perturb_question(EASY_361, reply)
    assert record.status == "not_perturbable"
    assert "needs the yield on existing debt" in record.reason


# --- level 1 and 2 ----------------------------------------------------------------------------


def _plan(question, extraction, level, seed=0) -> Plan:
    (item,) = perturb_question(question, extraction, levels=(level,), seed=seed)
    assert isinstance(item, Plan), item.reason
    return item


def test_level1_changes_one_value_and_recomputes_the_answer():
    plan = _plan(EASY_3, GROWTH, 1)
    record = plan.record
    assert len(record.changed) == 1 and record.changed[0] in {"pv", "r"}
    name = record.changed[0]
    original = GROWTH.parameters[[p.name for p in GROWTH.parameters].index(name)].value
    assert record.new_values[name] != original
    ratio = record.new_values[name] / original
    assert 0.55 <= ratio <= 0.95 or 1.05 <= ratio <= 1.55
    expected = evaluate_formula(GROWTH.formula, record.new_values)
    assert record.new_answer_value == pytest.approx(expected)
    assert abs(record.new_answer_value / 113_733.21 - 1) >= 0.01
    # the new correct option is the recomputed answer written like "$113,733"
    correct = record.choices[record.correct_letter]
    assert re.fullmatch(r"\$\d{2,3},\d{3}\.", correct)
    assert _number(correct) == round(expected)


def test_level1_draws_are_seeded():
    first = _plan(EASY_3, GROWTH, 1, seed=7).record
    again = _plan(EASY_3, GROWTH, 1, seed=7).record
    other = [_plan(EASY_3, GROWTH, 1, seed=s).record for s in range(8)]
    assert (first.new_values, first.choices) == (again.new_values, again.choices)
    assert len({json.dumps(r.new_values, sort_keys=True) for r in other}) > 1
    assert {r.correct_letter for r in other} == {"A", "B", "C"}


def test_new_spans_are_written_like_the_original():
    plan = _plan(EASY_3, GROWTH, 2)
    assert sorted(plan.record.changed) == ["pv", "r"]
    spans = dict(zip(plan.old_spans, plan.new_spans, strict=True))
    assert re.fullmatch(r"\$\d{2,3},\d{3}", spans["$75,000"])
    assert re.fullmatch(r"\d+(\.\d)?%", spans["7%"])
    assert float(spans["7%"].rstrip("%")) / 100 == pytest.approx(plan.record.new_values["r"])
    assert float(spans["$75,000"][1:].replace(",", "")) == plan.record.new_values["pv"]


def test_level2_on_the_bond_changes_both_rates_and_reprices():
    plan = _plan(EASY_569, BOND, 2)
    record = plan.record
    assert sorted(record.changed) == ["c", "y"]  # par 100 and the word spans stay fixed
    c, y = record.new_values["c"], record.new_values["y"]
    coupons = 100 * c / 2
    price = sum(coupons / (1 + y / 2) ** k for k in range(1, 5)) + 100 / (1 + y / 2) ** 4
    assert record.new_answer_value == pytest.approx(price)
    assert _number(record.choices[record.correct_letter]) == pytest.approx(price, abs=0.005)


def test_derived_given_is_recomputed_and_rewritten():
    # easy_11 states the ordinary annuity PV; changing r must change that given too (the card's example).
    for seed in range(20):
        plan = _plan(EASY_11, ANNUITY_DUE, 1, seed=seed)
        if plan.record.changed == ["r"]:
            break
    values = plan.record.new_values
    r, n, pmt = values["r"], values["n"], values["pmt"]
    ordinary = pmt * (1 - (1 + r) ** -n) / r
    assert values["pv_ordinary"] == pytest.approx(ordinary)
    assert "$15,443.47" in plan.old_spans
    assert f"${ordinary:,.2f}" in plan.new_spans
    assert plan.record.new_answer_value == pytest.approx(ordinary * (1 + r))


@pytest.mark.parametrize("seed", range(6))
def test_rebuilt_choices_keep_relative_gaps_order_and_formats(seed):
    options = {letter: find_numbers(text)[0] for letter, text in EASY_3.choices.items()}
    choices, letter = rebuild_choices(EASY_3, options, 90_000.0, np.random.default_rng(seed))
    assert choices[letter] == "$90,000."
    # every option as "$dd,ddd." (the last gets the '.' FinEval dropped), sorted like the original
    assert all(re.fullmatch(r"\$\d\d,\d{3}\.", text) for text in choices.values())
    numbers = [_number(choices[k]) for k in "ABC"]
    assert numbers == sorted(numbers)
    # the same relative gaps |d - c| / c as in the original (112,555 and 113,330 against 113,733)
    gaps = sorted(abs(n - 90_000) / 90_000 for k, n in zip("ABC", numbers, strict=True) if k != letter)
    assert gaps == [pytest.approx(403 / 113_733, abs=1e-5), pytest.approx(1178 / 113_733, abs=1e-5)]


def test_rebuilt_choices_put_the_correct_option_at_every_letter():
    options = {letter: find_numbers(text)[0] for letter, text in EASY_3.choices.items()}
    letters = {rebuild_choices(EASY_3, options, 90_000.0, np.random.default_rng(s))[1] for s in range(12)}
    assert letters == {"A", "B", "C"}


def test_rebuilt_percent_choices_keep_their_own_words():
    options = {letter: find_numbers(text)[0] for letter, text in EASY_9.choices.items()}
    for seed in range(6):
        choices, letter = rebuild_choices(EASY_9, options, 10.0, np.random.default_rng(seed))
        assert choices[letter] == "10.0% compounded semiannually."
        assert sorted(choices.values(), key=_number) == list(choices.values())
        words = sorted(text.split("% ")[1] for text in choices.values())
        assert words == ["compounded continuously.", "compounded daily.", "compounded semiannually."]
        gaps = sorted(round(abs(_number(t) - 10.0), 1) for k, t in choices.items() if k != letter)
        assert gaps == [0.4, 0.6]  # 8.0% vs 7.7% and 7.5%, scaled to 10.0%


def test_rebuilt_choices_add_decimals_rather_than_merge():
    options = {letter: find_numbers(text)[0] for letter, text in EASY_569.choices.items()}
    choices, letter = rebuild_choices(EASY_569, options, 2.0, np.random.default_rng(0))
    assert choices[letter] == "2.000."
    assert len(set(choices.values())) == 3


def test_negative_options_keep_their_sign_character():
    question = Question(
        id="easy_76",
        dataset="easy",
        index=76,
        stem="The price of a stock at t = 0 is $208.25 and at t = 1 is $186.75. The continuously compounded "
        "rate of return for the stock from t = 0 to t = 1 is closest to:",
        choices={"A": "–10.90%.", "B": "–10.32%.", "C": "11.51%."},
        answer="A",
    )
    options = {letter: find_numbers(text)[0] for letter, text in question.choices.items()}
    assert options["A"].number == -10.90
    choices, letter = rebuild_choices(question, options, -20.0, np.random.default_rng(0))
    assert choices[letter] == "–20.00%."
    assert sorted(choices.values()) == sorted(["–20.00%.", "–18.94%.", "21.12%."])


# --- rewrites -----------------------------------------------------------------------------------


def test_generator_rewrite_with_every_new_value_is_valid():
    plan = _plan(EASY_3, GROWTH, 2)
    text = substitute_values(EASY_3.stem, plan.old_spans, plan.new_spans).replace("closest to", "nearest to")
    record = apply_rewrite(plan, EASY_3, QuestionRewrite(question=text))
    assert record.status == "valid" and record.rewrite_path == "generator"
    assert record.question == text
    assert record.as_question().mcq_text().startswith(text)


def test_rewrite_that_keeps_an_old_value_is_rejected():
    plan = _plan(EASY_3, GROWTH, 2)
    new_pv = plan.new_spans[plan.old_spans.index("$75,000")]
    text = EASY_3.stem.replace("$75,000", new_pv)  # forgot to change the rate
    record = apply_rewrite(plan, EASY_3, QuestionRewrite(question=text), fallback=False)
    assert record.status == "rejected"
    assert record.rewrite_path is None
    assert "still contains '7%'" in record.reason or "missing" in record.reason


def test_failed_rewrite_falls_back_to_span_substitution():
    plan = _plan(EASY_3, GROWTH, 2)
    failed = Completion(text="", model="scripted", error="timeout", error_kind="failed")
    record = apply_rewrite(plan, EASY_3, failed, fallback=True)
    assert record.status == "valid" and record.rewrite_path == "substitution"
    for new in plan.new_spans:
        assert new in record.question
    assert "$75,000" not in record.question and count_span(record.question, "7%") == 0
    assert ("rewrite_reply", False) in [(c.name, c.passed) for c in record.trail]


def test_substitution_needs_unique_spans():
    assert substitute_values("at 7% for 7 years, 17%", ["7%", "7 years"], ["8.5%", "9 years"]) == (
        "at 8.5% for 9 years, 17%"
    )
    with pytest.raises(ValueError, match="span '10-year' occurs 2 times"):
        substitute_values(EASY_11.stem, ["10-year"], ["12-year"])


# --- level 3 ------------------------------------------------------------------------------------


def test_level3_round_trip_asks_for_an_input():
    plan = _plan(EASY_3, GROWTH, 3)
    record = plan.record
    (unknown,) = record.changed
    assert unknown in {"pv", "r"}
    checks = {c.name: c.passed for c in record.trail}
    assert checks["round_trip"] and checks["stated_answer"]
    original = {"pv": 75_000, "r": 0.07}[unknown]
    assert record.new_answer_value == original
    solved = solve_for(lambda v: evaluate_formula(GROWTH.formula, v), dict(record.original_values), unknown, 113_733.0)
    assert solved == pytest.approx(original, rel=1e-4)
    assert plan.level3_answer_text == "$113,733"
    correct = record.choices[record.correct_letter]
    assert correct == {"pv": "$75,000.", "r": "7.00%."}[unknown]


def test_level3_rewrite_must_drop_the_unknown():
    plan = _plan(EASY_9, RATE_FROM_GROWTH, 3)
    (unknown,) = plan.record.changed
    span = {"pv": "€500,000", "fv": "€800,000"}[unknown]
    asked = "the amount invested today" if unknown == "pv" else "the value after six years"
    good = (
        "An investment that earns a stated annual interest rate of 8.0% compounded semiannually is worth "
        + (
            "€800,000 after six years. The amount invested today"
            if unknown == "pv"
            else "€500,000 today. The value after six years"
        )
        + " is closest to:"
    )
    assert apply_rewrite(plan, EASY_9, QuestionRewrite(question=good)).status == "valid"
    plan = _plan(EASY_9, RATE_FROM_GROWTH, 3)
    leaky = f"{good[: -len(' is closest to:')]} (not {span}) is closest to: {asked}"
    record = apply_rewrite(plan, EASY_9, QuestionRewrite(question=leaky))
    assert record.status == "rejected" and f"still contains '{span}'" in record.reason


def test_solve_for_a_rate_in_the_bond_price():
    values = {"c": 0.04, "m": 2, "n": 2, "y": 0.06, "par": 100}
    price = evaluate_formula(BOND.formula, values)
    y = solve_for(lambda v: evaluate_formula(BOND.formula, v), values, "y", price, upper=1.0)
    assert y == pytest.approx(0.06, rel=1e-9)


# --- orchestration with a scripted generator (hand-written replies) ---------------------------


class ScriptedGenerator:
    """Answers extraction requests from a table keyed by question text; rewrite requests with `rewrite`."""

    def __init__(self, extractions: dict[str, object], rewrite):
        self.extractions = extractions
        self.rewrite = rewrite
        self.batches: list[int] = []

    def complete_many(self, requests, max_concurrency=8, desc=""):
        self.batches.append(len(requests))
        out = []
        for request in requests:
            user = request.messages[-1]["content"]
            if request.schema is FormulaExtraction:
                key = next(k for k in self.extractions if k in user)
                reply = self.extractions[key]
            else:
                reply = self.rewrite(user)
            if isinstance(reply, Completion):
                out.append(reply)
            elif isinstance(reply, str):  # raw text from a model that ignored the schema
                out.append(Completion(text=reply, model="scripted"))
            else:
                out.append(Completion(text=reply.model_dump_json(), model="scripted", parsed=reply.model_dump()))
        return out


def test_build_perturbations_end_to_end_with_scripted_replies():
    def broken_rewrite(user):
        return "Sure! Here is the question:"  # not JSON: rewrite fails, substitution takes over

    generator = ScriptedGenerator(
        {
            "$75,000 invested today": GROWTH,
            "annuity due": ANNUITY_DUE,
            "annual coupon rate of 4%": BOND,
            "two years ago": not_computable("judgement"),
            "€500,000": "not json at all",
        },
        broken_rewrite,
    )
    questions = [EASY_3, EASY_11, EASY_569, EASY_0, EASY_9]
    records = build_perturbations(questions, generator, levels=(1, 3), seed=0)
    assert generator.batches[0] == 4  # no extraction request for the conceptual question
    assert [(r.question_id, r.level) for r in records] == [(q.id, lv) for q in questions for lv in (1, 3)]
    status = {(r.question_id, r.level): r.status for r in records}
    assert status[("easy_3", 1)] == "valid"
    assert status[("easy_569", 1)] == "valid"
    assert status[("easy_0", 1)] == status[("easy_0", 3)] == "not_perturbable"
    assert status[("easy_9", 1)] == status[("easy_9", 3)] == "not_verifiable"
    assert status[("easy_3", 3)] == "rejected"  # level 3 has no substitution fallback
    assert all(r.rewrite_path == "substitution" for r in records if r.valid)
    by_key = {(r.question_id, r.level): r for r in records}
    assert "generator reply does not fit FormulaExtraction" in by_key[("easy_9", 1)].reason
    counts = coverage_counts(records)
    assert set(counts) == {1, 3}
    assert sum(counts[1].values()) == 5 and counts[1]["not_perturbable"] == 1
    json.dumps([r.to_dict() for r in records])  # records are plain JSON


def test_build_perturbations_validates_levels():
    with pytest.raises(ValueError, match="each level must be one of 1, 2, 3"):
        build_perturbations([EASY_3], ScriptedGenerator({}, None), levels=(4,))


def test_coverage_counts_lists_every_status():
    records = perturb_question(EASY_0, None, levels=(1, 2)) + perturb_question(EASY_3, None, levels=(1,))
    counts = coverage_counts(records)
    assert counts == {
        1: {"valid": 0, "not_perturbable": 1, "not_verifiable": 1, "rejected": 0},
        2: {"valid": 0, "not_perturbable": 1, "not_verifiable": 0, "rejected": 0},
    }


def test_hand_built_questions_are_the_dataset_rows():
    from cfa_lib.data import DatasetError, load_dataset

    try:
        rows = load_dataset("easy")
    except DatasetError as error:
        pytest.skip(str(error))
    for question in (EASY_0, EASY_3, EASY_9, EASY_11, EASY_361, EASY_569):
        assert rows[question.index] == question


@pytest.mark.slow
def test_tiny_local_generator_never_crashes_the_pipeline(tmp_path):
    """The embedded SmolLM2 fails most extractions; every failure must end as a record with a reason."""
    from cfa_lib.models import get_client

    client = get_client("local", cache_dir=tmp_path)
    client.check()
    records = build_perturbations(
        [EASY_3, EASY_0], client, levels=(1, 3), params={"temperature": 0.0, "max_tokens": 300}
    )
    assert [(r.question_id, r.level) for r in records] == [
        ("easy_3", 1),
        ("easy_3", 3),
        ("easy_0", 1),
        ("easy_0", 3),
    ]
    assert records[2].status == records[3].status == "not_perturbable"
    for record in records[:2]:
        assert record.status in {"valid", "not_verifiable", "rejected", "not_perturbable"}
        assert record.valid or record.reason
        if record.valid and record.level == 1:  # the answer comes from the verified formula, not the model
            assert record.new_answer_value == pytest.approx(evaluate_formula(record.formula, record.new_values))


def test_formula_that_ignores_the_question_numbers_is_not_verifiable():
    constant = GROWTH.model_copy(update={"formula": "113733"})
    assert verify_extraction(EASY_3, constant).reason == "the formula uses no number written in the question"
    # the answer itself, lifted from the correct option, is not an input
    params = [*RATE_FROM_GROWTH.parameters, P("answer", 0.08, "rate", "8.0%")]
    lifted = RATE_FROM_GROWTH.model_copy(update={"parameters": params, "formula": "answer"})
    assert verify_extraction(EASY_9, lifted).reason == "span '8.0%' of parameter 'answer' is not in the question"


def test_level2_needs_two_changeable_inputs():
    params = list(RATE_FROM_GROWTH.parameters)
    params[0] = P("pv", 500_000, "other", "€500,000")  # declared a fixed convention
    extraction = RATE_FROM_GROWTH.model_copy(update={"parameters": params})
    (record,) = perturb_question(EASY_9, extraction, levels=(2,))
    assert record.status == "not_perturbable"
    assert record.reason == "level 2 needs 2 changeable parameters; changeable: fv"


def test_records_round_trip_through_dicts():
    plan = _plan(EASY_3, GROWTH, 1)
    record = apply_rewrite(plan, EASY_3, None)
    assert record.status == "valid" and record.rewrite_path == "substitution"
    again = PerturbationRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again == record
    question = again.as_question()
    assert question.id == "easy_3_L1" and question.answer == record.correct_letter
    assert question.correct_text == record.choices[record.correct_letter]


# --- property-based: arbitrary generator replies never crash the pipeline -----------------------

SPANS = ["$75,000", "7%", "quarterly", "six years", "75,000", "7", "", "17%", "$1", "0%", "$75,000 invested"]
PARAMETERS = st.builds(
    ExtractedParameter,
    name=st.sampled_from(["pv", "r", "m", "t", "x", "pv", "r", "m", "t", "_a", "exp"]),
    value=st.one_of(st.sampled_from([75_000.0, 0.07, 7.0, 4.0, 6.0, 0.0, -1.0]), st.floats(allow_nan=False, width=32)),
    kind=st.sampled_from(["rate", "count", "amount", "other"]),
    span=st.sampled_from(SPANS),
    description=st.just(""),
    derived_from=st.sampled_from(["", "", "pv * 2", "r ** -t", "1/0", "nope("]),
)
FORMULAS = st.sampled_from(
    [
        "pv * (1 + r/m) ** (m*t)",
        "pv * (1 + r) ** t",
        "pv / (r - 0.07)",
        "log(r) * pv",
        "x",
        "pv ** 1000",
        "r * 1e300 * 1e300",
        "().__class__",
        "",
        "113733",
        "max(pv, r) * 0",
    ]
)


PARAMETER_LISTS = {
    "random": st.lists(PARAMETERS, max_size=5, unique_by=lambda p: p.name),
    # the right inputs with one of them altered: reaches drawing, solving and rebuilding
    "altered": st.tuples(st.integers(0, 3), PARAMETERS).map(
        lambda t: [t[1] if i == t[0] else p for i, p in enumerate(GROWTH.parameters)]
    ),
    "right": st.just(GROWTH.parameters),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        FormulaExtraction,
        computable=st.sampled_from([True, True, True, False]),
        reason=st.just(""),
        parameters=st.sampled_from(["right", "altered", "random"]).flatmap(lambda kind: PARAMETER_LISTS[kind]),
        asked_quantity=st.just(""),
        unit=st.just(""),
        formula=st.sampled_from([True, False]).flatmap(lambda right: st.just(GROWTH.formula) if right else FORMULAS),
    ),
    st.integers(0, 3),
)
def test_arbitrary_extractions_end_in_a_record_or_a_plan(extraction, seed):
    for item in perturb_question(EASY_3, extraction, levels=(1, 2, 3), seed=seed):
        record = item.record if isinstance(item, Plan) else item
        if isinstance(item, Plan):
            assert record.new_answer_value is not None and math.isfinite(record.new_answer_value)
            assert record.correct_letter in EASY_3.choices
        else:
            assert record.status in {"not_perturbable", "not_verifiable", "rejected"} and record.reason

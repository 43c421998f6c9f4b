"""Accepting or rejecting the generator's rewrite, and the span-substitution fallback."""

from __future__ import annotations

from cfa_lib.models.types import Completion
from cfa_lib.perturbation.number_text import count_span, substitute_values
from cfa_lib.perturbation.rewrite import apply_rewrite
from cfa_lib.perturbation.types import QuestionRewrite
from tests.perturb_cases import (
    EASY_3,
    EASY_9,
    GROWTH,
    RATE_FROM_GROWTH,
    plan_for,
)


def test_generator_rewrite_with_every_new_value_is_valid():
    plan = plan_for(EASY_3, GROWTH, 2)
    text = substitute_values(EASY_3.stem, plan.old_spans, plan.new_spans).replace("closest to", "nearest to")
    record = apply_rewrite(plan, EASY_3, QuestionRewrite(question=text))
    assert record.status == "valid" and record.rewrite_path == "generator"
    assert record.question == text
    assert record.as_question().mcq_text().startswith(text)


def test_rewrite_that_keeps_an_old_value_is_rejected():
    plan = plan_for(EASY_3, GROWTH, 2)
    new_pv = plan.new_spans[plan.old_spans.index("$75,000")]
    text = EASY_3.stem.replace("$75,000", new_pv)  # forgot to change the rate
    record = apply_rewrite(plan, EASY_3, QuestionRewrite(question=text), fallback=False)
    assert record.status == "rejected"
    assert record.rewrite_path is None
    assert "still contains '7%'" in record.reason or "missing" in record.reason


def test_failed_rewrite_falls_back_to_span_substitution():
    plan = plan_for(EASY_3, GROWTH, 2)
    failed = Completion(text="", model="scripted", error="timeout", error_kind="failed")
    record = apply_rewrite(plan, EASY_3, failed, fallback=True)
    assert record.status == "valid" and record.rewrite_path == "substitution"
    for new in plan.new_spans:
        assert new in record.question
    assert "$75,000" not in record.question and count_span(record.question, "7%") == 0
    assert ("rewrite_reply", False) in [(c.name, c.passed) for c in record.trail]


def test_level3_rewrite_must_drop_the_unknown():
    plan = plan_for(EASY_9, RATE_FROM_GROWTH, 3)
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
    plan = plan_for(EASY_9, RATE_FROM_GROWTH, 3)
    leaky = f"{good[: -len(' is closest to:')]} (not {span}) is closest to: {asked}"
    record = apply_rewrite(plan, EASY_9, QuestionRewrite(question=leaky))
    assert record.status == "rejected" and f"still contains '{span}'" in record.reason

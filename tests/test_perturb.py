"""Perturbations end to end on real CFA-Easy questions, with hand-written generator replies (no model)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfa_lib.models.types import Completion
from cfa_lib.perturbation import build_perturbations, coverage_counts
from cfa_lib.perturbation.build import perturb_question
from cfa_lib.perturbation.formula import evaluate_formula
from cfa_lib.perturbation.types import ExtractedParameter, FormulaExtraction, Plan
from tests.perturb_cases import (
    ANNUITY_DUE,
    BOND,
    EASY_0,
    EASY_3,
    EASY_9,
    EASY_11,
    EASY_361,
    EASY_569,
    GROWTH,
    not_computable,
)


def test_conceptual_question_is_not_perturbable():
    records = perturb_question(EASY_0, None, levels=(1, 2, 3))
    assert [r.status for r in records] == ["not_perturbable"] * 3
    assert records[0].reason == "correct option C ('expected inflation.') carries no number"


def test_generator_saying_not_computable_is_not_perturbable():
    reply = not_computable("needs the yield on existing debt, a judgement")
    (record,) = perturb_question(EASY_361, reply)
    assert record.status == "not_perturbable"
    assert "needs the yield on existing debt" in record.reason


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

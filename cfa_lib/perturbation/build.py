"""One question, one level, end to end: verify the description, plan new values, rewrite the text.

The two model calls of a perturbation (the description and the rewrite) are made here, in batches
through the engine; every step that decides a number is code in the sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cfa_lib import prompts
from cfa_lib.answers import parse_reply
from cfa_lib.data import Question
from cfa_lib.models import Ask, Completion, Request, Steps, complete_keyed, run_steps
from cfa_lib.params import PERTURBATION_LEVELS as LEVELS
from cfa_lib.perturbation.formula import FormulaError
from cfa_lib.perturbation.plan import plan_perturbation
from cfa_lib.perturbation.records import finish
from cfa_lib.perturbation.rewrite import apply_rewrite
from cfa_lib.perturbation.separation import separates
from cfa_lib.perturbation.types import (
    FormulaExtraction,
    PerturbationRecord,
    Plan,
    QuestionRewrite,
)
from cfa_lib.perturbation.verify import option_numbers, verify_extraction


def extraction_messages(question: Question) -> list[dict[str, str]]:
    user = prompts.PERTURB_EXTRACTION_USER.format(
        mcq=question.mcq_text(), answer=question.answer, correct_text=question.correct_text
    )
    return prompts.chat(prompts.PERTURB_EXTRACTION_SYSTEM, user)


def rewrite_messages(plan: Plan) -> list[dict[str, str]]:
    return prompts.chat(prompts.PERTURB_REWRITE_SYSTEM, plan.prompt)


def _base_record(question: Question, level: int, extraction: FormulaExtraction | None) -> PerturbationRecord:
    record = PerturbationRecord(question_id=question.id, level=level, status="not_verifiable", source="generator")
    if extraction is not None:
        record.parameters = [p.model_dump() for p in extraction.parameters]
        record.formula = extraction.formula
        record.asked_quantity = extraction.asked_quantity
        record.unit = extraction.unit
        record.original_values = {p.name: p.value for p in extraction.parameters}
    return record


def perturb_question(
    question: Question,
    extraction: FormulaExtraction | Completion | None,
    levels: Sequence[int] = (1,),
    seed: int = 0,
    rel_tol: float = 0.005,
) -> list[PerturbationRecord | Plan]:
    """Everything before the rewrite, for one question: a finished record or a plan per level."""
    parsed, problem = parse_reply(extraction, FormulaExtraction)
    results: list[PerturbationRecord | Plan] = []
    options = option_numbers(question)
    for level in levels:
        record = _base_record(question, level, parsed)
        if options.problem:
            results.append(finish(record, "not_perturbable", options.problem, "option_numbers"))
            continue
        if parsed is None:
            results.append(finish(record, "not_verifiable", problem, "extraction_reply"))
            continue
        try:  # arithmetic on model-supplied values must end in a record, never in a crash
            verification = verify_extraction(question, parsed, rel_tol)
            if not verification.ok:
                record.trail.extend(verification.trail)
                results.append(finish(record, verification.status, verification.reason))  # type: ignore[arg-type]
                continue
            results.append(plan_perturbation(question, verification, level, seed, record))
        except (FormulaError, ArithmeticError, ValueError) as error:
            results.append(finish(record, "not_verifiable", f"{type(error).__name__}: {error}", "arithmetic"))
    return results


def perturbation_steps(questions: Sequence[Question], generator: str | None, levels: Sequence[int] = (1,),
                       seed: int = 0, rel_tol: float = 0.005, substitution_fallback: bool = True,
                       params: Mapping[str, Any] | None = None) -> Steps[list[PerturbationRecord]]:
    """Perturb every question at every level: one record per (question, level), in that order.

    Two declared steps of the `generator` model (`cfa_lib.models.steps`; None: the run's subject): formula
    extraction for questions whose options carry numbers, then question rewrites for the settled plans. A failed
    or invalid reply becomes a `not_verifiable` or `rejected` record with the reason; nothing here raises on model
    output.
    """
    levels = tuple(levels)
    bad = [level for level in levels if level not in LEVELS]
    if bad or not levels:
        raise ValueError(f"levels={list(levels)!r}: each level must be one of 1, 2, 3")
    request_params = dict(params or {"temperature": 0.0})
    descriptions = yield Ask({q.id: Request(extraction_messages(q), dict(request_params), FormulaExtraction)
                              for q in questions if not option_numbers(q).problem},
                             "Perturbation formulas", generator, counted_as="generator")
    staged = {(question.id, item.record.level if isinstance(item, Plan) else item.level): (question, item)
              for question in questions
              for item in perturb_question(question, descriptions.get(question.id), levels, seed, rel_tol)}
    rewrites = yield Ask({key: Request(rewrite_messages(item), dict(request_params), QuestionRewrite)
                          for key, (_, item) in staged.items() if isinstance(item, Plan)},
                         "Perturbation rewrites", generator, counted_as="generator")
    records = []
    for key, (question, item) in staged.items():
        record = apply_rewrite(item, question, rewrites[key], substitution_fallback) if isinstance(item, Plan) else item
        record.separating = separates(question, record)
        records.append(record)
    return records


def build_perturbations(questions: Sequence[Question], generator_client: Any, levels: Sequence[int] = (1,),
                        seed: int = 0, max_concurrency: int | None = None, **options: Any) -> list[PerturbationRecord]:
    """`perturbation_steps` sent to `generator_client` directly, outside a run (the command line, tests)."""
    return run_steps(perturbation_steps(questions, None, levels, seed, **options),
                     lambda ask: complete_keyed(generator_client, ask.requests, max_concurrency=max_concurrency,
                                                desc=ask.desc))

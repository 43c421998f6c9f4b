"""Perturbations driven by hand-written templates: the generator path without any model call.

A verified template stands in for the generator's formula extraction, and span substitution stands in
for its rewrite, so every number and every word of a perturbed question comes from code:

* value templates, levels 1/2: `plan.plan_perturbation` draws the inputs and rebuilds the choices;
  the new values are substituted span by span (`number_text.substitute_values`);
* value templates, level 3: the template's own edits state the original answer and ask for its unknown,
  solved by the existing level-3 planning (`values.solve_for`, choices in the unknown's style);
* decision templates, levels 1/2: new inputs by the same draw rules, the option texts kept, the key
  recomputed by the decision rule; `flipped` says whether it differs from the original key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from cfa_lib.data import Question
from cfa_lib.params import PERTURBATION_LEVELS as LEVELS
from cfa_lib.perturbation.domain import never_inside
from cfa_lib.perturbation.formula import FormulaError
from cfa_lib.perturbation.level3 import plan_level3
from cfa_lib.perturbation.number_text import count_span, substitute_values
from cfa_lib.perturbation.plan import (
    MAX_DRAWS,
    _changed_spans,
    _rng,
    changeable_inputs,
    plan_perturbation,
    plan_tuple_perturbation,
    too_few_inputs,
)
from cfa_lib.perturbation.records import finish
from cfa_lib.perturbation.rederive import rederive
from cfa_lib.perturbation.rewrite import check_rewrite
from cfa_lib.perturbation.separation import memory_finds_key, separates
from cfa_lib.perturbation.template_check import REL_TOL, TemplateCheck
from cfa_lib.perturbation.template_rules import decide
from cfa_lib.perturbation.templates import Template, verify_template
from cfa_lib.perturbation.types import Check, PerturbationRecord, Plan
from cfa_lib.perturbation.values import draw_number, draw_within

OUTSIDE = "outside the validity domain: "  # a decision draw that breaks one of the template's conditions


def template_perturbations(
    questions: Sequence[Question],
    templates: Mapping[str, Template],
    levels: Sequence[int] = (1, 2, 3),
    seed: int = 0,
    left_out: Mapping[str, str] | None = None,
    checks: Mapping[str, TemplateCheck] | None = None,
) -> list[PerturbationRecord]:
    """One record per (question, level), in that order, like `build_perturbations`, fully offline.

    A question without a template is `not_perturbable`; one whose template fails `verify_template` is
    `not_verifiable` with the failed rule. Nothing here raises on a template's arithmetic. `checks`: the
    templates' `verify_template` results when the caller has them (several seeds of one dataset).
    """
    levels = tuple(levels)
    bad = [level for level in levels if level not in LEVELS]
    if bad or not levels:
        raise ValueError(f"levels={list(levels)!r}: each level must be one of 1, 2, 3")
    records: list[PerturbationRecord] = []
    for question in questions:
        template = templates.get(question.id)
        check = None if template is None else (checks or {}).get(question.id) or verify_template(question, template)
        for level in levels:
            record = _base_record(question, level, template)
            try:
                if template is None and question.id in (left_out or {}):  # reviewed: the census's reason
                    records.append(finish(record, "not_perturbable", left_out[question.id], "template"))  # type: ignore[index]
                    continue
                record = _perturb(question, template, check, level, seed, record)
                record.separating = separates(question, record)
                records.append(record)
            except (FormulaError, ArithmeticError, ValueError) as error:
                records.append(finish(record, "not_verifiable", f"{type(error).__name__}: {error}", "arithmetic"))
    return records


def _base_record(question: Question, level: int, template: Template | None) -> PerturbationRecord:
    record = PerturbationRecord(question_id=question.id, level=level, status="not_verifiable", source="template")
    if template is not None:
        record.parameters = [p.as_extracted().model_dump() for p in template.parameters]
        record.formula = template.formula or _tuple_formulas(template) or _decision_formulas(template)
        record.asked_quantity = template.asked_quantity
        record.unit = template.unit
        record.original_values = {p.name: p.value for p in template.parameters}
    return record


def _tuple_formulas(template: Template) -> str:
    return json.dumps(template.formulas, ensure_ascii=False) if template.formulas else ""


def _decision_formulas(template: Template) -> str:
    decision = template.decision
    if decision is None or not decision.formulas:
        return ""
    return f"{decision.type}({json.dumps(decision.formulas, ensure_ascii=False)})"


def _perturb(
    question: Question,
    template: Template | None,
    check: TemplateCheck | None,
    level: int,
    seed: int,
    record: PerturbationRecord,
) -> PerturbationRecord:
    if template is None or check is None:
        return finish(record, "not_perturbable", "no template for this question", "template")
    if not check.ok:
        return finish(record, "not_verifiable", f"template fails {check.check}: {check.reason}", "template_verified")
    record.trail.append(Check("template_verified", True, template.note))
    if template.kind == "decision":
        if level == 3:
            return finish(record, "not_perturbable", "level 3 is defined for value templates only", "level3")
        return _perturb_decision(question, template, check, level, seed, record)
    if template.formulas is not None:
        return _perturb_tuple(question, template, check, level, seed, record)
    verification = check.verification
    assert verification is not None
    if level in (1, 2):
        item = plan_perturbation(question, verification, level, seed, record, template.answer_range, check.domain,
                                 check.distractor_formulas)
        if not isinstance(item, Plan):
            return item
        assert item.record.new_answer_value is not None
        return _substitute(question, template, check, item)
    return _perturb_unknown(question, template, check, seed, record)


def _perturb_tuple(
    question: Question, template: Template, check: TemplateCheck, level: int, seed: int, record: PerturbationRecord
) -> PerturbationRecord:
    """Levels 1/2 of a template whose options carry several numbers; level 3 is not defined for them."""
    if level == 3:
        reason = "level 3 is defined for templates whose options carry one number"
        return finish(record, "not_perturbable", reason, "level3")
    item = plan_tuple_perturbation(question, check, level, seed, record)
    if not isinstance(item, Plan):
        return item
    return _substitute(question, template, check, item)


def _perturb_unknown(
    question: Question, template: Template, check: TemplateCheck, seed: int, record: PerturbationRecord
) -> PerturbationRecord:
    """Level 3: new givens, the new answer stated by the template's edits, the unknown asked (`level3`)."""
    if template.level3 is None:
        return finish(record, "not_perturbable", "the template has no level-3 edits", "level3")
    try:
        planned = plan_level3(question, template, check, seed, record)
    except ValueError as error:
        return finish(record, "rejected", f"level-3 edits: {error}", "level3_edits")
    if isinstance(planned, PerturbationRecord):
        return planned
    return _accept(question, template, check, *planned)


def _substitute(question: Question, template: Template, check: TemplateCheck, plan: Plan) -> PerturbationRecord:
    """Levels 1/2: the planned spans replaced in the stem (every copy of each), then `_accept`."""
    try:
        text = substitute_values(question.stem, plan.old_spans, plan.new_spans, every=True)
    except ValueError as error:
        return finish(plan.record, "rejected", f"substitution impossible: {error}", "substitution")
    return _accept(question, template, check, plan, text)


def _accept(question: Question, template: Template, check: TemplateCheck, plan: Plan, text: str
            ) -> PerturbationRecord:
    """Span checks of the rewrite step, then: the text changed, and the item re-derived from its own text
    (`rederive`: every number where the template says, exactly one option within tolerance of the key)."""
    record = plan.record
    rejected = _substitution_rejected(question, plan, text)
    if rejected is not None:
        return rejected
    record.question = text
    record.rewrite_path = "substitution"
    return _rederived(question, template, check, record)


def _rederived(question: Question, template: Template, check: TemplateCheck, record: PerturbationRecord
               ) -> PerturbationRecord:
    """The record valid only if the second path (`rederive`) agrees and a memorized answer is graded wrong
    against its options and, at level 3, its nearest option is not the key (`memory_finds_key`); rejected with its
    reason otherwise."""
    reason, detail = rederive(question, template, check, record)
    if reason:
        return finish(record, "rejected", reason, "rederived")
    if memory_finds_key(question, record):
        return finish(record, "rejected", "the original's key is graded correct against the new options", "key_moved")
    record.trail.append(Check("rederived", True, detail))
    return finish(record, "valid", "")


def _substitution_rejected(question: Question, plan: Plan, text: str) -> PerturbationRecord | None:
    """The rewrite step's span checks on the substituted text, then: the text must have changed."""
    record = plan.record
    checks = check_rewrite(plan, text)
    record.trail.extend(Check(f"substitution_{c.name}", c.passed, c.detail) for c in checks)
    failed = [c for c in checks if not c.passed]
    if failed:
        return finish(record, "rejected", f"substituted text failed {failed[0].name}: {failed[0].detail}")
    problem = _unchanged(question, record, text)
    return finish(record, "rejected", problem, "changed") if problem else None


def _unchanged(question: Question, record: PerturbationRecord, text: str) -> str:
    """Why a perturbation changed nothing, or "": an unchanged question would test memory of itself."""
    if not record.changed:
        return "no input changed"
    if text.strip() == question.stem.strip():
        return "the perturbed question text equals the original"
    return ""


# --- decision templates -----------------------------------------------------------------------


def _perturb_decision(
    question: Question, template: Template, check: TemplateCheck, level: int, seed: int, record: PerturbationRecord
) -> PerturbationRecord:
    """Seeded draws of `level` inputs until one keeps a clear margin; the key follows the rule. Draws are
    balanced: at odd seed + level the first draw that flips the key is kept, at even ones the first that keeps
    it; the first valid draw when no draw lands on that side. A parameter with a `draw` interval is drawn in it."""
    verification = check.verification
    assert verification is not None
    infos = verification.parameters
    candidates = changeable_inputs(verification)
    too_few = too_few_inputs(record, level, candidates)
    if too_few is not None:
        return too_few
    rng = _rng(seed, question.id, level)
    intervals = {p.name: p.draw for p in template.parameters if p.draw is not None}
    last, inside, kept = "", 0, None
    flip = (seed + level) % 2 == 1  # half of the items are drawn to flip the key, half to keep it
    for _ in range(MAX_DRAWS):
        chosen = sorted(rng.choice(len(candidates), size=level, replace=False).tolist())
        new_numbers = {name: draw_within(infos[name], intervals[name], rng) if name in intervals
                       else draw_number(infos[name], rng) for name in (candidates[i] for i in chosen)}
        if any(number is None for number in new_numbers.values()):
            continue
        attempt = perturb_decision(question, template, check, new_numbers, level)  # type: ignore[arg-type]
        if attempt.valid and attempt.flipped == flip:
            return attempt
        if attempt.valid:
            kept = kept or attempt  # the first valid draw, if none lands on the wanted side
            continue
        last = attempt.reason
        inside += attempt.trail[-1].name != "domain"
    if kept is not None:
        return kept
    if last and not inside:
        return finish(record, "rejected", never_inside(MAX_DRAWS, last.removeprefix(OUTSIDE)), "domain")
    return finish(record, "rejected", f"no draw in {MAX_DRAWS} gave a valid decision question; last: {last}", "draws")


def perturb_decision(
    question: Question,
    template: Template,
    check: TemplateCheck,
    new_numbers: Mapping[str, float],
    level: int | None = None,
) -> PerturbationRecord:
    """One decision perturbation with the given new numbers (as written: 98.0 for "101.00").

    The option texts stay; the correct letter is what the decision rule picks for the new inputs, with
    the same 0.5 % margin the original must keep. Deterministic: tests build the crossing draw by hand.
    """
    verification = check.verification
    assert check.ok and verification is not None
    record = _base_record(question, level or len(new_numbers), template)
    record.trail.append(Check("template_verified", True, template.note))
    record.original_answer_value = check.original_value
    infos = verification.parameters
    names = list(new_numbers)
    values = verification.values()
    for name, number in new_numbers.items():
        values[name] = number * infos[name].scale
    values = verification.with_derived(values)
    key, value, margin = decide(template, check, values)
    record.changed, record.new_values, record.new_answer_value = names, values, value
    broken = check.domain.broken(values)
    if broken:
        return finish(record, "rejected", OUTSIDE + broken, "domain")
    if key is None:
        return finish(record, "rejected", f"the deciding value {value:.6g} is in no option's interval", "decision")
    if margin < REL_TOL:
        return finish(
            record,
            "rejected",
            f"the deciding value {value:.6g} is within {REL_TOL:.1%} of the boundary",
            "decision_margin",
        )
    old_spans, new_spans = _changed_spans(verification, names, new_numbers, values)
    if len(set(new_spans)) != len(new_spans) or any(count_span(question.stem, s) for s in new_spans):
        return finish(record, "rejected", "a new value is already written in the question", "new_values_unique")
    try:
        text = substitute_values(question.stem, old_spans, new_spans, every=True)
    except ValueError as error:
        return finish(record, "rejected", f"substitution impossible: {error}", "substitution")
    kept = [
        info.spec.span
        for info in infos.values()
        if info.text is not None and info.occurrences and info.spec.span not in old_spans
    ]
    rejected = _substitution_rejected(question, Plan(record, old_spans, new_spans, kept, ""), text)
    if rejected is not None:
        return rejected
    record.trail.append(Check("decision", True, f"{value:.6g} picks {key} (margin {margin:.1%})"))
    record.question = text
    record.choices = dict(question.choices)
    record.correct_letter = key
    record.flipped = key != question.answer
    record.rewrite_path = "substitution"
    return _rederived(question, template, check, record)


__all__ = ["perturb_decision", "template_perturbations"]

"""The rules of a template that go beyond its values: the decision rule (threshold, argmax, argmin) and its
margin, every input moving the answer, and the level-3 edits with their solve round trip."""

from __future__ import annotations

import math
from collections.abc import Mapping

from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.formula import FormulaError, parse_formula
from cfa_lib.perturbation.number_text import count_span
from cfa_lib.perturbation.schema import Template
from cfa_lib.perturbation.template_check import MOVE_FACTORS, REL_TOL, ROUND_TRIP_TOL, RuleFailed, TemplateCheck
from cfa_lib.perturbation.values import solve_for


def decide(template: Template, check: TemplateCheck, values: Mapping[str, float]) -> tuple[str | None, float, float]:
    """The option the decision rule picks for `values`, the deciding value, and its relative margin.

    Threshold: the letter whose [low, high) holds the formula's value; margin = distance to the nearest
    finite bound / max(|bound|, |value|). Argmax/argmin: the best option's formula; margin = gap to the
    runner-up / max(|best|, |runner-up|). None when no interval holds the value.
    """
    decision = template.decision
    verification = check.verification
    assert decision is not None and verification is not None
    full = verification.with_derived(values)
    if decision.type == "threshold":
        assert verification.formula is not None and decision.options is not None
        value = verification.formula.evaluate(full)
        chosen = [
            letter
            for letter, bounds in decision.options.items()
            if bounds is not None
            and (bounds[0] is None or value >= bounds[0])
            and (bounds[1] is None or value < bounds[1])
        ]
        if len(chosen) != 1:
            return None, value, 0.0
        bounds = decision.options[chosen[0]]
        assert bounds is not None
        finite = [b for b in bounds if b is not None]
        margin = min((abs(value - b) / max(abs(b), abs(value), 1e-300) for b in finite), default=math.inf)
        return chosen[0], value, margin
    scores = {letter: formula.evaluate(full) for letter, formula in check.option_formulas.items()}
    ranked = sorted(scores, key=scores.__getitem__, reverse=decision.type == "argmax")
    best, runner = scores[ranked[0]], scores[ranked[1]]
    margin = abs(best - runner) / max(abs(best), abs(runner), 1e-300)
    return ranked[0], best, margin


def check_decision(question: Question, template: Template, result: TemplateCheck) -> None:
    decision = template.decision
    assert decision is not None and result.verification is not None
    letters = set(question.choices)
    mapped = set(decision.options or {}) | set(decision.formulas or {})
    foreign = sorted(mapped - letters)
    if foreign:
        raise RuleFailed("decision_rule",
                         f"decision names option {foreign[0]!r}, not among {', '.join(sorted(letters))}")
    if decision.type == "threshold":
        assert decision.options is not None
        missing = sorted(letters - set(decision.options))
        if missing:
            reason = f"threshold decision does not map option {missing[0]} (null if never chosen)"
            raise RuleFailed("decision_rule", reason)
        for letter, bounds in decision.options.items():
            if bounds is not None and None not in bounds and bounds[0] >= bounds[1]:  # type: ignore[operator]
                raise RuleFailed("decision_rule", f"option {letter}: interval [{bounds[0]}, {bounds[1]}) is empty")
    else:
        assert decision.formulas is not None
        if len(decision.formulas) < 2:
            raise RuleFailed("decision_rule", f"an {decision.type} decision compares at least two options")
        names = list(result.verification.parameters)
        result.option_formulas = {letter: parse_formula(text, names) for letter, text in decision.formulas.items()}
    key, value, margin = decide(template, result, result.verification.values())
    if key is None:
        raise RuleFailed("decision_rule", f"the formula gives {value:.6g}, which no option's interval holds")
    if key != question.answer:
        raise RuleFailed("reproduces_key",
                         f"the decision rule picks {key} ({value:.6g}) but the key is {question.answer}")
    if margin < REL_TOL:
        raise RuleFailed("decision_margin", f"the deciding value {value:.6g} is within {REL_TOL:.1%} of the boundary")
    result.original_key = key
    result.original_value = value


def _outcome(template: Template, check: TemplateCheck, values: Mapping[str, float]) -> tuple[float, ...]:
    """What must move when an input moves: the answer, the threshold value, or every option's score."""
    verification = check.verification
    assert verification is not None
    if template.formulas is not None:
        full = verification.with_derived(values)
        return tuple(formula.evaluate(full) for formula in check.position_formulas)
    if template.kind == "value" or (template.decision is not None and template.decision.type == "threshold"):
        return (verification.answer(values),)
    full = verification.with_derived(values)
    return tuple(formula.evaluate(full) for formula in check.option_formulas.values())


def check_moves(template: Template, check: TemplateCheck) -> None:
    """Rule 3: every stated input (derived givens follow the others) moves the answer when it moves by +10 %
    or, failing that, by -10 %: an input that binds in one direction only (the NRV in min(cost, NRV) just
    above cost) is a real input, since draws move inputs both ways; one that moves it neither way is not."""
    verification = check.verification
    assert verification is not None
    values = verification.values()
    before = _outcome(template, check, values)
    for name in verification.used:
        if name in verification.derived:
            continue
        if not any(_moves(template, check, values, before, name, factor) for factor in MOVE_FACTORS):
            raise RuleFailed("answer_moves", f"the answer does not move when {name!r} moves by +10% or -10%")


def _moves(template: Template, check: TemplateCheck, values: Mapping[str, float], before: tuple[float, ...],
           name: str, factor: float) -> bool:
    moved = dict(values)
    moved[name] = values[name] * factor if values[name] else (factor - 1) / 10  # 0 moves to +-0.01
    after = _outcome(template, check, moved)
    return any(relative_difference(a, b) >= 1e-9 for a, b in zip(after, before, strict=True))


def apply_edits(stem: str, template: Template, answer_text: str) -> str:
    """The level-3 stem: each edit's `old` must occur exactly once (in the text edited so far)."""
    assert template.level3 is not None
    text = stem
    for number, edit in enumerate(template.level3.edits, start=1):
        found = text.count(edit.old)
        if found != 1:
            raise ValueError(f"edit {number}: {edit.old!r} occurs {found} times in the question, not once")
        text = text.replace(edit.old, edit.new.replace("{answer}", answer_text))
    return text


def check_level3(question: Question, template: Template, check: TemplateCheck) -> None:
    """The edits apply, state the answer, drop the unknown's span, and the solve round-trips."""
    level3 = template.level3
    verification = check.verification
    assert level3 is not None and verification is not None and verification.formula is not None
    infos = verification.parameters
    unknown = level3.unknown
    if unknown not in infos:
        raise RuleFailed("level3_unknown", f"level-3 unknown {unknown!r} is not a parameter")
    info = infos[unknown]
    if unknown in verification.derived or unknown not in verification.used or info.text is None:
        raise RuleFailed("level3_unknown", f"level-3 unknown {unknown!r} must be a stated, used, numeric input")
    if not any("{answer}" in edit.new for edit in level3.edits):
        raise RuleFailed("level3_edits", "no level-3 edit states the answer ({answer})")
    answer_text = verification.options[question.answer].core
    try:
        edited = apply_edits(question.stem, template, answer_text)
    except ValueError as error:
        raise RuleFailed("level3_edits", str(error)) from None
    if count_span(edited, info.spec.span) >= info.occurrences:
        raise RuleFailed("level3_edits",
                         f"the level-3 edits leave the unknown's span {info.spec.span!r} in the question")
    values = verification.values()
    target = verification.original_answer_value
    assert target is not None
    upper = 1.0 if info.spec.kind == "rate" and info.scale != 1.0 else None
    try:
        solved = solve_for(verification.answer, values, unknown, target, upper)
        stated_answer = verification.options[question.answer].number * verification.answer_scale
        stated = solve_for(verification.answer, values, unknown, stated_answer, upper)
    except FormulaError as error:
        raise RuleFailed("level3_round_trip", f"cannot solve for {unknown!r}: {error}") from None
    if relative_difference(solved, values[unknown]) > ROUND_TRIP_TOL:
        raise RuleFailed(
            "level3_round_trip", f"solving for {unknown!r} gives {solved:.10g}, not the original {values[unknown]:g}"
        )
    if relative_difference(stated, values[unknown]) > REL_TOL:
        reason = f"the rounded answer {answer_text} implies {unknown} = {stated:.6g}, not {values[unknown]:g}"
        raise RuleFailed("level3_round_trip", reason)

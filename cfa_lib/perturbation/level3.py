"""Level 3 of a template that changes: new givens, the new answer stated, an input asked for.

Stating the original answer and asking for an input of the original question would be answered from memory of
the original: the asked input is written in it. Here the asked unknown is drawn to a new value first (with one
other given, when one can move, in the first half of the draws; alone in the second), the answer is computed
from the new values and stated in the key's style, and the key is the unknown solved from that stated answer.
A draw is kept only when the stated answer, rounded as the original key is written, still implies the drawn
unknown within 0.5 %, the key written as an option equals no number of the original stem or options, neither
the original's key nor the unknown's original value lies in the new key's acceptance window, and the option
nearest the unknown's original value is not the key (`separation.memory_finds_key`). An
unknown the validity domain holds in an interval ("s > 505", "s < 515") is drawn inside it. The options are
values of the asked unknown, so each lies in its domain (`asked_domain`): its kind's range, the template's
conditions, and an answer the stem could state (the formula evaluates, same sign, within MAX_ANSWER_FACTOR of the
stated one, inside `answer_range`): no correlation of 1.13, no average price below the down move's.
"""

from __future__ import annotations

import math

import numpy as np

from cfa_lib.answers import numeric_key
from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.accounting import ANSWER_MARK
from cfa_lib.perturbation.choices import Inside, rebuild_choices
from cfa_lib.perturbation.formula import FormulaError
from cfa_lib.perturbation.number_text import NumberText, count_span, find_numbers, substitute_values
from cfa_lib.perturbation.plan import (
    MAX_ANSWER_FACTOR,
    MAX_DRAWS,
    STATED_ANSWER_TOL,
    _changed_spans,
    _rng,
    changeable_inputs,
)
from cfa_lib.perturbation.records import finish
from cfa_lib.perturbation.separation import answer_in_original, memory_finds_key
from cfa_lib.perturbation.template_check import REL_TOL, TemplateCheck
from cfa_lib.perturbation.template_rules import apply_edits
from cfa_lib.perturbation.templates import Template
from cfa_lib.perturbation.types import Check, ParameterInfo, PerturbationRecord, Plan, Verification
from cfa_lib.perturbation.values import changeable, draw_number, possible, solve_for

MIN_MOVE = 0.006  # a first filter on the asked unknown; `memory_finds_key` decides


def stated_text(key: NumberText, number: float) -> str:
    """`number` as the original key writes its core ("$113,733", "8.0%"), without the option's other words; with
    up to two more decimals when the key's would round it by more than 0.5 % ("19.3" where the key is "12")."""
    for extra in range(3):
        written = key.write(number, key.decimals + extra, keep_lead=False)
        text = written[: len(written) - len(key.suffix)] + key.unit
        if relative_difference(find_numbers(text)[0].number, number) <= REL_TOL:
            break
    return text


def plan_level3(question: Question, template: Template, check: TemplateCheck, seed: int,
                record: PerturbationRecord) -> tuple[Plan, str] | PerturbationRecord:
    """The plan and the level-3 stem, or the record finished with why no draw gives a level-3 item."""
    verification = check.verification
    assert verification is not None and template.level3 is not None
    unknown = template.level3.unknown
    infos = verification.parameters
    info = infos[unknown]
    if not changeable(info, infos):
        reason = f"level-3 unknown {unknown!r} ({info.spec.span!r}) cannot be asked for: shared, derived or 'other'"
        return finish(record, "not_perturbable", reason, "changeable_parameters")
    record.trail.extend(verification.trail)
    record.original_answer_value = verification.original_answer_value
    rng = _rng(seed, question.id, 3)
    others = [name for name in changeable_inputs(verification) if name != unknown]
    edited = apply_edits(question.stem, template, ANSWER_MARK)
    last = "no draw"
    for draw in range(MAX_DRAWS):  # the second half draws the unknown alone: another given may have no room
        moving = others if draw < MAX_DRAWS // 2 else []
        attempt = _attempt(question, verification, check, unknown, moving, edited, rng, record,
                           template.answer_range)
        if isinstance(attempt, tuple):
            return attempt
        last = attempt
    return finish(record, "rejected", f"no draw in {MAX_DRAWS} gave a level-3 item whose asked value is new; "
                  f"last: {last}", "level3_draw")


def _attempt(question: Question, verification: Verification, check: TemplateCheck, unknown: str,
             others: list[str], edited: str, rng: np.random.Generator, record: PerturbationRecord,
             answer_range: tuple[float | None, float | None] | None = None) -> tuple[Plan, str] | str:
    """One draw: the plan and its stem, or why the draw is not kept."""
    infos = verification.parameters
    names = [unknown] + ([others[int(rng.integers(len(others)))]] if others else [])
    numbers = {name: draw_number(infos[name], rng) for name in names}
    numbers[unknown] = _inside(infos[unknown], numbers[unknown], check.domain.bounds(unknown), rng)
    if any(number is None for number in numbers.values()):
        return "an input cannot move"
    values = verification.values()
    for name, number in numbers.items():
        values[name] = number * infos[name].scale  # type: ignore[operator]
    try:
        values = verification.with_derived(values)
        answer = verification.answer(values)
    except (FormulaError, ArithmeticError):
        return "the formula fails at the drawn values"
    broken = check.domain.broken(values)
    if broken:
        return f"outside the validity domain: {broken}"
    original = verification.original_answer_value
    assert original is not None
    if not (answer * original > 0 and 1 / MAX_ANSWER_FACTOR <= answer / original <= MAX_ANSWER_FACTOR):
        return f"the answer {answer:.6g} is too far from the original {original:.6g}"
    key = verification.options[question.answer]
    stated = stated_text(key, answer / verification.answer_scale)
    stated_value = find_numbers(stated)[0].number * verification.answer_scale
    if stated == key.core or relative_difference(stated_value, answer) > REL_TOL:
        return f"the stated answer {stated} is the original's or too rounded"
    solved = _solved(verification, values, unknown, stated_value, infos[unknown])
    if solved is None or relative_difference(solved, values[unknown]) > STATED_ANSWER_TOL:
        return f"the stated answer {stated} does not imply the drawn {unknown}"
    values = verification.with_derived({**values, unknown: solved})  # a stated given that follows the unknown
    if broken := check.domain.broken(values):  # the unknown the stated answer implies, not only the one drawn
        return f"outside the validity domain: {broken}"
    old_spans, new_spans = _changed_spans(verification, names[1:], numbers, values)  # type: ignore[arg-type]
    pairs = [(old, new) for old, new in zip(old_spans, new_spans, strict=True) if count_span(edited, old)]
    if any(count_span(question.stem, new) for _, new in pairs) or len({new for _, new in pairs}) != len(pairs):
        return "a new value is already written in the question"
    try:
        text = substitute_values(edited, [o for o, _ in pairs], [n for _, n in pairs], every=True)
    except ValueError as error:
        return f"substitution impossible: {error}"
    text = text.replace(ANSWER_MARK, stated)
    record.changed, record.new_values, record.new_answer_value = names, values, solved
    info = infos[unknown]
    assert info.text is not None
    inside = asked_domain(verification, check, values, unknown, answer, answer_range)
    try:
        record.choices, record.correct_letter = rebuild_choices(question, verification.options, solved / info.scale,
                                                                rng, info.text, inside=inside,
                                                                remembered=info.text.number)
    except ValueError as error:
        return str(error)
    if numeric_key(record.choices, record.correct_letter) is None:
        return f"rebuilt choices cannot be graded by number: {record.choices}"
    if answer_in_original(question, record):
        return f"the asked value {record.choices[record.correct_letter or '']!r} is written in the original"
    if memory_finds_key(question, record):
        return f"a memorized answer finds the key {record.choices[record.correct_letter or '']!r}"
    flipped = [t for t in record.choices.values() if (found := find_numbers(t)) and found[0].number * solved <= 0]
    if flipped:
        return f"rebuilt option {flipped[0]!r} has the other sign of the asked {unknown}"
    record.trail.append(Check("level3_draw", True, f"{', '.join(names)} drawn; {stated} stated; "
                                                  f"{unknown} = {solved:.6g}"))
    old = [o for o, _ in pairs]
    kept = [other.spec.span for other in infos.values()
            if other.text is not None and other.spec.span not in old and count_span(edited, other.spec.span)]
    plan = Plan(record, [info.spec.span, *old], [stated] + [n for _, n in pairs], kept, "",
                level3_answer_text=stated)
    return plan, text


def asked_domain(verification: Verification, check: TemplateCheck, values: dict[str, float], unknown: str,
                 stated: float, answer_range: tuple[float | None, float | None] | None = None) -> Inside:
    """Whether a number, written as the asked unknown's span writes it, is a possible value of it with the item's
    other givens: its kind allows it (`values.possible`), the template's conditions hold, and the answer it would
    give is one the stem could state: the formula evaluates, keeps the stated answer's sign, stays within
    MAX_ANSWER_FACTOR of it and inside `answer_range`."""
    info = verification.parameters[unknown]
    low, high = answer_range or (None, None)

    def inside(number: float) -> bool:
        if not possible(info, number):
            return False
        try:
            trial = verification.with_derived({**values, unknown: number * info.scale})
            answer = verification.answer(trial)
        except (FormulaError, ArithmeticError):
            return False
        if check.domain.broken(trial):
            return False
        return (answer * stated > 0 and 1 / MAX_ANSWER_FACTOR <= answer / stated <= MAX_ANSWER_FACTOR
                and (low is None or answer >= low) and (high is None or answer <= high))

    return inside


def _inside(info: ParameterInfo, number: float | None, bounds: tuple[float, float], rng: np.random.Generator
            ) -> float | None:
    """The unknown's draw, or, when the domain bounds it alone to an interval the draw left ("s > 505", "s < 515":
    the strike stays at the money), a number inside it at the span's precision, MIN_MOVE from the original at least."""
    assert info.text is not None
    low, high = (bound / info.scale for bound in bounds)
    if number is None or low < number < high or not (math.isfinite(low) and math.isfinite(high)):
        return number
    original = info.text.number
    inside = round(float(rng.uniform(low, high)), info.text.decimals)
    return inside if low < inside < high and abs(inside - original) >= MIN_MOVE * abs(original) else None


def _solved(verification: Verification, values: dict[str, float], unknown: str, target: float,
            info: ParameterInfo) -> float | None:
    upper = 1.0 if info.spec.kind == "rate" and info.scale != 1.0 else None
    try:
        return solve_for(verification.answer, values, unknown, target, upper)
    except FormulaError:
        return None

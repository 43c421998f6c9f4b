"""Hand-written counterfactual templates: one dataset question's computation, described and checked.

A template (see datasets/templates/README.md) is the offline counterpart of the generator's formula
extraction: a person wrote the inputs, their spans and the textbook formula, and code checks every rule
of the contract before a template may drive a perturbation. Its shape and strict loading are in `schema`
(re-exported here); `verify_template` says whether a template holds and, if not, why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.accounting import (
    ANSWER_MARK,
    Accounting,
    account,
    level3_leaks,
    literal_problems,
    written_numbers,
)
from cfa_lib.perturbation.domain import Domain, parse_domain, stated_direction, stated_relation
from cfa_lib.perturbation.formula import Formula, FormulaError, parse_formula
from cfa_lib.perturbation.number_text import NumberText, count_span, find_numbers, word_number
from cfa_lib.perturbation.schema import (  # noqa: F401 - re-exported: the template API is imported from here
    TEMPLATES_DIR_ENV,
    Template,
    TemplateError,
    TemplateParameter,
    load_templates,
    templates_dir,
)
from cfa_lib.perturbation.types import AlsoSpan, ParameterInfo, Verification
from cfa_lib.perturbation.values import changeable, solve_for
from cfa_lib.perturbation.verify import at_written_precision, option_tuples, span_scale, verify_extraction

REL_TOL = 0.005  # reproduce the key within 0.5 %; no distractor within 0.5 %; decisions keep a 0.5 % margin
# (a template with `key_rounded`: the key is the formula rounded to its written decimals, no distractor is)
MOVE_FACTORS = (1.1, 0.9)  # every input, moved by +10 % or by -10 %, must move the answer
ROUND_TRIP_TOL = 1e-6


# --- checking one template against its question ------------------------------------------------


@dataclass
class TemplateCheck:
    """Whether a template holds for its question; on success the pieces a perturbation needs."""

    question_id: str
    ok: bool
    reason: str = ""
    check: str = ""  # the rule that failed
    verification: Verification | None = None  # parameters, spans, derived givens (formula: value kind)
    option_formulas: dict[str, Formula] = field(default_factory=dict)  # argmax/argmin decisions
    original_key: str | None = None  # the letter the template selects with the original values
    original_value: float | None = None  # formula output (value, threshold) or the winner's value
    # options carrying several numbers (template `formulas`): per position, the formula, the factor from the
    # number as written to the formula's value, and the formula's output with the original values
    position_formulas: list[Formula] = field(default_factory=list)
    option_tuples: dict[str, list[NumberText]] = field(default_factory=dict)
    answer_scales: list[float] = field(default_factory=list)
    original_values: list[float] = field(default_factory=list)
    accounting: Accounting | None = None  # what every number of the stem, options and level-3 stem is
    domain: Domain = field(default_factory=Domain)  # where the formula holds
    distractor_formulas: dict[str, Formula] = field(default_factory=dict)  # letter -> its named mistake


def verify_template(question: Question, template: Template) -> TemplateCheck:
    """Every contract rule code can check: spans and values (`also` copies too), key reproduced, no distractor
    within 0.5 %, every parameter used and moving the answer, decision margin, the validity domain holding at
    the original values, level-3 edits and solve round trip, and every number of the stem, the options and the
    level-3 stem accounted for, with no formula literal copied from an option (`accounting`)."""

    def fail(check: str, reason: str) -> TemplateCheck:
        return TemplateCheck(question.id, False, reason, check)

    if template.question_id != question.id:
        return fail("question_id", f"template is for {template.question_id}, not {question.id}")
    try:
        verification, parsed = _verify_parameters(question, template)
    except _Failed as failed:
        return fail(failed.check, failed.reason)
    result = TemplateCheck(question.id, True, verification=verification, domain=parsed.domain)
    try:
        if template.formulas is not None:
            _check_tuple(question, template, result)
        elif template.kind == "value":
            _check_value(question, template, result)
        else:
            _check_decision(question, template, result)
        _check_moves(template, result)
        if template.level3 is not None:
            _check_level3(question, template, result)
        _check_accounting(question, template, result, parsed)
    except _Failed as failed:
        return fail(failed.check, failed.reason)
    except (FormulaError, ArithmeticError, ValueError) as error:
        return fail("arithmetic", f"{type(error).__name__}: {error}")
    return result


class _Failed(Exception):
    def __init__(self, check: str, reason: str):
        super().__init__(reason)
        self.check, self.reason = check, reason


@dataclass
class _Parsed:
    """What `_verify_parameters` reads besides the verification: where each formula is written (for the
    literal rule), every parameter's `also` texts, and the validity domain."""

    formulas: dict[str, Formula]
    also: dict[str, list[AlsoSpan]]
    domain: Domain


def _verify_parameters(question: Question, template: Template) -> tuple[Verification, _Parsed]:
    """Spans in the stem (one number or none each), values matching spans (`also` texts too), formulas and
    domain parsed, every parameter used by a formula, a derived value or the domain; the original values
    inside the domain."""
    names = [p.name for p in template.parameters]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _Failed("formula_parsed", f"parameter {duplicates[0]!r} is named twice")
    base = [p.name for p in template.parameters if not p.derived_from.strip()]
    try:
        derived = {p.name: parse_formula(p.derived_from, base) for p in template.parameters if p.derived_from.strip()}
        written = {"formula": parse_formula(template.formula, names)} if template.formula.strip() else {}
        written |= {f"formula {i}": parse_formula(text, names) for i, text in enumerate(template.formulas or (), 1)}
        if template.decision is not None and template.decision.formulas:
            written |= {f"the formula of option {letter}": parse_formula(text, names)
                        for letter, text in template.decision.formulas.items()}
        domain = parse_domain(template.domain, names)
    except FormulaError as error:
        raise _Failed("formula_parsed", f"formula rejected: {error}") from None

    parameters: dict[str, ParameterInfo] = {}
    for spec in template.parameters:
        if not spec.span:
            raise _Failed("spans_in_question", f"parameter {spec.name!r} has no span")
        occurrences = count_span(question.stem, spec.span)
        if occurrences == 0:
            raise _Failed("spans_in_question", f"span {spec.span!r} of parameter {spec.name!r} is not in the question")
        word = word_number(spec.span, spec.value)
        numbers = [word] if word is not None else find_numbers(spec.span)
        if len(numbers) > 1:
            raise _Failed("values_match_spans", f"span {spec.span!r} of {spec.name!r} holds {len(numbers)} numbers")
        text: NumberText | None = numbers[0] if numbers else None
        scale = span_scale(spec.value, text) if text is not None else 1.0
        if scale is None:
            raise _Failed("values_match_spans",
                          f"parameter {spec.name!r}: value {spec.value:g} does not match its span {spec.span!r}")
        parameters[spec.name] = ParameterInfo(spec.as_extracted(), text, scale, occurrences)
    also = {spec.name: [_also_span(question, spec, text) for text in spec.also] for spec in template.parameters}

    used = set().union(*(f.names for f in written.values()))
    used |= set().union(*(derived[name].names for name in used if name in derived))
    needed = used | set(derived) | domain.names | set().union(*(f.names for f in derived.values()))
    unused = [name for name in names if name not in needed]
    if unused:
        raise _Failed("parameters_used", f"parameter {unused[0]!r} is not used by the formula")
    values = {name: info.spec.value for name, info in parameters.items()}
    for name, derived_formula in derived.items():
        computed = derived_formula.evaluate(values)
        if relative_difference(computed, values[name]) > REL_TOL:
            raise _Failed(
                "derived_values",
                f"derived parameter {name!r}: formula gives {computed:.6g}, the question states {values[name]:g}",
            )
    broken = domain.broken(values)
    if broken:
        raise _Failed("domain", f"the original values break the validity domain: {broken}")
    relation = stated_relation(question.stem)
    if relation and not domain.conditions:
        raise _Failed("domain", f"the stem says {relation!r}, a relation between its numbers, and the template has "
                                "no domain condition: a draw could break what the story says")
    for name, info in parameters.items():
        word = stated_direction(question.stem, info.spec.span)
        if not word or name in domain.names:
            continue
        start = question.stem.find(info.spec.span)
        before = [other for other, o in parameters.items() if other != name and o.spec.kind == info.spec.kind
                  and 0 <= start - question.stem.find(o.spec.span) <= 200]
        if before and any(changeable(parameters[n], parameters) for n in (name, *before)):
            raise _Failed("domain", f"the stem says {info.spec.span!r} ({name}) is where a change from "
                                    f"{before[-1]} ended ({word!r}): a domain condition must keep that direction")
    formula = written.get("formula")
    written |= {f"the derived_from of {name!r}": formula for name, formula in derived.items()}
    verification = Verification("ok", "", [], formula, derived, parameters, used=frozenset(used))
    return verification, _Parsed(written, also, domain)


def _also_span(question: Question, spec: TemplateParameter, text: str) -> AlsoSpan:
    """An `also` text: in the stem, with exactly one number that states the parameter's value."""
    if not count_span(question.stem, text):
        raise _Failed("spans_in_question", f"'also' text {text!r} of parameter {spec.name!r} is not in the question")
    stating = [(number, scale) for number in written_numbers(text)
               if (scale := span_scale(spec.value, number)) is not None]
    if len(stating) != 1:
        raise _Failed("values_match_spans", f"'also' text {text!r} of parameter {spec.name!r} states its value "
                      f"{spec.value:g} {len(stating)} times, not once")
    return AlsoSpan(text, *stating[0])


def _check_accounting(question: Question, template: Template, check: TemplateCheck, parsed: _Parsed) -> None:
    """Every number of the stem, the options and the level-3 stem accounted for (`accounting.account`), no
    formula literal copied from an option, no level-3 stem that still states its unknown."""
    verification = check.verification
    assert verification is not None
    infos = verification.parameters
    for name, info in infos.items():
        info.also = parsed.also[name]
    level3_text = apply_edits(question.stem, template, ANSWER_MARK) if template.level3 is not None else None
    accounting = account(question, template, infos, level3_text)
    problems = literal_problems(question, parsed.formulas) + accounting.problems
    if template.level3 is not None:
        problems += level3_leaks(accounting.level3, template.level3.unknown)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise _Failed("numbers_accounted", "; ".join(problems[:3]) + more)
    for name in accounting.shared:
        infos[name].shared = True
    check.accounting = accounting


def _check_value(question: Question, template: Template, result: TemplateCheck) -> None:
    """Check 1 of the generator path (reused as is), then: no distractor within 0.5 % of the answer."""
    verification = verify_extraction(question, template.extraction(), REL_TOL, number_words=True,
                                     key_rounded=template.key_rounded)
    if not verification.ok:
        last = verification.trail[-1].name if verification.trail else "reproduces_answer"
        raise _Failed(last, verification.reason)
    output = verification.original_answer_value
    assert output is not None
    key = verification.options[question.answer]
    for letter in question.distractors:
        if letter not in verification.options:  # a distractor without a number ("Unlimited.")
            continue
        number = verification.options[letter]
        if template.key_rounded and at_written_precision(output, number, verification.answer_scale, key.decimals):
            raise _Failed(
                "no_close_distractor",
                f"formula gives {output:.6g}, which rounds to distractor {letter} ({question.choices[letter]!r}) at "
                f"the key's {key.decimals} decimals as well as to the key {question.correct_text!r}",
            )
        if any(relative_difference(output, number.number * scale) <= REL_TOL for scale in number.scales):
            raise _Failed(
                "no_close_distractor",
                f"formula gives {output:.6g}, within {REL_TOL:.1%} of distractor {letter} "
                f"({question.choices[letter]!r})",
            )
    low, high = template.answer_range or (None, None)
    if (low is not None and output < low) or (high is not None and output > high):
        raise _Failed("answer_range", f"formula gives {output:.6g}, outside the answer's range [{low}, {high}]")
    result.verification = verification  # check 1's options and answer scale are needed later
    result.original_key = question.answer
    result.original_value = output
    result.distractor_formulas = _distractor_formulas(question, template, verification)


def _distractor_formulas(question: Question, template: Template, verification: Verification) -> dict[str, Formula]:
    """Each named mistake's formula, checked: a distractor's letter, and its original value is the option's
    number within 0.5 % (as the key's formula gives the key)."""
    formulas = {}
    for letter, text in (template.distractor_formulas or {}).items():
        if letter not in question.distractors or letter not in verification.options:
            raise _Failed("distractor_formulas", f"{letter!r} is not a numeric distractor of the question")
        formula = parse_formula(text, verification.parameters)
        value = formula.evaluate(verification.values())
        number = verification.options[letter]
        if relative_difference(value, number.number * verification.answer_scale) > REL_TOL and not (
                template.key_rounded and at_written_precision(value, number, verification.answer_scale)):
            raise _Failed("distractor_formulas", f"distractor {letter}'s formula gives {value:.6g}, not "
                                                 f"{question.choices[letter]!r}")
        formulas[letter] = formula
    return formulas


def _check_tuple(question: Question, template: Template, result: TemplateCheck) -> None:
    """Options carrying several numbers: the key's numbers, in order, each within 0.5 % of its position's
    formula (percent-aware); no distractor whose numbers all are within 0.5 % (it would be equally right)."""
    verification = result.verification
    assert verification is not None and template.formulas is not None
    count = len(template.formulas)
    options = option_tuples(question, count)
    if options.problem:
        raise _Failed("option_numbers", options.problem)
    names = list(verification.parameters)
    formulas = [parse_formula(text, names) for text in template.formulas]
    full = verification.with_derived(verification.values())
    outputs = [formula.evaluate(full) for formula in formulas]
    key = options.tuples[question.answer]
    scales = []
    for position, (output, number) in enumerate(zip(outputs, key, strict=True), start=1):
        scale = next((s for s in number.scales if relative_difference(output, number.number * s) <= REL_TOL), None)
        if scale is None:
            raise _Failed(
                "reproduces_answer",
                f"formula {position} gives {output:.6g} but number {position} of the correct option "
                f"{question.correct_text!r} is {number.core} (tolerance {REL_TOL:.1%})",
            )
        scales.append(scale)
    for letter in question.distractors:
        numbers = options.tuples.get(letter)
        if numbers is not None and all(
            any(relative_difference(output, number.number * s) <= REL_TOL for s in number.scales)
            for output, number in zip(outputs, numbers, strict=True)
        ):
            shown = ", ".join(f"{output:.6g}" for output in outputs)
            raise _Failed(
                "no_close_distractor",
                f"formulas give ({shown}), every number within {REL_TOL:.1%} of distractor {letter} "
                f"({question.choices[letter]!r})",
            )
    result.position_formulas = formulas
    result.option_tuples = options.tuples
    result.answer_scales = scales
    result.original_values = outputs
    result.original_key = question.answer
    result.original_value = outputs[0]


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


def _check_decision(question: Question, template: Template, result: TemplateCheck) -> None:
    decision = template.decision
    assert decision is not None and result.verification is not None
    letters = set(question.choices)
    mapped = set(decision.options or {}) | set(decision.formulas or {})
    foreign = sorted(mapped - letters)
    if foreign:
        raise _Failed("decision_rule", f"decision names option {foreign[0]!r}, not among {', '.join(sorted(letters))}")
    if decision.type == "threshold":
        assert decision.options is not None
        missing = sorted(letters - set(decision.options))
        if missing:
            reason = f"threshold decision does not map option {missing[0]} (null if never chosen)"
            raise _Failed("decision_rule", reason)
        for letter, bounds in decision.options.items():
            if bounds is not None and None not in bounds and bounds[0] >= bounds[1]:  # type: ignore[operator]
                raise _Failed("decision_rule", f"option {letter}: interval [{bounds[0]}, {bounds[1]}) is empty")
    else:
        assert decision.formulas is not None
        if len(decision.formulas) < 2:
            raise _Failed("decision_rule", f"an {decision.type} decision compares at least two options")
        names = list(result.verification.parameters)
        result.option_formulas = {letter: parse_formula(text, names) for letter, text in decision.formulas.items()}
    key, value, margin = decide(template, result, result.verification.values())
    if key is None:
        raise _Failed("decision_rule", f"the formula gives {value:.6g}, which no option's interval holds")
    if key != question.answer:
        raise _Failed("reproduces_key", f"the decision rule picks {key} ({value:.6g}) but the key is {question.answer}")
    if margin < REL_TOL:
        raise _Failed("decision_margin", f"the deciding value {value:.6g} is within {REL_TOL:.1%} of the boundary")
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


def _check_moves(template: Template, check: TemplateCheck) -> None:
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
            raise _Failed("answer_moves", f"the answer does not move when {name!r} moves by +10% or -10%")


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


def _check_level3(question: Question, template: Template, check: TemplateCheck) -> None:
    """The edits apply, state the answer, drop the unknown's span, and the solve round-trips."""
    level3 = template.level3
    verification = check.verification
    assert level3 is not None and verification is not None and verification.formula is not None
    infos = verification.parameters
    unknown = level3.unknown
    if unknown not in infos:
        raise _Failed("level3_unknown", f"level-3 unknown {unknown!r} is not a parameter")
    info = infos[unknown]
    if unknown in verification.derived or unknown not in verification.used or info.text is None:
        raise _Failed("level3_unknown", f"level-3 unknown {unknown!r} must be a stated, used, numeric input")
    if not any("{answer}" in edit.new for edit in level3.edits):
        raise _Failed("level3_edits", "no level-3 edit states the answer ({answer})")
    answer_text = verification.options[question.answer].core
    try:
        edited = apply_edits(question.stem, template, answer_text)
    except ValueError as error:
        raise _Failed("level3_edits", str(error)) from None
    if count_span(edited, info.spec.span) >= info.occurrences:
        raise _Failed("level3_edits", f"the level-3 edits leave the unknown's span {info.spec.span!r} in the question")
    values = verification.values()
    target = verification.original_answer_value
    assert target is not None
    upper = 1.0 if info.spec.kind == "rate" and info.scale != 1.0 else None
    try:
        solved = solve_for(verification.answer, values, unknown, target, upper)
        stated_answer = verification.options[question.answer].number * verification.answer_scale
        stated = solve_for(verification.answer, values, unknown, stated_answer, upper)
    except FormulaError as error:
        raise _Failed("level3_round_trip", f"cannot solve for {unknown!r}: {error}") from None
    if relative_difference(solved, values[unknown]) > ROUND_TRIP_TOL:
        raise _Failed(
            "level3_round_trip", f"solving for {unknown!r} gives {solved:.10g}, not the original {values[unknown]:g}"
        )
    if relative_difference(stated, values[unknown]) > REL_TOL:
        reason = f"the rounded answer {answer_text} implies {unknown} = {stated:.6g}, not {values[unknown]:g}"
        raise _Failed("level3_round_trip", reason)

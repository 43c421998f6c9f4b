"""Hand-written counterfactual templates: one dataset question's computation, described and checked.

A template (see datasets/templates/README.md) is the offline counterpart of the generator's formula
extraction: a person wrote the inputs, their spans and the textbook formula, and code checks every rule
of the contract before a template may drive a perturbation. Its shape and strict loading are in `schema`
(re-exported here); `verify_template` says whether a template holds and, if not, why: the value rules are here,
the decision, moves and level-3 rules in `template_rules`, the result (`TemplateCheck`) in `template_check`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.accounting import (
    ANSWER_MARK,
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
from cfa_lib.perturbation.template_check import REL_TOL, RuleFailed, TemplateCheck
from cfa_lib.perturbation.template_rules import apply_edits, check_decision, check_level3, check_moves
from cfa_lib.perturbation.types import AlsoSpan, ParameterInfo, Verification
from cfa_lib.perturbation.values import changeable
from cfa_lib.perturbation.verify import at_written_precision, option_tuples, span_scale, verify_extraction

# --- checking one template against its question ------------------------------------------------


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
    except RuleFailed as failed:
        return fail(failed.check, failed.reason)
    result = TemplateCheck(question.id, True, verification=verification, domain=parsed.domain)
    try:
        if template.formulas is not None:
            _check_tuple(question, template, result)
        elif template.kind == "value":
            _check_value(question, template, result)
        else:
            check_decision(question, template, result)
        check_moves(template, result)
        if template.level3 is not None:
            check_level3(question, template, result)
        _check_accounting(question, template, result, parsed)
    except RuleFailed as failed:
        return fail(failed.check, failed.reason)
    except (FormulaError, ArithmeticError, ValueError) as error:
        return fail("arithmetic", f"{type(error).__name__}: {error}")
    return result


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
        raise RuleFailed("formula_parsed", f"parameter {duplicates[0]!r} is named twice")
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
        raise RuleFailed("formula_parsed", f"formula rejected: {error}") from None

    parameters: dict[str, ParameterInfo] = {}
    for spec in template.parameters:
        if not spec.span:
            raise RuleFailed("spans_in_question", f"parameter {spec.name!r} has no span")
        occurrences = count_span(question.stem, spec.span)
        if occurrences == 0:
            raise RuleFailed("spans_in_question",
                             f"span {spec.span!r} of parameter {spec.name!r} is not in the question")
        word = word_number(spec.span, spec.value)
        numbers = [word] if word is not None else find_numbers(spec.span)
        if len(numbers) > 1:
            raise RuleFailed("values_match_spans", f"span {spec.span!r} of {spec.name!r} holds {len(numbers)} numbers")
        text: NumberText | None = numbers[0] if numbers else None
        scale = span_scale(spec.value, text) if text is not None else 1.0
        if scale is None:
            raise RuleFailed("values_match_spans",
                          f"parameter {spec.name!r}: value {spec.value:g} does not match its span {spec.span!r}")
        parameters[spec.name] = ParameterInfo(spec.as_extracted(), text, scale, occurrences)
    also = {spec.name: [_also_span(question, spec, text) for text in spec.also] for spec in template.parameters}

    used = set().union(*(f.names for f in written.values()))
    used |= set().union(*(derived[name].names for name in used if name in derived))
    needed = used | set(derived) | domain.names | set().union(*(f.names for f in derived.values()))
    unused = [name for name in names if name not in needed]
    if unused:
        raise RuleFailed("parameters_used", f"parameter {unused[0]!r} is not used by the formula")
    values = {name: info.spec.value for name, info in parameters.items()}
    for name, derived_formula in derived.items():
        computed = derived_formula.evaluate(values)
        if relative_difference(computed, values[name]) > REL_TOL:
            raise RuleFailed(
                "derived_values",
                f"derived parameter {name!r}: formula gives {computed:.6g}, the question states {values[name]:g}",
            )
    broken = domain.broken(values)
    if broken:
        raise RuleFailed("domain", f"the original values break the validity domain: {broken}")
    relation = stated_relation(question.stem)
    if relation and not domain.conditions:
        raise RuleFailed("domain", f"the stem says {relation!r}, a relation between its numbers, and the template has "
                                "no domain condition: a draw could break what the story says")
    for name, info in parameters.items():
        word = stated_direction(question.stem, info.spec.span)
        if not word or name in domain.names:
            continue
        start = question.stem.find(info.spec.span)
        before = [other for other, o in parameters.items() if other != name and o.spec.kind == info.spec.kind
                  and 0 <= start - question.stem.find(o.spec.span) <= 200]
        if before and any(changeable(parameters[n], parameters) for n in (name, *before)):
            raise RuleFailed("domain", f"the stem says {info.spec.span!r} ({name}) is where a change from "
                                    f"{before[-1]} ended ({word!r}): a domain condition must keep that direction")
    formula = written.get("formula")
    written |= {f"the derived_from of {name!r}": formula for name, formula in derived.items()}
    verification = Verification("ok", "", [], formula, derived, parameters, used=frozenset(used))
    return verification, _Parsed(written, also, domain)


def _also_span(question: Question, spec: TemplateParameter, text: str) -> AlsoSpan:
    """An `also` text: in the stem, with exactly one number that states the parameter's value."""
    if not count_span(question.stem, text):
        raise RuleFailed("spans_in_question", f"'also' text {text!r} of parameter {spec.name!r} is not in the question")
    stating = [(number, scale) for number in written_numbers(text)
               if (scale := span_scale(spec.value, number)) is not None]
    if len(stating) != 1:
        raise RuleFailed("values_match_spans", f"'also' text {text!r} of parameter {spec.name!r} states its value "
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
        raise RuleFailed("numbers_accounted", "; ".join(problems[:3]) + more)
    for name in accounting.shared:
        infos[name].shared = True
    check.accounting = accounting


def _check_value(question: Question, template: Template, result: TemplateCheck) -> None:
    """Check 1 of the generator path (reused as is), then: no distractor within 0.5 % of the answer."""
    verification = verify_extraction(question, template.extraction(), REL_TOL, number_words=True,
                                     key_rounded=template.key_rounded)
    if not verification.ok:
        last = verification.trail[-1].name if verification.trail else "reproduces_answer"
        raise RuleFailed(last, verification.reason)
    output = verification.original_answer_value
    assert output is not None
    key = verification.options[question.answer]
    for letter in question.distractors:
        if letter not in verification.options:  # a distractor without a number ("Unlimited.")
            continue
        number = verification.options[letter]
        if template.key_rounded and at_written_precision(output, number, verification.answer_scale, key.decimals):
            raise RuleFailed(
                "no_close_distractor",
                f"formula gives {output:.6g}, which rounds to distractor {letter} ({question.choices[letter]!r}) at "
                f"the key's {key.decimals} decimals as well as to the key {question.correct_text!r}",
            )
        if any(relative_difference(output, number.number * scale) <= REL_TOL for scale in number.scales):
            raise RuleFailed(
                "no_close_distractor",
                f"formula gives {output:.6g}, within {REL_TOL:.1%} of distractor {letter} "
                f"({question.choices[letter]!r})",
            )
    low, high = template.answer_range or (None, None)
    if (low is not None and output < low) or (high is not None and output > high):
        raise RuleFailed("answer_range", f"formula gives {output:.6g}, outside the answer's range [{low}, {high}]")
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
            raise RuleFailed("distractor_formulas", f"{letter!r} is not a numeric distractor of the question")
        formula = parse_formula(text, verification.parameters)
        value = formula.evaluate(verification.values())
        number = verification.options[letter]
        if relative_difference(value, number.number * verification.answer_scale) > REL_TOL and not (
                template.key_rounded and at_written_precision(value, number, verification.answer_scale)):
            raise RuleFailed("distractor_formulas", f"distractor {letter}'s formula gives {value:.6g}, not "
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
        raise RuleFailed("option_numbers", options.problem)
    names = list(verification.parameters)
    formulas = [parse_formula(text, names) for text in template.formulas]
    full = verification.with_derived(verification.values())
    outputs = [formula.evaluate(full) for formula in formulas]
    key = options.tuples[question.answer]
    scales = []
    for position, (output, number) in enumerate(zip(outputs, key, strict=True), start=1):
        scale = next((s for s in number.scales if relative_difference(output, number.number * s) <= REL_TOL), None)
        if scale is None:
            raise RuleFailed(
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
            raise RuleFailed(
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

"""Hand-written counterfactual templates: one dataset question's computation, described and checked.

A template (see datasets/templates/README.md) is the offline counterpart of the generator's formula
extraction: a person wrote the inputs, their spans and the textbook formula, and code checks every rule
of the contract before a template may drive a perturbation. Loading is strict (errors name the file,
line, question and field); `verify_template` says whether a template holds and, if not, why.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import DATASET_NAMES, Question, load_dataset
from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.perturbation.formula import Formula, FormulaError, parse_formula
from cfa_lib.perturbation.number_text import NumberText, count_span, find_numbers, word_number
from cfa_lib.perturbation.types import ExtractedParameter, FormulaExtraction, ParameterInfo, Verification
from cfa_lib.perturbation.values import solve_for
from cfa_lib.perturbation.verify import option_tuples, span_scale, verify_extraction

TEMPLATES_DIR_ENV = "CFA_TEMPLATES_DIR"
REL_TOL = 0.005  # reproduce the key within 0.5 %; no distractor within 0.5 %; decisions keep a 0.5 % margin
MOVE_FACTORS = (1.1, 0.9)  # every input, moved by +10 % or by -10 %, must move the answer
ROUND_TRIP_TOL = 1e-6
Unit = Literal["$", "€", "£", "¥", "%", "x", "years", ""]


class TemplateError(ValueError):
    """A templates file that cannot be read, or a line that does not fit the contract's shape."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TemplateParameter(_Strict):
    """The shape of `ExtractedParameter`, with NaN, infinities and booleans refused."""

    name: str
    value: float
    kind: Literal["rate", "count", "amount", "other"]
    span: str
    description: str
    derived_from: str = ""

    @field_validator("value", mode="before")
    @classmethod
    def _finite_number(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"must be finite, got {value!r}")
        return value

    def as_extracted(self) -> ExtractedParameter:
        return ExtractedParameter(**self.model_dump())


class Edit(_Strict):
    old: str = Field(min_length=1)
    new: str


class Level3(_Strict):
    unknown: str
    edits: list[Edit] = Field(min_length=1)


Bound = float | None


class Decision(_Strict):
    """How the computed quantity picks the option (kind "decision")."""

    type: Literal["threshold", "argmax", "argmin"]
    options: dict[str, tuple[Bound, Bound] | None] | None = None  # threshold: [low, high) per letter
    formulas: dict[str, str] | None = None  # argmax/argmin: one formula per letter

    @field_validator("options", mode="before")
    @classmethod
    def _finite_bounds(cls, options: object) -> object:
        if isinstance(options, Mapping):
            for letter, bounds in options.items():
                for bound in bounds or ():
                    if bound is not None and (
                        isinstance(bound, bool) or not isinstance(bound, int | float) or not math.isfinite(bound)
                    ):
                        raise ValueError(f"option {letter}: bound {bound!r} must be a finite number or null")
        return options

    @model_validator(mode="after")
    def _one_form(self) -> Decision:
        if self.type == "threshold" and not self.options:
            raise ValueError("a threshold decision needs 'options'")
        if self.type != "threshold" and not self.formulas:
            raise ValueError(f"an {self.type} decision needs 'formulas'")
        return self


class Template(_Strict):
    question_id: str
    kind: Literal["value", "decision"]
    parameters: list[TemplateParameter] = Field(min_length=1)
    formula: str
    # options carrying several numbers ("¥X and ¥Y."): one formula per position, with formula ""
    formulas: list[str] | None = None
    asked_quantity: str
    unit: Unit
    level3: Level3 | None = None
    decision: Decision | None = None
    answer_range: tuple[Bound, Bound] | None = None  # what the answer can be, as the formula gives it: [0, 1]
    note: str = ""

    @model_validator(mode="after")
    def _kind_fits(self) -> Template:
        if self.formulas is not None:
            if self.kind != "value" or self.formula.strip():
                raise ValueError("'formulas' (one per number of each option) is for a value template with formula \"\"")
            if len(self.formulas) < 2 or not all(text.strip() for text in self.formulas):
                raise ValueError("'formulas' needs at least two non-empty formulas (one per number of each option)")
            if self.level3 is not None or self.answer_range is not None:
                raise ValueError("'level3' and 'answer_range' are for templates whose options carry one number")
        if self.kind == "value":
            if not self.formula.strip() and self.formulas is None:
                raise ValueError("a value template needs a formula")
            if self.decision is not None:
                raise ValueError("a value template has no 'decision'")
        else:
            if self.decision is None:
                raise ValueError("a decision template needs 'decision'")
            if self.level3 is not None:
                raise ValueError("level 3 is only for value templates")
            if self.decision.type != "threshold" and self.formula.strip():
                raise ValueError(f'an {self.decision.type} decision has formula "" (one formula per option)')
            if self.decision.type == "threshold" and not self.formula.strip():
                raise ValueError("a threshold decision needs a formula")
        return self

    def extraction(self) -> FormulaExtraction:
        """The template as a generator reply, so the generator path's check 1 can judge it."""
        return FormulaExtraction(
            computable=True,
            reason="",
            parameters=[p.as_extracted() for p in self.parameters],
            asked_quantity=self.asked_quantity,
            unit=self.unit,
            formula=self.formula,
        )


def templates_dir() -> Path:
    """`$CFA_TEMPLATES_DIR` if set, else <project>/datasets/templates."""
    override = os.environ.get(TEMPLATES_DIR_ENV)
    return Path(override).expanduser() if override else PROJECT_ROOT / "datasets" / "templates"


def load_templates(dataset: str, directory: Path | str | None = None) -> dict[str, Template]:
    """The templates of `dataset` (`<dir>/<dataset>.jsonl`) by question id; none if the file is absent.

    Strict: a line that is not JSON or does not fit the schema raises `TemplateError` naming the file,
    the line, the question and the field.
    """
    if dataset not in DATASET_NAMES:
        raise ValueError(f"dataset={dataset!r} is not a dataset; accepted values: {', '.join(DATASET_NAMES)}")
    path = Path(directory) if directory is not None else templates_dir()
    path = path / f"{dataset}.jsonl"
    if not path.exists():
        return {}
    templates: dict[str, Template] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line, parse_constant=_refuse_constant)
        except (json.JSONDecodeError, ValueError) as error:
            raise TemplateError(f"{where}: not valid JSON: {error}") from None
        question_id = raw.get("question_id", "?") if isinstance(raw, dict) else "?"
        try:
            template = Template.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            loc = ".".join(str(part) for part in first["loc"]) or "template"
            raise TemplateError(f"{where}: {question_id}: field {loc}: {first['msg']}") from None
        if not template.question_id.startswith(f"{dataset}_"):
            raise TemplateError(f"{where}: {question_id}: field question_id: not a {dataset} question")
        if template.question_id in templates:
            raise TemplateError(f"{where}: {question_id}: field question_id: a second template for this question")
        templates[template.question_id] = template
    return templates


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number a template may hold")


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


def verify_template(question: Question, template: Template) -> TemplateCheck:
    """Every contract rule code can check: spans and values, key reproduced, no distractor within 0.5 %,
    every parameter used and moving the answer, decision margin, level-3 edits and solve round trip."""

    def fail(check: str, reason: str) -> TemplateCheck:
        return TemplateCheck(question.id, False, reason, check)

    if template.question_id != question.id:
        return fail("question_id", f"template is for {template.question_id}, not {question.id}")
    try:
        verification = _verify_parameters(question, template)
    except _Failed as failed:
        return fail(failed.check, failed.reason)
    result = TemplateCheck(question.id, True, verification=verification)
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
    except _Failed as failed:
        return fail(failed.check, failed.reason)
    except (FormulaError, ArithmeticError, ValueError) as error:
        return fail("arithmetic", f"{type(error).__name__}: {error}")
    return result


class _Failed(Exception):
    def __init__(self, check: str, reason: str):
        super().__init__(reason)
        self.check, self.reason = check, reason


def _verify_parameters(question: Question, template: Template) -> Verification:
    """Spans in the stem (one number or none each), values matching spans, formulas parsed, all used."""
    names = [p.name for p in template.parameters]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise _Failed("formula_parsed", f"parameter {duplicates[0]!r} is named twice")
    base = [p.name for p in template.parameters if not p.derived_from.strip()]
    try:
        derived = {p.name: parse_formula(p.derived_from, base) for p in template.parameters if p.derived_from.strip()}
        formulas = [parse_formula(template.formula, names)] if template.formula.strip() else []
        formulas += [parse_formula(text, names) for text in template.formulas or ()]
        if template.decision is not None and template.decision.formulas:
            formulas += [parse_formula(text, names) for text in template.decision.formulas.values()]
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

    used = set().union(*(f.names for f in formulas))
    used |= set().union(*(derived[name].names for name in used if name in derived))
    unused = [name for name in names if name not in used]
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
    formula = formulas[0] if template.formula.strip() else None
    return Verification("ok", "", [], formula, derived, parameters, used=frozenset(used))


def _check_value(question: Question, template: Template, result: TemplateCheck) -> None:
    """Check 1 of the generator path (reused as is), then: no distractor within 0.5 % of the answer."""
    verification = verify_extraction(question, template.extraction(), REL_TOL, number_words=True)
    if not verification.ok:
        last = verification.trail[-1].name if verification.trail else "reproduces_answer"
        raise _Failed(last, verification.reason)
    output = verification.original_answer_value
    assert output is not None
    for letter in question.distractors:
        if letter not in verification.options:  # a distractor without a number ("Unlimited.")
            continue
        number = verification.options[letter]
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


def template_coverage(dataset: str, directory: Path | str | None = None) -> dict[str, Any]:
    """The coverage report of one dataset's templates (the `--json` object)."""
    questions = {q.id: q for q in load_dataset(dataset)}
    templates = load_templates(dataset, directory)
    failed = []
    for question_id, template in templates.items():
        question = questions.get(question_id)
        if question is None:
            failed.append({"question_id": question_id, "reason": "no such question in the dataset"})
            continue
        check = verify_template(question, template)
        if not check.ok:
            failed.append({"question_id": question_id, "reason": f"{check.check}: {check.reason}"})
    return {
        "dataset": dataset,
        "questions": len(questions),
        "templated": len(templates),
        "verified": len(templates) - len(failed),
        "failed": failed,
    }

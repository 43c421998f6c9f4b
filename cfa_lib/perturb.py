"""Verified counterfactual perturbations of CFA questions.

A generator model only *describes* a question: its numeric inputs (named, with the exact text span
as written), and a formula over those names. Everything that decides a number happens here:
the formula is evaluated by the restricted evaluator (:mod:`cfa_lib.formula`) and must reproduce
the correct option before anything is perturbed; new values are drawn by a seeded numpy Generator;
the new answer comes from the formula (level 1/2) or from solving it for another unknown (level 3);
the choices are rebuilt here with the original relative gaps and formats. The generator's rewrite of
the question text is accepted only if every new value appears in it and no changed old value
remains. Each item ends in a :class:`PerturbationRecord` whose trail lists every check and outcome.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError
from scipy.optimize import brentq

from cfa_lib.data import Question
from cfa_lib.formula import Formula, FormulaError, parse_formula
from cfa_lib.grading import numeric_key
from cfa_lib.models import Completion, Request

__all__ = [
    "STATUSES",
    "Check",
    "ExtractedParameter",
    "FormulaExtraction",
    "NumberText",
    "PerturbationRecord",
    "Plan",
    "QuestionRewrite",
    "Verification",
    "apply_rewrite",
    "build_perturbations",
    "check_rewrite",
    "count_span",
    "coverage_counts",
    "find_numbers",
    "option_numbers",
    "perturb_question",
    "plan_perturbation",
    "rebuild_choices",
    "solve_for",
    "substitute_values",
    "verify_extraction",
]

# ---------------------------------------------------------------------------------------------
# Prompts (to move to cfa_lib/prompts.py)
# ---------------------------------------------------------------------------------------------

EXTRACTION_SYSTEM = (
    "You turn a quantitative CFA exam question into a formula. You are given the question, its answer "
    "choices and the correct choice. Reply in JSON with these fields.\n"
    "- computable: false when the correct answer is not one number computed from numbers in the question "
    "by one closed-form formula (conceptual questions, statements, comparisons); then say why in reason "
    "and leave the other fields empty.\n"
    "- parameters: every input the answer depends on, each with: name (letters, digits, _; e.g. pv, r, n), "
    'value (a plain number), kind, span (the input exactly as written in the question, e.g. "7%", '
    '"$75,000", "10-year", "2.50%"; words such as "quarterly" for conventions not written as digits), '
    'description (a few words, e.g. "stated annual interest rate") and derived_from.\n'
    '  kind is "rate" (give it as a decimal fraction: 7% -> 0.07), "count" (years, periods, payments), '
    '"amount" (money or prices: "$10 million" -> 10000000) or "other" (fixed conventions such as 100 '
    "of par, 4 quarters a year, 365 days).\n"
    "  derived_from: empty, unless the question states a number that is itself computed from other "
    "parameters (e.g. a given PV of an ordinary annuity); then the formula that computes it from them.\n"
    "- formula: one expression over the parameter names that computes the asked quantity, using only "
    "numbers, + - * / **, parentheses and exp, log, sqrt, min, max, abs. When the answer is a percentage, "
    "the formula returns a decimal fraction (8.0% -> 0.08).\n"
    '- asked_quantity: what the question asks for; unit: the unit of the answer ("$", "%", "years").'
)
EXTRACTION_USER = "{mcq}\n\nCorrect choice: {answer}: {correct_text}"

REWRITE_SYSTEM = (
    "You edit CFA exam questions. Rewrite the question exactly as instructed and change nothing else: "
    "same wording, same style, no answer choices, no answer, no explanation. Write every new value "
    'exactly as given. Reply in JSON: {"question": "<the rewritten question>"}.'
)
REWRITE_CHANGE_USER = (
    "Question:\n{stem}\n\nReplace these values (every occurrence) and keep everything else:\n{changes}"
)
REWRITE_UNKNOWN_USER = (
    "Question:\n{stem}\n\nThe answer to this question is {answer_option}. Rewrite the question so that "
    "it states {answer} (written exactly so) as a given and asks instead for the {target} (now written as "
    "{span}). The rewritten question must not contain {span}. Keep every other value exactly as written: "
    '{kept}. End with "is closest to:".'
)

# ---------------------------------------------------------------------------------------------
# Schemas of the generator's replies
# ---------------------------------------------------------------------------------------------

Kind = Literal["rate", "count", "amount", "other"]
Status = Literal["valid", "not_perturbable", "not_verifiable", "rejected"]
STATUSES: tuple[str, ...] = ("valid", "not_perturbable", "not_verifiable", "rejected")
LEVELS = (1, 2, 3)


class ExtractedParameter(BaseModel):
    # every field required (no defaults), so OpenAI's strict structured-output mode accepts the schema
    name: str
    value: float
    kind: Kind
    span: str = Field(description="the input exactly as written in the question, e.g. '7%' or '$75,000'")
    description: str
    derived_from: str = Field(description="empty, or a formula computing this stated value from the others")


class FormulaExtraction(BaseModel):
    computable: bool
    reason: str = Field(description="why not computable; empty otherwise")
    parameters: list[ExtractedParameter]
    asked_quantity: str
    unit: str
    formula: str


class QuestionRewrite(BaseModel):
    question: str


# ---------------------------------------------------------------------------------------------
# Numbers as written: parse them, find them, write new ones in the same style
# ---------------------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.,])(?P<sign>[-–−]?)(?P<currency>[$€£¥]?)"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?!\d)"
)
_PERCENT = re.compile(r"^\s*(?:%|percent\b)", re.I)
_MULTIPLIERS = (
    (re.compile(r"^\s*thousand\b", re.I), 1e3),
    (re.compile(r"^\s*million\b", re.I), 1e6),
    (re.compile(r"^\s*billion\b", re.I), 1e9),
    (re.compile(r"^\s*trillion\b", re.I), 1e12),
    (re.compile(r"^\s*(?:basis points?|bps?)\b", re.I), 1e-4),
)


@dataclass(frozen=True)
class NumberText:
    """One number inside a piece of text (an option or a span), with what it takes to write another."""

    lead: str  # text before the sign/currency
    sign: str
    currency: str
    digits: str
    suffix: str  # text after the digits
    number: float  # signed, as written ("7%" -> 7.0)

    @property
    def decimals(self) -> int:
        return len(self.digits.split(".")[1]) if "." in self.digits else 0

    @property
    def grouped(self) -> bool:
        return "," in self.digits

    @property
    def percent(self) -> bool:
        return bool(_PERCENT.match(self.suffix))

    @property
    def multiplier(self) -> float:
        for pattern, factor in _MULTIPLIERS:
            if pattern.match(self.suffix):
                return factor
        return 1.0

    @property
    def core(self) -> str:
        """The number with currency, % or scale word, without other words ("$113,733", "8.0%", "$1.2 million")."""
        return f"{self.sign}{self.currency}{self.digits}{self.unit}"

    @property
    def unit(self) -> str:
        """What right after the digits belongs to the number: "%" or a word such as " million"."""
        for pattern in (_PERCENT, *(pattern for pattern, _ in _MULTIPLIERS)):
            match = pattern.match(self.suffix)
            if match:
                return match.group(0)
        return ""

    def write(self, number: float, decimals: int | None = None, keep_lead: bool = True) -> str:
        """`number` in this text's style: currency, sign, separators, decimals, surrounding words."""
        places = self.decimals if decimals is None else decimals
        if decimals is None:  # a drawn value such as 8.5 for "7%" needs one more place than written
            while places < self.decimals + 2 and not math.isclose(round(number, places), number, abs_tol=1e-9):
                places += 1
        grouped = self.grouped or abs(number) >= 10_000
        digits = f"{abs(number):{',' if grouped else ''}.{places}f}"
        sign = "" if round(number, places) >= 0 else (self.sign or "-")
        return f"{self.lead if keep_lead else ''}{sign}{self.currency}{digits}{self.suffix}"


def find_numbers(text: str) -> list[NumberText]:
    """Every number in `text`; lead/suffix of each are the text around that number."""
    found = []
    for match in _NUMBER.finditer(text):
        digits = match["digits"]
        value = float(digits.replace(",", ""))
        found.append(
            NumberText(
                lead=text[: match.start()],
                sign=match["sign"],
                currency=match["currency"],
                digits=digits,
                suffix=text[match.end() :],
                number=-value if match["sign"] else value,
            )
        )
    return found


def single_number(text: str) -> NumberText | None:
    numbers = find_numbers(text)
    return numbers[0] if len(numbers) == 1 else None


def _span_matches(text: str, span: str) -> list[re.Match[str]]:
    """Occurrences of `span` in `text` that are not part of a longer number ("7%" is not in "17%")."""
    if not span:
        return []
    found = []
    for match in re.finditer(re.escape(span), text):
        before, after = text[: match.start()], text[match.end() :]
        if span[0].isdigit() and (before[-1:].isdigit() or (before[-1:] in {".", ","} and before[-2:-1].isdigit())):
            continue
        if span[-1].isdigit() and (after[:1].isdigit() or (after[:1] in {".", ","} and after[1:2].isdigit())):
            continue
        found.append(match)
    return found


def count_span(text: str, span: str) -> int:
    return len(_span_matches(text, span))


def substitute_values(stem: str, old_spans: Sequence[str], new_spans: Sequence[str]) -> str:
    """Rewrite `stem` by exact span replacement; every old span must occur exactly once.

    The deterministic fallback for level 1/2 when the generator's rewrite fails its checks.
    """
    if len(old_spans) != len(new_spans):
        raise ValueError(f"{len(old_spans)} old spans but {len(new_spans)} new spans")
    positions: list[tuple[int, int, str]] = []
    for old, new in zip(old_spans, new_spans, strict=True):
        matches = _span_matches(stem, old)
        if len(matches) != 1:
            raise ValueError(f"span {old!r} occurs {len(matches)} times in the question; it must occur once")
        positions.append((matches[0].start(), matches[0].end(), new))
    positions.sort()
    for (_, end, _), (start, _, _) in zip(positions, positions[1:], strict=False):
        if start < end:
            raise ValueError("spans overlap in the question")
    for start, end, new in reversed(positions):
        stem = stem[:start] + new + stem[end:]
    return stem


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class PerturbationRecord:
    """One perturbation attempt: what changed, the new question and answer, and how it was checked."""

    question_id: str
    level: int
    status: Status
    reason: str = ""
    parameters: list[dict[str, Any]] = field(default_factory=list)
    formula: str = ""
    asked_quantity: str = ""
    unit: str = ""
    original_values: dict[str, float] = field(default_factory=dict)
    new_values: dict[str, float] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)  # parameters changed (level 1/2), the unknown (level 3)
    original_answer_value: float | None = None  # formula output with the original values
    new_answer_value: float | None = None  # in the formula's units (a rate as 0.0798)
    question: str | None = None  # the perturbed question stem
    choices: dict[str, str] = field(default_factory=dict)
    correct_letter: str | None = None
    rewrite_path: Literal["generator", "substitution"] | None = None
    trail: list[Check] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    def as_question(self) -> Question:
        """The perturbed item as a `Question`, so the experiment can ask it like any other."""
        if not self.valid or self.question is None or self.correct_letter is None:
            raise ValueError(f"{self.question_id} level {self.level} is {self.status}, not a valid perturbation")
        dataset, _, index = self.question_id.rpartition("_")
        return Question(
            id=f"{self.question_id}_L{self.level}",
            dataset=dataset,
            index=int(index) if index.isdigit() else -1,
            stem=self.question,
            choices=dict(self.choices),
            answer=self.correct_letter,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PerturbationRecord:
        """Inverse of `to_dict` (for reading a results file back)."""
        known = {f.name for f in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["trail"] = [Check(**check) for check in values.get("trail", [])]
        return cls(**values)


def coverage_counts(records: Iterable[PerturbationRecord]) -> dict[int, dict[str, int]]:
    """How many items of each level ended in each status (every status listed, zeros included)."""
    counts: dict[int, dict[str, int]] = {}
    for record in records:
        counts.setdefault(record.level, dict.fromkeys(STATUSES, 0))[record.status] += 1
    return dict(sorted(counts.items()))


# ---------------------------------------------------------------------------------------------
# Check 1: the extraction reproduces the correct option
# ---------------------------------------------------------------------------------------------


@dataclass
class OptionNumbers:
    """The number in every option, or why the question cannot be perturbed numerically."""

    numbers: dict[str, NumberText]
    problem: str = ""


def option_numbers(question: Question) -> OptionNumbers:
    numbers: dict[str, NumberText] = {}
    letters = [question.answer] + [letter for letter in question.choices if letter != question.answer]
    for letter in letters:
        text = question.choices[letter]
        found = find_numbers(text)
        role = "correct option" if letter == question.answer else "option"
        if not found:
            return OptionNumbers({}, f"{role} {letter} ({text!r}) carries no number")
        if len(found) > 1:
            return OptionNumbers({}, f"{role} {letter} ({text!r}) carries more than one number")
        numbers[letter] = found[0]
    if numbers[question.answer].number == 0:
        return OptionNumbers({}, f"correct option {question.answer} is zero; relative gaps are undefined")
    if numeric_key(question.choices, question.answer) is None:  # the experiment could not grade it by number
        return OptionNumbers({}, f"correct option {question.answer} ({question.correct_text!r}) is not a numeric key")
    return OptionNumbers({letter: numbers[letter] for letter in question.choices})


@dataclass
class ParameterInfo:
    spec: ExtractedParameter
    text: NumberText | None  # the single number in the span, None for word spans ("quarterly")
    scale: float  # value = number as written * scale ("7%" -> 0.01)
    occurrences: int  # in the original stem

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass
class Verification:
    """Outcome of check 1 and the pieces every later step needs."""

    status: Literal["ok", "not_perturbable", "not_verifiable"]
    reason: str = ""
    trail: list[Check] = field(default_factory=list)
    formula: Formula | None = None
    derived: dict[str, Formula] = field(default_factory=dict)
    parameters: dict[str, ParameterInfo] = field(default_factory=dict)
    options: dict[str, NumberText] = field(default_factory=dict)
    answer_scale: float = 1.0  # formula output = number in the correct option * answer_scale
    original_answer_value: float | None = None
    used: frozenset[str] = frozenset()  # inputs the answer depends on (directly or through a derived given)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def values(self) -> dict[str, float]:
        return {name: info.spec.value for name, info in self.parameters.items()}


def _relative_gap(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


def verify_extraction(question: Question, extraction: FormulaExtraction, rel_tol: float = 0.005) -> Verification:
    """Check 1: with the original values the formula reproduces the correct option within `rel_tol`.

    Also checks that every span is in the question and that each value matches its span, and that
    stated values given as `derived_from` formulas are reproduced. A rate answer is compared
    percent-aware: option "8.0%" matches formula output 0.0798 (and 7.98).
    """
    trail: list[Check] = []

    def fail(status: Literal["not_perturbable", "not_verifiable"], check: str, reason: str) -> Verification:
        trail.append(Check(check, False, reason))
        return Verification(status, reason, trail)

    options = option_numbers(question)
    if options.problem:
        return fail("not_perturbable", "option_numbers", options.problem)
    trail.append(Check("option_numbers", True, f"{len(options.numbers)} numeric options"))
    if not extraction.computable:
        return fail("not_perturbable", "computable", f"generator: not computable: {extraction.reason}".strip())
    if not extraction.formula.strip() or not extraction.parameters:
        return fail("not_verifiable", "formula_parsed", "generator gave no formula or no parameters")

    names = [p.name for p in extraction.parameters]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        return fail("not_verifiable", "formula_parsed", f"parameter {duplicates[0]!r} is named twice")
    base_names = [p.name for p in extraction.parameters if not p.derived_from.strip()]
    try:
        formula = parse_formula(extraction.formula, names)
        derived = {
            p.name: parse_formula(p.derived_from, base_names) for p in extraction.parameters if p.derived_from.strip()
        }
    except FormulaError as error:
        return fail("not_verifiable", "formula_parsed", f"formula rejected: {error}")
    trail.append(Check("formula_parsed", True, extraction.formula))

    parameters: dict[str, ParameterInfo] = {}
    for spec in extraction.parameters:
        if not math.isfinite(spec.value):
            return fail("not_verifiable", "values_match_spans", f"parameter {spec.name!r} is not finite")
        occurrences = count_span(question.stem, spec.span) if spec.span else 0
        text = single_number(spec.span) if spec.span else None
        # a convention may be named only by the correct option ("8.0% compounded semiannually."); a number
        # taken from the option would let the formula return the answer itself
        in_option = text is None and count_span(question.correct_text, spec.span)
        if spec.span and occurrences == 0 and not in_option:
            return fail(
                "not_verifiable",
                "spans_in_question",
                f"span {spec.span!r} of parameter {spec.name!r} is not in the question",
            )
        scale = 1.0
        if text is not None:
            scales = [1.0, text.multiplier] + ([0.01] if text.percent else [])
            matching = [s for s in scales if math.isclose(spec.value, text.number * s, rel_tol=1e-9, abs_tol=1e-12)]
            if not matching:
                return fail(
                    "not_verifiable",
                    "values_match_spans",
                    f"parameter {spec.name!r}: value {spec.value:g} does not match its span {spec.span!r}",
                )
            scale = matching[-1]
        parameters[spec.name] = ParameterInfo(spec, text, scale, occurrences)
    trail.append(
        Check("spans_in_question", True, f"{sum(1 for p in parameters.values() if p.occurrences)} spans found")
    )
    trail.append(Check("values_match_spans", True))

    used = set(formula.names).union(*(derived[name].names for name in formula.names if name in derived))
    if not any(parameters[name].text is not None and parameters[name].occurrences for name in used):
        return fail("not_verifiable", "uses_question_numbers", "the formula uses no number written in the question")
    trail.append(Check("uses_question_numbers", True, ", ".join(sorted(used))))

    values = {name: info.spec.value for name, info in parameters.items()}
    for name, derived_formula in derived.items():
        try:
            computed = derived_formula.evaluate(values)
        except FormulaError as error:
            return fail("not_verifiable", "derived_values", f"derived parameter {name!r}: {error}")
        if _relative_gap(computed, values[name]) > rel_tol:
            return fail(
                "not_verifiable",
                "derived_values",
                f"derived parameter {name!r}: formula gives {computed:.6g}, the question states {values[name]:g}",
            )
    if derived:
        trail.append(Check("derived_values", True, ", ".join(sorted(derived))))

    try:
        output = formula.evaluate(values)
    except FormulaError as error:
        return fail("not_verifiable", "reproduces_answer", f"formula with the original values: {error}")
    correct = options.numbers[question.answer]
    scales = [1.0, correct.multiplier] + ([0.01] if correct.percent else [])
    for scale in scales:
        if _relative_gap(output, correct.number * scale) <= rel_tol:
            trail.append(
                Check(
                    "reproduces_answer",
                    True,
                    f"formula gives {output:.6g}; correct option {question.correct_text!r}",
                )
            )
            return Verification(
                "ok",
                "",
                trail,
                formula,
                derived,
                parameters,
                options.numbers,
                answer_scale=scale,
                original_answer_value=output,
                used=frozenset(used),
            )
    return fail(
        "not_verifiable",
        "reproduces_answer",
        f"formula gives {output:.6g} but the correct option is {question.correct_text!r} (tolerance {rel_tol:.1%})",
    )


# ---------------------------------------------------------------------------------------------
# Drawing new values, solving for another unknown, rebuilding the choices
# ---------------------------------------------------------------------------------------------

FACTOR_RANGES = ((0.6, 0.9), (1.1, 1.5))
MAX_DRAWS = 60
ROUND_TRIP_TOL = 1e-6


def changeable(info: ParameterInfo, all_parameters: Mapping[str, ParameterInfo]) -> bool:
    """A parameter can be changed when its span is one number in the question that no other input shares."""
    spec = info.spec
    if info.text is None or info.occurrences == 0 or spec.derived_from.strip() or spec.kind == "other":
        return False
    if any(other.spec.span == spec.span for name, other in all_parameters.items() if name != spec.name):
        return False
    if spec.kind == "rate":
        return 0 < _as_fraction(info, info.text.number) < 1
    if spec.kind == "count":
        return info.text.number >= 1 and float(info.text.number).is_integer()
    return spec.value > 0


def _as_fraction(info: ParameterInfo, number: float) -> float:
    """A rate written as `number` ("7" of "7%") as a decimal fraction, whatever scale the formula uses."""
    assert info.text is not None
    return number / 100 if info.text.percent else number * info.scale


def draw_number(info: ParameterInfo, rng: np.random.Generator) -> float | None:
    """A new number for the span, moved by a factor in [0.6, 0.9] or [1.1, 1.5]; None if it cannot move."""
    assert info.text is not None
    low, high = FACTOR_RANGES[int(rng.integers(len(FACTOR_RANGES)))]
    proposal = info.text.number * float(rng.uniform(low, high))
    original = info.text.number
    if info.spec.kind == "count":
        new = float(max(1, round(proposal)))
    elif info.spec.kind == "rate":  # "7%" moves in half points ("8.5%"), "2.50%" in hundredths
        step = 0.5 if info.text.decimals == 0 else 10.0**-info.text.decimals
        new = round(round(proposal / step) * step, info.text.decimals + 1)
        if not 0 < _as_fraction(info, new) < 1:
            return None
    else:  # amounts: three significant figures, never more decimals than written
        digits = 2 - int(math.floor(math.log10(abs(proposal))))
        new = float(round(proposal, min(digits, info.text.decimals)))
        if new <= 0:
            return None
    return None if new == original else new


def solve_for(
    evaluate: Callable[[Mapping[str, float]], float],
    values: Mapping[str, float],
    unknown: str,
    target: float,
    upper: float | None = None,
) -> float:
    """The value of `unknown` at which `evaluate` equals `target`: brentq on widening brackets around
    the current value (capped below `upper`, e.g. 1 for a rate given as a fraction)."""
    current = values[unknown]
    if current == 0:
        raise FormulaError(f"cannot bracket {unknown!r} around zero")

    def gap(x: float) -> float:
        return evaluate({**values, unknown: x}) - target

    for width in (0.2, 0.5, 0.9):
        low, high = sorted((current * (1 - width), current * (1 + width)))
        if upper is not None:
            high = min(high, upper * (1 - 1e-9))
        try:
            f_low, f_high = gap(low), gap(high)
        except FormulaError:
            continue
        if f_low == 0:
            return low
        if f_high == 0:
            return high
        if f_low * f_high < 0:
            try:
                return float(brentq(gap, low, high, xtol=1e-14, rtol=1e-13, maxiter=200))
            except (ValueError, RuntimeError) as error:  # no convergence
                raise FormulaError(f"solving for {unknown!r} failed: {error}") from None
    raise FormulaError(f"no sign change of the formula around {unknown} = {current:g}")


def _ordering(numbers: Mapping[str, float]) -> Literal["ascending", "descending", None]:
    values = list(numbers.values())
    if all(a < b for a, b in zip(values, values[1:], strict=False)):
        return "ascending"
    if all(a > b for a, b in zip(values, values[1:], strict=False)):
        return "descending"
    return None


def _trailing_period(texts: Sequence[str]) -> bool:
    """Most options end with '.' ("$112,555."); the FinEval files drop it from the last option."""
    return sum(t.rstrip().endswith(".") for t in texts) * 2 > len(texts)


def rebuild_choices(
    question: Question,
    options: Mapping[str, NumberText],
    new_correct_number: float,
    rng: np.random.Generator,
    template: NumberText | None = None,
) -> tuple[dict[str, str], str]:
    """Choices for the new answer: each distractor keeps its relative gap |d - c| / |c| to the correct one.

    The correct option goes to a seeded random letter, so a memorised letter is worth nothing. When the
    original options were sorted by value (as CFA options usually are) and share one sign, a distractor
    may move to the other side of the correct value (same relative gap, mirrored) so that the options
    stay sorted with the correct one at its new letter; an out-of-order option would give it away.
    Each option keeps its own format (currency, separators, decimals, %, trailing words such as
    " compounded semiannually."), or all use `template` (level 3, where the answer is an input).
    Decimals grow (up to +4) if rounding would merge options.
    """
    correct = options[question.answer]
    letters = list(question.choices)
    correct_letter = letters[int(rng.integers(len(letters)))]
    ratios = {letter: options[letter].number / correct.number for letter in question.distractors}
    order = _ordering({letter: options[letter].number for letter in letters})
    if order and all(ratio > 0 for ratio in ratios.values()):
        rank = letters.index(correct_letter)
        below = rank if order == "ascending" else len(letters) - 1 - rank
        mirrored = _mirror(ratios, below)
        if mirrored is not None:
            ratios = mirrored
    new_numbers = {question.answer: new_correct_number} | {
        letter: new_correct_number * ratio for letter, ratio in ratios.items()
    }
    period = _trailing_period(list(question.choices.values()))

    def write(letter: str, extra: int) -> str:
        style = template or options[letter]
        decimals = (style.decimals if template is None else _level3_decimals(style)) + extra
        text = style.write(new_numbers[letter], decimals, keep_lead=template is None)
        if template is not None:
            text = text[: len(text) - len(style.suffix)] + style.unit
        text = text.rstrip()
        if period and not text.endswith("."):
            text += "."
        return text

    for extra in range(5):
        texts = {role: write(role, extra) for role in new_numbers}
        if len(set(texts.values())) == len(texts):
            break
    else:
        raise ValueError("rebuilt options coincide after rounding")

    if order and len(set(new_numbers.values())) == len(new_numbers):
        roles = sorted(new_numbers, key=lambda role: new_numbers[role], reverse=order == "descending")
        if roles.index(question.answer) == letters.index(correct_letter):
            return {letter: texts[role] for letter, role in zip(letters, roles, strict=True)}, correct_letter
    # unsorted originals (or mixed signs): distractors fill the other letters in their original order
    distractors = list(question.distractors)
    if order:
        distractors.sort(key=lambda role: new_numbers[role], reverse=order == "descending")
    free = [letter for letter in letters if letter != correct_letter]
    choices = {correct_letter: texts[question.answer]} | dict(zip(free, (texts[d] for d in distractors), strict=True))
    return {letter: choices[letter] for letter in letters}, correct_letter


def _mirror(ratios: Mapping[str, float], below: int) -> dict[str, float] | None:
    """Move distractors across the correct value (ratio r -> 2 - r) until `below` of them are under it."""
    result = dict(ratios)
    under = [role for role, ratio in ratios.items() if ratio < 1]
    over = [role for role, ratio in ratios.items() if ratio > 1]
    if len(under) + len(over) != len(ratios):
        return None
    movers = under[below:] if len(under) > below else over[: below - len(under)]
    for role in movers:
        mirrored = 2 - ratios[role]
        result[role] = mirrored if mirrored > 0 else 1 / ratios[role]
    if len(set(result.values())) != len(result):
        return None
    return result


def _level3_decimals(style: NumberText) -> int:
    return max(style.decimals, 2 if style.percent else 0)


# ---------------------------------------------------------------------------------------------
# Planning one perturbation (no model involved) and checking a rewrite
# ---------------------------------------------------------------------------------------------


@dataclass
class Plan:
    """A perturbation whose numbers are settled; only the question text is still to be written."""

    record: PerturbationRecord
    old_spans: list[str]
    new_spans: list[str]
    kept_spans: list[str]
    prompt: str
    level3_answer_text: str = ""


def _rng(seed: int, question_id: str, level: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(question_id.encode()), level])


def _base_record(question: Question, level: int, extraction: FormulaExtraction | None) -> PerturbationRecord:
    record = PerturbationRecord(question_id=question.id, level=level, status="not_verifiable")
    if extraction is not None:
        record.parameters = [p.model_dump() for p in extraction.parameters]
        record.formula = extraction.formula
        record.asked_quantity = extraction.asked_quantity
        record.unit = extraction.unit
        record.original_values = {p.name: p.value for p in extraction.parameters}
    return record


def _finish(record: PerturbationRecord, status: Status, reason: str, check: str | None = None) -> PerturbationRecord:
    record.status = status
    record.reason = reason
    if check:
        record.trail.append(Check(check, status == "valid", reason))
    return record


def plan_perturbation(
    question: Question, verification: Verification, level: int, seed: int, record: PerturbationRecord
) -> Plan | PerturbationRecord:
    """Settle new values, the new answer and the choices; return a finished record if that is impossible."""
    assert verification.ok and verification.formula is not None
    rng = _rng(seed, question.id, level)
    record.trail.extend(verification.trail)
    record.original_answer_value = verification.original_answer_value
    infos = verification.parameters
    candidates = [name for name, info in infos.items() if name in verification.used and changeable(info, infos)]
    if level == 3:
        return _plan_unknown(question, verification, record, rng, candidates)
    if len(candidates) < level:
        names = ", ".join(candidates) or "none"
        return _finish(
            record,
            "not_perturbable",
            f"level {level} needs {level} changeable parameters; changeable: {names}",
            "changeable_parameters",
        )
    record.trail.append(Check("changeable_parameters", True, ", ".join(candidates)))

    options = verification.options
    correct = options[question.answer]
    gaps = [_relative_gap(options[d].number, correct.number) for d in question.distractors]
    needed = max(min(gaps), 0.01)
    original_answer = verification.original_answer_value
    assert original_answer is not None
    for _ in range(MAX_DRAWS):
        chosen = sorted(rng.choice(len(candidates), size=level, replace=False).tolist())
        names = [candidates[i] for i in chosen]
        new_numbers = {name: draw_number(infos[name], rng) for name in names}
        if any(number is None for number in new_numbers.values()):
            continue
        values = verification.values()
        for name, number in new_numbers.items():
            values[name] = number * infos[name].scale  # type: ignore[operator]
        try:
            for name, derived in verification.derived.items():
                values[name] = derived.evaluate(values)
            answer = verification.formula.evaluate(values)
        except FormulaError:
            continue
        if answer * original_answer <= 0 or _relative_gap(answer, original_answer) < needed:
            continue
        old_spans, new_spans = _changed_spans(verification, names, new_numbers, values)  # type: ignore[arg-type]
        # a new value that is already written in the question would make the text checks ambiguous
        if len(set(new_spans)) == len(new_spans) and not any(count_span(question.stem, s) for s in new_spans):
            break
    else:
        return _finish(
            record,
            "rejected",
            f"no draw in {MAX_DRAWS} moved the answer by the option gap ({needed:.1%}) with new values "
            "not already in the question",
            "answer_moved",
        )
    record.trail.append(Check("answer_moved", True, f"{original_answer:.6g} -> {answer:.6g} (needed {needed:.1%})"))
    record.changed = names
    record.new_values = values
    record.new_answer_value = answer
    try:
        record.choices, record.correct_letter = rebuild_choices(
            question, options, answer / verification.answer_scale, rng
        )
    except ValueError as error:
        return _finish(record, "rejected", str(error), "choices_rebuilt")
    record.trail.append(Check("choices_rebuilt", True, f"correct option {record.correct_letter}"))
    if numeric_key(record.choices, record.correct_letter) is None:
        return _finish(record, "rejected", f"rebuilt choices cannot be graded by number: {record.choices}", "gradeable")
    kept = [
        info.spec.span
        for name, info in infos.items()
        if info.text is not None and info.occurrences and info.spec.span not in old_spans
    ]
    changes = "\n".join(f"- {old!r} becomes {new!r}" for old, new in zip(old_spans, new_spans, strict=True))
    prompt = REWRITE_CHANGE_USER.format(stem=question.stem, changes=changes)
    return Plan(record, old_spans, new_spans, kept, prompt)


def _changed_spans(
    verification: Verification,
    names: Sequence[str],
    new_numbers: Mapping[str, float],
    values: Mapping[str, float],
) -> tuple[list[str], list[str]]:
    """Old and new text of every changed input, derived givens (a stated PV) included."""
    old_spans, new_spans = [], []
    for name in names:
        info = verification.parameters[name]
        assert info.text is not None
        old_spans.append(info.spec.span)
        new_spans.append(info.text.write(new_numbers[name]))
    for name in verification.derived:
        info = verification.parameters[name]
        if info.text is not None and info.occurrences:
            old_spans.append(info.spec.span)
            new_spans.append(info.text.write(values[name] / info.scale, info.text.decimals))
    return old_spans, new_spans


def _plan_unknown(
    question: Question,
    verification: Verification,
    record: PerturbationRecord,
    rng: np.random.Generator,
    candidates: list[str],
) -> Plan | PerturbationRecord:
    """Level 3: state the original answer as a given and ask for one of the inputs instead."""
    infos = verification.parameters
    targets = [name for name in candidates if infos[name].spec.kind in ("rate", "amount")]
    if not targets:
        return _finish(record, "not_perturbable", "no rate or amount to ask for instead", "changeable_parameters")
    record.trail.append(Check("changeable_parameters", True, ", ".join(targets)))
    unknown = targets[int(rng.integers(len(targets)))]
    info = infos[unknown]
    assert verification.formula is not None and info.text is not None
    values = verification.values()
    evaluate = _answer_function(verification)
    upper = 1.0 if info.spec.kind == "rate" and info.scale != 1.0 else None
    original_answer = verification.original_answer_value
    assert original_answer is not None
    try:
        solved = solve_for(evaluate, values, unknown, original_answer, upper)
    except FormulaError as error:
        return _finish(record, "not_verifiable", f"cannot solve for {unknown!r}: {error}", "round_trip")
    if _relative_gap(solved, values[unknown]) > ROUND_TRIP_TOL:
        return _finish(
            record,
            "not_verifiable",
            f"solving for {unknown!r} gives {solved:.10g}, not the original {values[unknown]:g}",
            "round_trip",
        )
    record.trail.append(Check("round_trip", True, f"{unknown} = {solved:.10g}"))
    correct = verification.options[question.answer]
    stated_answer = correct.number * verification.answer_scale
    try:
        from_stated = solve_for(evaluate, values, unknown, stated_answer, upper)
    except FormulaError as error:
        return _finish(record, "not_verifiable", f"cannot solve from the stated answer: {error}", "stated_answer")
    if _relative_gap(from_stated, values[unknown]) > 0.005:
        return _finish(
            record,
            "not_verifiable",
            f"the rounded answer {correct.core} implies {unknown} = {from_stated:.6g}, not {values[unknown]:g}",
            "stated_answer",
        )
    record.trail.append(Check("stated_answer", True, f"{correct.core} implies {unknown} = {from_stated:.6g}"))
    record.changed = [unknown]
    record.new_values = values
    record.new_answer_value = values[unknown]
    # The target's span style, with the original options' gaps: "7%" -> "7.00%", "6.93%", ...
    gap_options = dict(verification.options)
    try:
        record.choices, record.correct_letter = rebuild_choices(
            question, gap_options, info.text.number, rng, template=info.text
        )
    except ValueError as error:
        return _finish(record, "rejected", str(error), "choices_rebuilt")
    record.trail.append(Check("choices_rebuilt", True, f"correct option {record.correct_letter}"))
    if numeric_key(record.choices, record.correct_letter) is None:
        return _finish(record, "rejected", f"rebuilt choices cannot be graded by number: {record.choices}", "gradeable")
    kept = [
        other.spec.span
        for name, other in infos.items()
        if name != unknown and other.text is not None and other.occurrences and other.spec.span != info.spec.span
    ]
    answer_text = correct.core
    prompt = REWRITE_UNKNOWN_USER.format(
        stem=question.stem,
        answer_option=question.correct_text.rstrip(". "),
        answer=answer_text,
        target=info.spec.description or unknown,
        span=info.spec.span,
        kept=", ".join(kept) or "none",
    )
    return Plan(record, [info.spec.span], [answer_text], kept, prompt, level3_answer_text=answer_text)


def _answer_function(verification: Verification) -> Callable[[Mapping[str, float]], float]:
    """The answer as a function of the inputs, with derived inputs recomputed from the others."""
    assert verification.formula is not None
    formula, derived = verification.formula, verification.derived

    def evaluate(values: Mapping[str, float]) -> float:
        full = dict(values)
        for name, derived_formula in derived.items():
            full[name] = derived_formula.evaluate(full)
        return formula.evaluate(full)

    return evaluate


def check_rewrite(plan: Plan, text: str) -> list[Check]:
    """Every new value must appear in the text, no changed old value may remain, kept values stay."""
    checks: list[Check] = []
    if plan.record.level == 3:
        missing = [] if count_span(text, plan.level3_answer_text) else [plan.level3_answer_text]
        checks.append(Check("answer_stated", not missing, f"missing {missing[0]!r}" if missing else ""))
        leaked = [s for s in plan.old_spans if count_span(text, s)]
        checks.append(Check("unknown_removed", not leaked, f"still contains {leaked[0]!r}" if leaked else ""))
    else:
        missing = [s for s in plan.new_spans if not count_span(text, s)]
        checks.append(Check("new_values_present", not missing, f"missing {missing[0]!r}" if missing else ""))
        remaining = [s for s in plan.old_spans if count_span(text, s)]
        checks.append(
            Check("old_values_removed", not remaining, f"still contains {remaining[0]!r}" if remaining else "")
        )
    lost = [s for s in plan.kept_spans if not count_span(text, s)]
    checks.append(Check("other_values_kept", not lost, f"lost {lost[0]!r}" if lost else ""))
    return checks


def apply_rewrite(
    plan: Plan, question: Question, reply: Completion | QuestionRewrite | None, fallback: bool = True
) -> PerturbationRecord:
    """Accept the generator's rewrite if it passes the checks, else substitute spans (level 1/2) or reject."""
    record = plan.record
    rewrite, problem = _parse_reply(reply, QuestionRewrite)
    if rewrite is not None and rewrite.question.strip():
        checks = check_rewrite(plan, rewrite.question)
        record.trail.extend(Check(f"rewrite_{c.name}", c.passed, c.detail) for c in checks)
        failed = [c for c in checks if not c.passed]
        if not failed:
            record.question = rewrite.question.strip()
            record.rewrite_path = "generator"
            return _finish(record, "valid", "")
        problem = f"generator rewrite failed {failed[0].name}: {failed[0].detail}"
    else:
        problem = problem or "generator rewrite is empty"
        record.trail.append(Check("rewrite_reply", False, problem))
    if fallback and record.level in (1, 2):
        try:
            text = substitute_values(question.stem, plan.old_spans, plan.new_spans)
        except ValueError as error:
            record.trail.append(Check("substitution", False, str(error)))
            return _finish(record, "rejected", f"{problem}; substitution impossible: {error}")
        checks = check_rewrite(plan, text)
        record.trail.extend(Check(f"substitution_{c.name}", c.passed, c.detail) for c in checks)
        if all(c.passed for c in checks):
            record.question = text
            record.rewrite_path = "substitution"
            return _finish(record, "valid", "")
    return _finish(record, "rejected", problem)


def _parse_reply(reply: Completion | BaseModel | None, schema: type[BaseModel]) -> tuple[Any, str]:
    """A validated reply, or None and why not (a failed request, invalid JSON, a wrong shape)."""
    if reply is None:
        return None, "no generator reply"
    if isinstance(reply, schema):
        return reply, ""
    if isinstance(reply, BaseModel):
        return None, f"reply is a {type(reply).__name__}, expected {schema.__name__}"
    if not reply.ok:
        return None, f"generator request {reply.error_kind or 'failed'}: {reply.error}"
    try:
        if reply.parsed is not None:
            return schema.model_validate(reply.parsed), ""
        return schema.model_validate_json(reply.text), ""
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "reply"
        return None, f"generator reply does not fit {schema.__name__}: {where}: {first['msg']}"


# ---------------------------------------------------------------------------------------------
# Orchestration
# ---------------------------------------------------------------------------------------------


def extraction_messages(question: Question) -> list[dict[str, str]]:
    user = EXTRACTION_USER.format(mcq=question.mcq_text(), answer=question.answer, correct_text=question.correct_text)
    return [{"role": "system", "content": EXTRACTION_SYSTEM}, {"role": "user", "content": user}]


def rewrite_messages(plan: Plan) -> list[dict[str, str]]:
    return [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": plan.prompt}]


def perturb_question(
    question: Question,
    extraction: FormulaExtraction | Completion | None,
    levels: Sequence[int] = (1,),
    seed: int = 0,
    rel_tol: float = 0.005,
) -> list[PerturbationRecord | Plan]:
    """Everything before the rewrite, for one question: a finished record or a plan per level."""
    parsed, problem = _parse_reply(extraction, FormulaExtraction)
    results: list[PerturbationRecord | Plan] = []
    options = option_numbers(question)
    for level in levels:
        record = _base_record(question, level, parsed)
        if options.problem:
            results.append(_finish(record, "not_perturbable", options.problem, "option_numbers"))
            continue
        if parsed is None:
            results.append(_finish(record, "not_verifiable", problem, "extraction_reply"))
            continue
        try:  # arithmetic on model-supplied values must end in a record, never in a crash
            verification = verify_extraction(question, parsed, rel_tol)
            if not verification.ok:
                record.trail.extend(verification.trail)
                results.append(_finish(record, verification.status, verification.reason))  # type: ignore[arg-type]
                continue
            results.append(plan_perturbation(question, verification, level, seed, record))
        except (FormulaError, ArithmeticError, ValueError) as error:
            results.append(_finish(record, "not_verifiable", f"{type(error).__name__}: {error}", "arithmetic"))
    return results


def build_perturbations(
    questions: Sequence[Question],
    generator_client: Any,
    levels: Sequence[int] = (1,),
    seed: int = 0,
    max_concurrency: int = 8,
    rel_tol: float = 0.005,
    substitution_fallback: bool = True,
    params: Mapping[str, Any] | None = None,
) -> list[PerturbationRecord]:
    """Perturb every question at every level: one record per (question, level), in that order.

    Two batched generator calls: formula extraction for questions whose options carry numbers, then
    question rewrites for the settled plans. A failed or invalid reply becomes a `not_verifiable` or
    `rejected` record with the reason; nothing here raises on model output.
    """
    levels = tuple(levels)
    bad = [level for level in levels if level not in LEVELS]
    if bad or not levels:
        raise ValueError(f"levels={list(levels)!r}: each level must be one of 1, 2, 3")
    request_params = dict(params or {"temperature": 0.0})
    numeric = [q for q in questions if not option_numbers(q).problem]
    replies = generator_client.complete_many(
        [Request(extraction_messages(q), dict(request_params), FormulaExtraction) for q in numeric],
        max_concurrency=max_concurrency,
        desc="Perturbation formulas",
    )
    by_id = dict(zip((q.id for q in numeric), replies, strict=True))
    staged: list[tuple[Question, PerturbationRecord | Plan]] = []
    for question in questions:
        for item in perturb_question(question, by_id.get(question.id), levels, seed, rel_tol):
            staged.append((question, item))
    plans = [item for _, item in staged if isinstance(item, Plan)]
    rewrites = (
        generator_client.complete_many(
            [Request(rewrite_messages(plan), dict(request_params), QuestionRewrite) for plan in plans],
            max_concurrency=max_concurrency,
            desc="Perturbation rewrites",
        )
        if plans
        else []
    )
    rewrite_of = {id(plan): reply for plan, reply in zip(plans, rewrites, strict=True)}
    records = []
    for question, item in staged:
        if isinstance(item, Plan):
            records.append(apply_rewrite(item, question, rewrite_of[id(item)], substitution_fallback))
        else:
            records.append(item)
    return records

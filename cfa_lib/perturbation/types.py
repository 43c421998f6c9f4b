"""The perturbation package's data: what the generator replies, what a check leaves, what a step hands on.

Every step module imports its types from here, so a reader finds a type without knowing which step
made it. Records are plain data (JSON via `to_dict`/`from_dict`); the reply schemas have no defaults, so
OpenAI's strict structured-output mode accepts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from pydantic import BaseModel, Field

from cfa_lib.data import Question
from cfa_lib.perturbation.formula import Formula
from cfa_lib.perturbation.number_text import NumberText

# The generator's replies

Kind = Literal["rate", "count", "amount", "other"]


class ExtractedParameter(BaseModel):
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


# Checks and records

Status = Literal["valid", "not_perturbable", "not_verifiable", "rejected"]
STATUSES: tuple[str, ...] = ("valid", "not_perturbable", "not_verifiable", "rejected")


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
    source: Literal["template", "generator"] | None = None  # who described the computation (None: old files)
    flipped: bool | None = None  # decision questions: the new key differs from the original key
    # a valid item a memorizer fails: its decision flipped, or a memorized answer lies outside its numeric key's
    # acceptance window (`separation.separates`); None: not valid, graded by letter only, or an older file
    separating: bool | None = None

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


# What check 1 hands on

@dataclass
class OptionNumbers:
    """The number in every option that has one (a distractor may have none), or why the question cannot be
    perturbed numerically."""

    numbers: dict[str, NumberText]
    problem: str = ""
    tuples: dict[str, list[NumberText]] = field(default_factory=dict)  # options carrying several numbers


@dataclass(frozen=True)
class AlsoSpan:
    """Another place the stem writes a parameter's quantity ("P(3 ≤" beside "equal to 3")."""

    text: str  # as written in the stem
    number: NumberText  # the number in `text` that states the value (lead and suffix relative to `text`)
    scale: float  # value = number * scale

    def write(self, value: float, decimals: int | None = None) -> str:
        """`text` with its number replaced by `value`, in the number's own style."""
        return self.number.write(value / self.scale, decimals)


@dataclass
class ParameterInfo:
    spec: ExtractedParameter
    text: NumberText | None  # the single number in the span, None for word spans ("quarterly")
    scale: float  # value = number as written * scale ("7%" -> 0.01)
    occurrences: int  # in the original stem
    also: list[AlsoSpan] = field(default_factory=list)  # templates: the same quantity written elsewhere
    shared: bool = False  # a number of this parameter is also another parameter's: it cannot move alone

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
    # a template's `key_rounded`: the key is the formula rounded to the key option's written decimals, and the
    # relative gap that rounding left in the original (a draw's written key may be as far from its value)
    key_rounded: bool = False
    key_rounding: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def values(self) -> dict[str, float]:
        return {name: info.spec.value for name, info in self.parameters.items()}

    def with_derived(self, values: Mapping[str, float]) -> dict[str, float]:
        """`values` with every derived given recomputed from the others (a stated PV follows a new rate)."""
        full = dict(values)
        for name, derived_formula in self.derived.items():
            full[name] = derived_formula.evaluate(full)
        return full

    def answer(self, values: Mapping[str, float]) -> float:
        """The formula's answer for these inputs, derived givens recomputed first."""
        assert self.formula is not None
        return self.formula.evaluate(self.with_derived(values))


# A settled perturbation

@dataclass
class Plan:
    """A perturbation whose numbers are settled; only the question text is still to be written."""

    record: PerturbationRecord
    old_spans: list[str]
    new_spans: list[str]
    kept_spans: list[str]
    prompt: str
    level3_answer_text: str = ""



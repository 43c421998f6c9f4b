"""The shape of a hand-written template (datasets/templates/README.md) and the strict reading of its file.

Only the form is checked here (types, required fields, which fields go together); whether a template
holds for its question is `templates.verify_template`'s job. Errors name the file, line, question and field.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cfa_lib.data import DATASET_NAMES
from cfa_lib.jsonl import json_lines
from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.perturbation.types import ExtractedParameter, FormulaExtraction

TEMPLATES_DIR_ENV = "CFA_TEMPLATES_DIR"
Unit = Literal["$", "€", "£", "¥", "%", "x", "years", ""]
Bound = float | None


class TemplateError(ValueError):
    """A templates file that cannot be read, or a line that does not fit the contract's shape."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TemplateParameter(_Strict):
    """The shape of `ExtractedParameter`, with NaN, infinities and booleans refused.

    `also`: the other places the stem writes the same quantity ("P(3 ≤" beside "equal to 3"), each a text
    holding one number that states the value; every one is rewritten with the span on every draw.
    `draw`: a decision template's interval for the drawn number, as the span writes it (easy_29: [1, 9] for "6%"),
    when the key flips only beyond the usual ±10–50 % moves; the draw is uniform in it, rounded as written."""

    name: str
    value: float
    kind: Literal["rate", "count", "amount", "other"]
    span: str
    description: str
    derived_from: str = ""
    also: list[str] = Field(default_factory=list)
    draw: tuple[float, float] | None = None

    @field_validator("draw")
    @classmethod
    def _interval(cls, draw: tuple[float, float] | None) -> tuple[float, float] | None:
        if draw is not None and not (math.isfinite(draw[0]) and math.isfinite(draw[1]) and draw[0] < draw[1]):
            raise ValueError(f"must be [low, high] with low < high, got {list(draw)!r}")
        return draw

    @field_validator("value", mode="before")
    @classmethod
    def _finite_number(cls, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"must be finite, got {value!r}")
        return value

    def as_extracted(self) -> ExtractedParameter:
        return ExtractedParameter(**self.model_dump(exclude={"also", "draw"}))


class Fixed(_Strict):
    """Text of the stem, an option or a level-3 edit whose numbers stay as written, and why no moving input
    changes them (a date, a label, another question's data, a literal of the formula)."""

    text: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class Condition(_Strict):
    """Where the formula holds: `left < right` (or >, <=, >=) over the parameters; draws that break it are
    drawn again ("s > 27.5": the $30 strike stays the one nearest the share price)."""

    condition: str = Field(min_length=3)
    reason: str = Field(min_length=1)


class Edit(_Strict):
    old: str = Field(min_length=1)
    new: str


class Level3(_Strict):
    unknown: str
    edits: list[Edit] = Field(min_length=1)


class Decision(_Strict):
    """How the computed quantity picks the option (kind "decision")."""

    type: Literal["threshold", "argmax", "argmin"]
    options: dict[str, tuple[Bound, Bound] | None] | None = None  # threshold: [low, high) per letter
    formulas: dict[str, str] | None = None  # argmax/argmin: one formula per letter
    # why no draw inside the validity domain changes the key (easy_234: the drawn cost scales both methods); the
    # census reports it, and the flip rate counts the template's items apart
    cannot_flip: str = ""

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
    # letter -> a named mistake's formula, giving that distractor as the formula gives the key (easy_577 C: the
    # annual-compounding yield, the wrong periodicity): levels 1/2 write the mistake on the new numbers
    distractor_formulas: dict[str, str] | None = None
    # the key is the formula rounded to the key option's written decimals, beyond the 0.5 % check (easy_960's
    # "5.8%" for 5.830 %): the key is checked, rebuilt and re-derived at that precision
    key_rounded: bool = False
    fixed: list[Fixed] = Field(default_factory=list)  # every other number of the stem and options, with why
    domain: list[Condition] = Field(default_factory=list)  # where the formula holds

    @field_validator("fixed", "domain", mode="after")
    @classmethod
    def _reasons_stand_alone(cls, entries: list) -> list:
        """A reason written "as above" takes the previous entry's words: a condition or a number is reported
        alone (a rejected draw, `verify`), where "s < 515 (as above)" would point at nothing."""
        resolved = []
        for entry in entries:
            if resolved and entry.reason.strip().lower() == "as above":
                entry = entry.model_copy(update={"reason": resolved[-1].reason})
            resolved.append(entry)
        return resolved
    note: str = ""

    @model_validator(mode="after")
    def _kind_fits(self) -> Template:
        if any(p.draw is not None for p in self.parameters) and self.kind != "decision":
            raise ValueError("a parameter's 'draw' interval is for decision templates")
        if self.formulas is not None:
            if self.kind != "value" or self.formula.strip():
                raise ValueError("'formulas' (one per number of each option) is for a value template with formula \"\"")
            if len(self.formulas) < 2 or not all(text.strip() for text in self.formulas):
                raise ValueError("'formulas' needs at least two non-empty formulas (one per number of each option)")
            if self.level3 is not None or self.answer_range is not None or self.distractor_formulas:
                raise ValueError("'level3', 'answer_range' and 'distractor_formulas' are for templates whose options "
                                 "carry one number")
        if self.key_rounded and (self.kind != "value" or self.formulas is not None or self.level3 is not None):
            raise ValueError("'key_rounded' is for value templates with one formula and no level 3 (a rounded key "
                             "stated in the stem cannot give back its unknown within 0.5 %)")
        if self.kind == "value":
            if not self.formula.strip() and self.formulas is None:
                raise ValueError("a value template needs a formula")
            if self.decision is not None:
                raise ValueError("a value template has no 'decision'")
        elif self.distractor_formulas:
            raise ValueError("'distractor_formulas' are for value templates")
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
    for where, raw in json_lines(path, TemplateError, parse_constant=_refuse_constant):
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

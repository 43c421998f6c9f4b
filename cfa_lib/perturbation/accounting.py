"""Every number of a templated question accounted for: an input, a derived value, the answer, or fixed context.

A perturbation rewrites only what the template names, so a number it does not name stays as written. That
is right for a date or another question's data, and wrong for a second copy of an input ("P(3 ≤ X < 6)"
beside "greater than or equal to 3") or a stated result of the inputs (a PV, a total). The accounting
reads every number of the stem, its options and its level-3 stem, in order, and says what each one is:

* ``input``: a parameter's span or one of its `also` texts (every copy of the quantity, in any form);
* ``derived``: the span of a parameter with `derived_from`, rewritten from its formula on every draw;
* ``answer``: an option number the perturbation rebuilds (value templates), or the level-3 stated answer;
* ``fixed``: inside a `fixed` text, whose reason says why no moving input changes it.

A number none of these covers is a problem `verify` reports by name. The slots, in reading order, are what
`rederive` aligns a perturbed text with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cfa_lib.data import Question
from cfa_lib.perturbation.formula import Formula
from cfa_lib.perturbation.number_text import NumberText, find_number_words, find_numbers, span_matches
from cfa_lib.perturbation.schema import Template
from cfa_lib.perturbation.types import ParameterInfo
from cfa_lib.perturbation.values import changeable

Role = Literal["input", "derived", "answer", "fixed"]
ANSWER_MARK = "{answer}"  # where a level-3 edit states the answer


@dataclass(frozen=True)
class Slot:
    """One number of a text, where it is and what it is."""

    start: int
    role: Role
    names: tuple[str, ...] = ()  # the parameters it states (input, derived)
    number: NumberText | None = None  # as written in the original text (None: the level-3 stated answer)
    scale: float = 1.0  # value = number * scale (input, derived)


@dataclass
class Accounting:
    """The slots of the stem, of each option and of the level-3 stem, and what could not be accounted for."""

    stem: list[Slot] = field(default_factory=list)
    options: dict[str, list[Slot]] = field(default_factory=dict)
    level3: list[Slot] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    shared: set[str] = field(default_factory=set)  # parameters stating a number another parameter states


def written_numbers(text: str) -> list[NumberText]:
    """Every number of `text`, digits and number words ("five"), in reading order."""
    return sorted(find_numbers(text) + find_number_words(text), key=lambda number: len(number.lead))


def _context(text: str, number: NumberText) -> str:
    start = len(number.lead)
    end = len(text) - len(number.suffix)
    return " ".join(f"…{text[max(0, start - 30):start]}[{text[start:end]}]{text[end:end + 20]}…".split())


def _claims(text: str, template: Template, infos: Mapping[str, ParameterInfo]) -> tuple[dict[int, Slot], list[str]]:
    """The numbers of `text` that parameters and fixed texts cover, by start; numbers no parameter claims
    inside a fixed text are fixed. Two parameters may state one number (they are then `shared`)."""
    claimed: dict[int, Slot] = {}
    problems: list[str] = []
    for name, info in infos.items():
        role: Role = "derived" if info.spec.derived_from.strip() else "input"
        forms = [(info.spec.span, info.text, info.scale)] if info.text is not None else []
        forms += [(also.text, also.number, also.scale) for also in info.also]
        for span, number, scale in forms:
            for match in span_matches(text, span):
                start = match.start() + len(number.lead)
                slot = claimed.get(start)
                names = (*slot.names, name) if slot is not None and name not in slot.names else (name,)
                if slot is not None and slot.role != role:
                    problems.append(f"number {number.core!r} is both {slot.role} {slot.names[0]!r} and {role} {name!r}")
                claimed[start] = Slot(start, role, names, number, scale)
    for fixed in template.fixed:
        for match in span_matches(text, fixed.text):
            for number in written_numbers(fixed.text):
                start = match.start() + len(number.lead)
                claimed.setdefault(start, Slot(start, "fixed", (), number))
    return claimed, problems


def _slots(text: str, where: str, template: Template, infos: Mapping[str, ParameterInfo],
           rebuilt: bool = False) -> tuple[list[Slot], list[str]]:
    """The slots of `text` in reading order; a number nothing claims is a problem naming it. With `rebuilt`
    (a value template's option) every digit is the answer; ANSWER_MARK (a level-3 stem) is the answer."""
    claimed, problems = _claims(text, template, infos)
    answers = {len(number.lead) for number in find_numbers(text)} if rebuilt else set()
    slots = [Slot(match.start(), "answer") for match in span_matches(text, ANSWER_MARK)]
    for number in written_numbers(text):
        start = len(number.lead)
        slot = claimed.pop(start, None)
        slot = Slot(start, "answer", (), number) if start in answers else slot
        if slot is None:
            problems.append(f"number {number.core!r} in {where} ({_context(text, number)}) is not accounted for: "
                            "bind it to an input ('also'), derive it, or fix it with a reason")
        else:
            slots.append(slot)
    problems += [f"the number of {slot.names[0]!r} ({slot.number.core if slot.number else ''!r}) in {where} is not "
                 "read as a number there (glued to a word?)" for slot in claimed.values() if slot.names]
    return sorted(slots, key=lambda slot: slot.start), problems


def account(question: Question, template: Template, infos: Mapping[str, ParameterInfo],
            level3_text: str | None) -> Accounting:
    """The accounting of a template's question (`level3_text`: the level-3 stem with ANSWER_MARK, or None)."""
    result = Accounting()
    result.stem, result.problems = _slots(question.stem, "the stem", template, infos)
    if level3_text is not None:
        result.level3, problems = _slots(level3_text, "the level-3 stem", template, infos)
        result.problems += problems
    rebuilt = template.kind == "value"  # the perturbation rewrites every digit of a numeric option
    for letter, text in question.choices.items():
        result.options[letter], problems = _slots(text, f"option {letter}", template, infos, rebuilt)
        result.problems += problems
    every = [slot for slots in (result.stem, result.level3, *result.options.values()) for slot in slots]
    result.shared = {name for slot in every if len(slot.names) > 1 for name in slot.names}
    for letter, slots in result.options.items():
        moving = [name for slot in slots for name in slot.names
                  if changeable(infos[name], infos) and name not in result.shared]
        if moving:
            result.problems.append(f"option {letter} ({question.choices[letter]!r}) states input {moving[0]!r}, "
                                   "which moves, and options are kept: rebuild them or hold the input fixed")
    result.problems += _unused_fixed(question, template, level3_text)
    return result


def _unused_fixed(question: Question, template: Template, level3_text: str | None) -> list[str]:
    texts = [question.stem, *question.choices.values(), level3_text or ""]
    problems = []
    for fixed in template.fixed:
        if not written_numbers(fixed.text):
            problems.append(f"fixed text {fixed.text!r} holds no number")
        elif not any(span_matches(text, fixed.text) for text in texts):
            problems.append(f"fixed text {fixed.text!r} is in neither the stem, the options nor the level-3 stem")
    return problems


def literal_problems(question: Question, formulas: Mapping[str, Formula]) -> list[str]:
    """A formula may not hold a literal that equals a number of an option (as written or at its scale):
    options kept verbatim while the key is recomputed from constants copied out of them ("abs(ie - dip -
    22)") stay wrong after every draw. 0 and 1 (as in "1 + r") are structure, not copies. `formulas` by
    where they are written ("formula", "the formula of option A")."""
    problems = []
    for where, formula in formulas.items():
        for literal in sorted(set(formula.literals) - {0.0, 1.0}):
            copied = [letter for letter, text in question.choices.items() for number in find_numbers(text)
                      if any(abs(literal - abs(number.number) * scale) <= 1e-9 * literal for scale in number.scales)]
            if copied:
                problems.append(f"{where} holds the literal {literal:g}, a number of option {copied[0]} "
                                f"({question.choices[copied[0]]!r}): rebuild the options from formulas instead")
    return problems


def level3_leaks(slots: Sequence[Slot], unknown: str) -> list[str]:
    """Numbers of the level-3 stem that still state the unknown (its span or an `also` copy)."""
    return [f"the level-3 stem still states the unknown {unknown!r} ({slot.number.core!r})"
            for slot in slots if unknown in slot.names and slot.number is not None]

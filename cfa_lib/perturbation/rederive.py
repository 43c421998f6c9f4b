"""A second path to every emitted item's key: re-read the perturbed text, not the draw that produced it.

The draw decides new values and writes them; this module trusts none of that. It reads every number of the
perturbed stem in order and aligns it with the template's accounting (`accounting.Slot`): fixed numbers
must be as written, every copy of an input must state the same value and that value must be the draw's,
every derived value must be its formula over the inputs as read, and the values must lie in the validity
domain. It then recomputes the key from the text's own numbers and requires exactly one option within
0.5 % of it (a decision: the rule picks the keyed option with its margin; level 3: the stated answer
solved for the unknown). Any disagreement is the reason the item is rejected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.accounting import Slot, written_numbers
from cfa_lib.perturbation.formula import FormulaError
from cfa_lib.perturbation.number_text import NumberText, find_numbers
from cfa_lib.perturbation.schema import Template
from cfa_lib.perturbation.template_check import REL_TOL, TemplateCheck
from cfa_lib.perturbation.template_rules import decide
from cfa_lib.perturbation.types import PerturbationRecord
from cfa_lib.perturbation.values import solve_for
from cfa_lib.perturbation.verify import at_written_precision

SAME = 1e-9  # two copies of one input, or an input and its draw, agree to this relative difference


class _Disagrees(Exception):
    """The reason a perturbed item's text and its key do not agree."""


def rederive(question: Question, template: Template, check: TemplateCheck, record: PerturbationRecord
             ) -> tuple[str, str]:
    """(reason, detail): why the perturbed item's text does not support its key ("" when it does), and what
    was re-derived (for the trail)."""
    try:
        return "", _rederive(question, template, check, record)
    except _Disagrees as why:
        return str(why), ""
    except (FormulaError, ArithmeticError, ValueError) as error:
        return f"re-derivation failed: {type(error).__name__}: {error}", ""


def _rederive(question: Question, template: Template, check: TemplateCheck, record: PerturbationRecord) -> str:
    verification, accounting = check.verification, check.accounting
    assert verification is not None and accounting is not None and record.question is not None
    level3 = record.level == 3
    slots = accounting.level3 if level3 else accounting.stem
    values, written, stated = _read(slots, written_numbers(record.question), verification.values())
    for name in written:  # the level-3 unknown is asked, not written: its draw is checked by the solve
        value, drawn = values[name], record.new_values.get(name)
        if name not in verification.derived and drawn is not None and relative_difference(value, drawn) > SAME:
            raise _Disagrees(f"the text states {name!r} = {value:.6g}, the draw {drawn:.6g}")
    if level3:  # derived givens may follow the asked unknown: checked once it is solved
        assert template.level3 is not None and stated is not None
        detail = _level3_key(check, record, values, stated * verification.answer_scale, template.level3.unknown)
        _check_derived(check, values, written)
        return detail
    _check_derived(check, values, written)
    broken = check.domain.broken(values)
    if broken:
        raise _Disagrees(f"the values stated leave the validity domain: {broken}")
    if template.kind == "decision":
        return _decision_key(question, template, check, record, values)
    if template.formulas is not None:
        keys = [formula.evaluate(values) for formula in check.position_formulas]
        scales = check.answer_scales
    else:
        assert verification.formula is not None
        keys, scales = [verification.formula.evaluate(values)], [verification.answer_scale]
    _one_option(record, keys, scales, verification.key_rounded)
    return f"{len(slots)} numbers read; key {record.correct_letter} = " + ", ".join(f"{k:.6g}" for k in keys)


def _read(slots: Sequence[Slot], numbers: Sequence[NumberText], defaults: Mapping[str, float]
          ) -> tuple[dict[str, float], dict[str, tuple[NumberText, float]], float | None]:
    """Every parameter's value as the text states it (the template's value where it is not written), each
    parameter's number as written with its scale, and the stated answer of a level-3 stem; fixed numbers must
    be as written, and every copy of a quantity must state one value."""
    if len(numbers) != len(slots):
        raise _Disagrees(f"the perturbed stem has {len(numbers)} numbers where the template accounts for {len(slots)}")
    values = dict(defaults)
    written: dict[str, tuple[NumberText, float]] = {}
    stated = None
    for slot, number in zip(slots, numbers, strict=True):
        if slot.role == "answer":
            stated = number.number
        elif slot.role == "fixed":
            assert slot.number is not None
            if number.core != slot.number.core:
                raise _Disagrees(f"fixed number {slot.number.core!r} now reads {number.core!r}")
        for name in slot.names:
            value = number.number * slot.scale
            if name in written and relative_difference(value, values[name]) > SAME:
                first = written[name][0].core
                raise _Disagrees(f"{name!r} is written {first!r} and {number.core!r}: one quantity, two values")
            values[name], written[name] = value, (number, slot.scale)
    return values, written, stated


def _check_derived(check: TemplateCheck, values: Mapping[str, float],
                   written: Mapping[str, tuple[NumberText, float]]) -> None:
    """Every derived value as written equals its formula over the inputs as read, to its written precision."""
    verification = check.verification
    assert verification is not None
    for name, formula in verification.derived.items():
        if name not in written:
            continue
        number, scale = written[name]
        expected = formula.evaluate(values) / scale
        if abs(number.number - expected) > 0.5 * 10.0**-number.decimals + SAME * abs(expected):
            raise _Disagrees(f"derived {name!r} is written {number.core!r} but {formula.text} gives {expected:.6g}")


def _one_option(record: PerturbationRecord, keys: Sequence[float], scales: Sequence[float],
                key_rounded: bool = False) -> None:
    """Exactly the keyed option states every re-derived number within REL_TOL, or, for a template whose key is
    rounded (`key_rounded`), the re-derived number rounded to the option's written decimals ("0.34" for
    0.33696); an option that matches either way counts, so a distractor as close as the key refuses the item."""
    matching = []
    for letter, text in record.choices.items():
        numbers = find_numbers(text)
        if numbers and len(numbers) != len(keys):
            raise _Disagrees(f"option {letter} ({text!r}) carries {len(numbers)} numbers, not {len(keys)}")
        if numbers and all(relative_difference(n.number * s, k) <= REL_TOL
                           or (key_rounded and at_written_precision(k, n, s))
                           for n, s, k in zip(numbers, scales, keys, strict=True)):
            matching.append(letter)
    if matching != [record.correct_letter]:
        shown = ", ".join(f"{k:.6g}" for k in keys)
        how = f"within {REL_TOL:.1%} or at their written precision" if key_rounded else f"within {REL_TOL:.1%}"
        raise _Disagrees(f"re-derived key {shown}: options {how} are {', '.join(matching) or 'none'}, "
                         f"not exactly {record.correct_letter}")


def _decision_key(question: Question, template: Template, check: TemplateCheck, record: PerturbationRecord,
                  values: Mapping[str, float]) -> str:
    if record.choices != question.choices:
        raise _Disagrees("a decision item must keep its options as written")
    key, value, margin = decide(template, check, values)
    if key != record.correct_letter or margin < REL_TOL:
        raise _Disagrees(f"re-derived decision picks {key} ({value:.6g}, margin {margin:.1%}), "
                         f"the item keys {record.correct_letter}")
    return f"decision re-derived: {value:.6g} picks {key} (margin {margin:.1%})"


def _level3_key(check: TemplateCheck, record: PerturbationRecord, values: dict[str, float], stated: float,
                unknown: str) -> str:
    """Level 3: the stated answer is the answer of the drawn values; solved for the unknown it gives the keyed
    option."""
    verification = check.verification
    assert verification is not None
    drawn_answer = verification.answer(record.new_values)
    if relative_difference(stated, drawn_answer) > REL_TOL:
        raise _Disagrees(f"the stated answer {stated:.6g} is not the answer {drawn_answer:.6g} of the drawn values")
    info = verification.parameters[unknown]
    upper = 1.0 if info.spec.kind == "rate" and info.scale != 1.0 else None
    drawn = record.new_answer_value
    if drawn is not None:  # where to start looking; the solve itself is checked against the stated answer
        values[unknown] = drawn
    solved = solve_for(verification.answer, values, unknown, stated, upper)
    if drawn is None or relative_difference(solved, drawn) > REL_TOL:
        raise _Disagrees(f"the stated answer solves to {unknown} = {solved:.6g}, the item asks for {drawn}")
    values[unknown] = solved
    broken = check.domain.broken(verification.with_derived(values))
    if broken:
        raise _Disagrees(f"the values stated leave the validity domain: {broken}")
    _one_option(record, [solved], [info.scale])
    return f"level 3 re-derived: {unknown} = {solved:.6g} from the stated {stated:.6g}"

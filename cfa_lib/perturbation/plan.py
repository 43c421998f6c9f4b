"""Planning one perturbation of a verified question: new values, the new answer and the new choices.

No model is involved: levels 1 and 2 change one or two inputs and recompute the answer with the
verified formula; level 3 states the original answer as a given and asks for one of the inputs, found
by solving the formula. What is left is a `Plan`: the prompt that asks the generator to rewrite the
question text, and the spans its rewrite will be checked against.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cfa_lib.answers import numeric_key
from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.choices import Inside, rebuild_choices, rebuild_tuple_choices
from cfa_lib.perturbation.domain import Domain, never_inside
from cfa_lib.perturbation.formula import Formula, FormulaError
from cfa_lib.perturbation.number_text import NumberText, count_span, find_numbers
from cfa_lib.perturbation.records import finish
from cfa_lib.perturbation.template_check import REL_TOL, TemplateCheck
from cfa_lib.perturbation.types import Check, PerturbationRecord, Plan, Verification
from cfa_lib.perturbation.values import changeable, draw_number, solve_for
from cfa_lib.prompts import PERTURB_REWRITE_CHANGE_USER, PERTURB_REWRITE_UNKNOWN_USER

MAX_DRAWS = 60
MAX_ANSWER_FACTOR = 5.0  # a drawn answer stays within 5 times the original, either way
ROUND_TRIP_TOL = 1e-6
STATED_ANSWER_TOL = 0.005  # level 3: the rounded option must still imply the original input
KEY_WINDOW = 0.02  # the grader's tolerance: a named mistake this close to the key would be graded as the key


def _rng(seed: int, question_id: str, level: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(question_id.encode()), level])


def plan_perturbation(
    question: Question,
    verification: Verification,
    level: int,
    seed: int,
    record: PerturbationRecord,
    answer_range: tuple[float | None, float | None] | None = None,
    domain: Domain | None = None,
    mistakes: Mapping[str, Formula] | None = None,
) -> Plan | PerturbationRecord:
    """Settle new values, the new answer and the choices; return a finished record if that is impossible.

    With `answer_range` (a probability's [0, 1]), every rebuilt option lies in the range (`in_range`: a
    distractor that would leave it, "113.8%" for a probability, is drawn inside); a draw outside `domain` (a
    template's validity domain) is drawn again. `mistakes`: a distractor's named mistake (letter -> formula),
    written on the new numbers; a draw that puts one within KEY_WINDOW of the key, or on the other sign, is drawn
    again."""
    assert verification.ok and verification.formula is not None
    rng = _rng(seed, question.id, level)
    record.trail.extend(verification.trail)
    record.original_answer_value = verification.original_answer_value
    if level == 3:
        return _plan_unknown(question, verification, record, rng, changeable_inputs(verification))
    options = verification.options
    correct = options[question.answer]
    needed = _needed_move([options[d].number for d in question.distractors if d in options], correct.number)
    original_answer = verification.original_answer_value
    assert original_answer is not None

    letters = list(mistakes or {})
    built: list[tuple[dict[str, str], str]] = []  # the choices of the last acceptable draw
    refused: list[str] = []  # draws whose options no placement could build (`rebuild_choices`)

    def acceptable(answers: list[float]) -> bool:
        """The answer moved, fits the key's precision, the named mistakes stay clear of it, and the options can be
        built around it (a draw whose options would give the key away is drawn again, like any failed draw)."""
        answer = answers[0]
        if not (_moved_enough(answer, original_answer, needed)
                and _fits_key_precision(correct, answer / verification.answer_scale, verification.key_rounding)
                and all(m * answer > 0 and relative_difference(m, answer) > KEY_WINDOW for m in answers[1:])):
            return False
        pinned = dict(zip(letters, (a / verification.answer_scale for a in answers[1:]), strict=True))
        try:
            built[:] = [rebuild_choices(question, options, answer / verification.answer_scale, rng, None, pinned,
                                        in_range(answer_range, verification.answer_scale), correct.number,
                                        verification.key_rounded)]
        except ValueError as error:
            refused.append(str(error))
            return False
        return True

    formulas = [verification.formula, *(mistakes or {}).values()]
    draw = _draw(question, verification, formulas, level, rng, record, acceptable, domain)
    if isinstance(draw, PerturbationRecord):
        return draw
    if draw is None:
        if refused:
            return finish(record, "rejected", f"no draw in {MAX_DRAWS} gave options that keep every rule; last: "
                          f"{refused[-1]}", "choices_rebuilt")
        return finish(record, "rejected", f"no draw in {MAX_DRAWS} moved the answer by the option gap ({needed:.1%}) "
                      "with new values not already in the question", "answer_moved")
    answer = draw.answers[0]
    record.trail.append(Check("answer_moved", True, f"{original_answer:.6g} -> {answer:.6g} (needed {needed:.1%})"))
    record.new_answer_value = answer
    record.choices, record.correct_letter = built[0]
    record.trail.append(Check("choices_rebuilt", True, f"correct option {record.correct_letter}; "
                              f"{len(refused)} draws refused: no options kept every rule"))
    if numeric_key(record.choices, record.correct_letter) is None:
        return finish(record, "rejected", f"rebuilt choices cannot be graded by number: {record.choices}", "gradeable")
    return _rewrite_plan(question, verification, record, draw)


def plan_tuple_perturbation(
    question: Question, check: TemplateCheck, level: int, seed: int, record: PerturbationRecord
) -> Plan | PerturbationRecord:
    """Levels 1 and 2 for a template whose options carry several numbers (one formula per position).

    Inputs are drawn as in `plan_perturbation`; every position's number must keep its sign, move by at
    least that position's smallest option gap (at least 1 %) and fit the key's written decimals; the
    choices are rebuilt position by position (`rebuild_tuple_choices`). `record.new_answer_value` is the
    first position's number; the trail's answer_moved check names them all."""
    verification = check.verification
    assert check.ok and verification is not None and check.position_formulas
    rng = _rng(seed, question.id, level)
    record.original_answer_value = check.original_values[0]
    options = check.option_tuples
    correct = options[question.answer]
    positions = range(len(correct))
    needed = [_needed_move([options[d][i].number for d in question.distractors if d in options], correct[i].number)
              for i in positions]
    originals = check.original_values

    def acceptable(answers: list[float]) -> bool:
        return all(_moved_enough(answers[i], originals[i], needed[i])
                   and _fits_key_precision(correct[i], answers[i] / check.answer_scales[i]) for i in positions)

    draw = _draw(question, verification, check.position_formulas, level, rng, record, acceptable, check.domain)
    if isinstance(draw, PerturbationRecord):
        return draw
    if draw is None:
        gaps = ", ".join(f"{n:.1%}" for n in needed)
        return finish(record, "rejected", f"no draw in {MAX_DRAWS} moved every number by its option gap ({gaps}) "
                      "with new values not already in the question", "answer_moved")
    moved = ", ".join(f"{o:.6g} -> {a:.6g} (needed {n:.1%})"
                      for o, a, n in zip(originals, draw.answers, needed, strict=True))
    record.trail.append(Check("answer_moved", True, moved))
    record.new_answer_value = draw.answers[0]
    written = [draw.answers[i] / check.answer_scales[i] for i in positions]
    try:
        record.choices, record.correct_letter = rebuild_tuple_choices(question, options, written, rng)
    except ValueError as error:
        return finish(record, "rejected", str(error), "choices_rebuilt")
    # no `numeric_key` gradeability check (as `_rebuild_choices_into` makes for one number per option): options
    # carrying several numbers are graded by letter, as the original question is
    record.trail.append(Check("choices_rebuilt", True, f"correct option {record.correct_letter}"))
    return _rewrite_plan(question, verification, record, draw)


def changeable_inputs(verification: Verification) -> list[str]:
    """The inputs a perturbation may move: used by the formula and `changeable` (one number of its own)."""
    infos = verification.parameters
    return [name for name, info in infos.items() if name in verification.used and changeable(info, infos)]


def too_few_inputs(record: PerturbationRecord, level: int, candidates: Sequence[str]) -> PerturbationRecord | None:
    """The record finished as not perturbable when fewer than `level` inputs can change, else None."""
    if len(candidates) >= level:
        return None
    names = ", ".join(candidates) or "none"
    return finish(record, "not_perturbable", f"level {level} needs {level} changeable parameters; changeable: {names}",
                  "changeable_parameters")


@dataclass
class _Draw:
    """New values of the drawn inputs, the answers they give, and the spans they change."""

    answers: list[float]
    old_spans: list[str]
    new_spans: list[str]


def _needed_move(distractors: Sequence[float], correct: float) -> float:
    """How far a new answer must move: the smallest relative gap between the key and a distractor, at least
    1 %, so the old answer is no longer right."""
    return max(min(relative_difference(d, correct) for d in distractors), 0.01)


def _moved_enough(answer: float, original: float, needed: float) -> bool:
    """Moved by the option gap, kept its sign, and stayed within MAX_ANSWER_FACTOR of the original: an answer
    that is a small difference of two inputs (a CD's yield: redemption over price) would otherwise become a
    figure no exam prints (an 80 % yield on a 350-day CD)."""
    return (answer * original > 0 and relative_difference(answer, original) >= needed
            and 1 / MAX_ANSWER_FACTOR <= answer / original <= MAX_ANSWER_FACTOR)


def _draw(question: Question, verification: Verification, formulas: Sequence[Formula], level: int,
          rng: np.random.Generator, record: PerturbationRecord, acceptable: Callable[[list[float]], bool],
          domain: Domain | None = None) -> _Draw | PerturbationRecord | None:
    """Seeded draws of `level` changeable inputs until the values stay in `domain`, the answers are
    `acceptable` and no new value is already written in the question (it would make the text checks
    ambiguous). The record is filled with the draw, or finished when too few inputs can change or when no
    draw stays in the domain (the level can never be valid); None when no draw in MAX_DRAWS fits."""
    infos = verification.parameters
    candidates = changeable_inputs(verification)
    too_few = too_few_inputs(record, level, candidates)
    if too_few is not None:
        return too_few
    record.trail.append(Check("changeable_parameters", True, ", ".join(candidates)))
    inside, broken = 0, ""
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
            values = verification.with_derived(values)
            answers = [formula.evaluate(values) for formula in formulas]
        except FormulaError:
            continue
        broken = domain.broken(values) if domain is not None else ""
        if broken:
            continue
        inside += 1
        if not acceptable(answers):
            continue
        old_spans, new_spans = _changed_spans(verification, names, new_numbers, values)  # type: ignore[arg-type]
        if len(set(new_spans)) == len(new_spans) and not any(count_span(question.stem, s) for s in new_spans):
            record.changed, record.new_values = names, values
            return _Draw(answers, old_spans, new_spans)
    if not inside and broken:
        return finish(record, "rejected", never_inside(MAX_DRAWS, broken), "domain")
    return None


def _rewrite_plan(question: Question, verification: Verification, record: PerturbationRecord, draw: _Draw) -> Plan:
    """The plan for the rewrite step: which spans change, which must stay, and the prompt that asks for it."""
    kept = [
        info.spec.span
        for info in verification.parameters.values()
        if info.text is not None and info.occurrences and info.spec.span not in draw.old_spans
    ]
    changes = "\n".join(f"- {old!r} becomes {new!r}" for old, new in zip(draw.old_spans, draw.new_spans, strict=True))
    prompt = PERTURB_REWRITE_CHANGE_USER.format(stem=question.stem, changes=changes)
    return Plan(record, draw.old_spans, draw.new_spans, kept, prompt)


def in_range(answer_range: tuple[float | None, float | None] | None, scale: float) -> Inside | None:
    """The asked answer's domain at levels 1 and 2, on the options' written scale: `answer_range` when the
    template states one (a probability in [0, 1]), else None (the options then keep the original's signs)."""
    if answer_range is None:
        return None
    low, high = answer_range
    return lambda number: (low is None or number * scale >= low) and (high is None or number * scale <= high)


def _fits_key_precision(key: NumberText, number: float, rounding: float = 0.0) -> bool:
    """Whether `number`, written with the key option's decimals, stays within the one-correct-option check:
    a draw whose answer that format cannot hold ("5.0%" for 4.97 %) is drawn again rather than rejected. A
    template whose key is rounded (`key_rounded`) may be as far from its written key as the original was
    (`rounding`: easy_6's €5.56 written "€6", 7.9 %), and no farther; a key written 0 never fits."""
    written = round(number, key.decimals)
    return written != 0 and relative_difference(written, number) <= max(REL_TOL, rounding)


def _changed_spans(
    verification: Verification,
    names: Sequence[str],
    new_numbers: Mapping[str, float],
    values: Mapping[str, float],
) -> tuple[list[str], list[str]]:
    """Old and new text of every changed input, derived givens (a stated PV) included, and of every other
    place a template writes the same quantity (`also`). A derived given that none of the drawn inputs moves
    (challenge_30: Portfolio B's utilities when only A's return is drawn) keeps its text and is left out."""
    old_spans, new_spans = [], []
    for name in names:
        info = verification.parameters[name]
        assert info.text is not None
        old_spans.append(info.spec.span)
        new_spans.append(info.text.write(new_numbers[name]))
        old_spans += [also.text for also in info.also]
        new_spans += [also.write(values[name]) for also in info.also]
    for name in verification.derived:
        info = verification.parameters[name]
        if info.text is not None and info.occurrences:
            new_span = info.text.write(values[name] / info.scale, info.text.decimals)
            if new_span == info.spec.span and not verification.derived[name].names & set(names):
                continue
            old_spans.append(info.spec.span)
            new_spans.append(new_span)
            old_spans += [also.text for also in info.also]
            new_spans += [also.write(values[name], also.number.decimals) for also in info.also]
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
        return finish(record, "not_perturbable", "no rate or amount to ask for instead", "changeable_parameters")
    record.trail.append(Check("changeable_parameters", True, ", ".join(targets)))
    unknown = targets[int(rng.integers(len(targets)))]
    info = infos[unknown]
    assert info.text is not None
    values = verification.values()
    upper = 1.0 if info.spec.kind == "rate" and info.scale != 1.0 else None
    original_answer = verification.original_answer_value
    assert original_answer is not None
    original = values[unknown]
    solved = _solve_check(record, verification, values, unknown, original_answer, upper, ROUND_TRIP_TOL,
                          "round_trip", f"solving for {unknown!r} gives {{:.10g}}, not the original {original:g}")
    if isinstance(solved, PerturbationRecord):
        return solved
    record.trail.append(Check("round_trip", True, f"{unknown} = {solved:.10g}"))
    correct = verification.options[question.answer]
    from_stated = _solve_check(record, verification, values, unknown, correct.number * verification.answer_scale,
                               upper, STATED_ANSWER_TOL, "stated_answer",
                               f"the rounded answer {correct.core} implies {unknown} = {{:.6g}}, not {original:g}")
    if isinstance(from_stated, PerturbationRecord):
        return from_stated
    record.trail.append(Check("stated_answer", True, f"{correct.core} implies {unknown} = {from_stated:.6g}"))
    record.changed = [unknown]
    record.new_values = values
    record.new_answer_value = values[unknown]
    # The target's span style, with the original options' gaps: "7%" -> "7.00%", "6.93%", ...
    rejected = _rebuild_choices_into(
        record, question, verification.options, info.text.number, rng, template=info.text
    )
    if rejected is not None:
        return rejected
    # the gaps come from the answer's options: a distractor of the answer with the other sign would make a
    # "-8.62" beside a yield of 5.75, an option no reader would weigh
    flipped = [text for text in record.choices.values()
               if (found := find_numbers(text)) and found[0].number * info.text.number <= 0]
    if flipped:
        return finish(record, "rejected", f"rebuilt option {flipped[0]!r} has the other sign of the asked "
                      f"{info.spec.description or unknown} ({info.spec.span})", "choices_rebuilt")
    kept = [
        other.spec.span
        for name, other in infos.items()
        if name != unknown and other.text is not None and other.occurrences and other.spec.span != info.spec.span
    ]
    prompt = PERTURB_REWRITE_UNKNOWN_USER.format(
        stem=question.stem,
        answer_option=question.correct_text.rstrip(". "),
        answer=correct.core,
        target=info.spec.description or unknown,
        span=info.spec.span,
        kept=", ".join(kept) or "none",
    )
    return Plan(record, [info.spec.span], [correct.core], kept, prompt, level3_answer_text=correct.core)


def _solve_check(record: PerturbationRecord, verification: Verification, values: Mapping[str, float], unknown: str,
                 target: float, upper: float | None, tolerance: float, check: str, mismatch: str
                 ) -> float | PerturbationRecord:
    """The unknown solved from `target`, or the record finished as not verifiable: the solve failed, or its
    result is not the original input within `tolerance` (`mismatch` formats the solved value)."""
    try:
        solved = solve_for(verification.answer, values, unknown, target, upper)
    except FormulaError as error:
        return finish(record, "not_verifiable", f"cannot solve for {unknown!r}: {error}", check)
    if relative_difference(solved, values[unknown]) > tolerance:
        return finish(record, "not_verifiable", mismatch.format(solved), check)
    return solved


def _rebuild_choices_into(
    record: PerturbationRecord,
    question: Question,
    options: Mapping[str, NumberText],
    new_correct_number: float,
    rng: np.random.Generator,
    template: NumberText | None = None,
    pinned: Mapping[str, float] | None = None,
    inside: Inside | None = None,
) -> PerturbationRecord | None:
    """Put the rebuilt choices into the record; the record, rejected, when they cannot be built or graded."""
    try:
        record.choices, record.correct_letter = rebuild_choices(question, options, new_correct_number, rng, template,
                                                                pinned, inside)
    except ValueError as error:
        return finish(record, "rejected", str(error), "choices_rebuilt")
    record.trail.append(Check("choices_rebuilt", True, f"correct option {record.correct_letter}"))
    if numeric_key(record.choices, record.correct_letter) is None:
        return finish(record, "rejected", f"rebuilt choices cannot be graded by number: {record.choices}", "gradeable")
    return None

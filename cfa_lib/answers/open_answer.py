"""Grading one answer: `grade_open_answer` (Format B, no options shown) and `grade_choice` (Format A).

The order of decisions (tests/grading_corpus/README.md):

1. truncated: `finish_reason == "length"` and no `FINAL ANSWER:` (MCQ: `ANSWER: X`) line was reached;
2. no_answer: nothing visible after a reasoning block, a refusal or a request for the options, a hedge
   ("either X or Y", "between X and Y", "X or Y depending on ...");
3. judge: the question has no numeric key (words, comparisons, label numbers, a number shared with a
   distractor), or the response commits to words only;
4. correct / incorrect: the committed number against the acceptance window (`key.grade_number`).

The `FINAL ANSWER:` line, when present, is the answer (`answer_source="final_line"`); otherwise the
heuristic reader of `final_number` finds the committed conclusion (`answer_source="heuristic"`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cfa_lib.answers.asked import asked_phrase, asked_quantity, mentions, statements
from cfa_lib.answers.choice import extract_choice, has_answer_line
from cfa_lib.answers.commitment import (
    Direction,
    conclusion,
    direction_agreement,
    directions,
    final_answer_line,
    has_refusal,
    in_stem_unit,
    is_hedge,
    is_refusal,
    sentence_spans,
    stem_unit,
)
from cfa_lib.answers.final_number import Reading, read_body
from cfa_lib.answers.key import NumericKey, gold_number_from_option, grade_number, numeric_key
from cfa_lib.answers.numbers import CURRENCY_UNITS, PERCENT, Number, aligned_values, normalise_signs
from cfa_lib.answers.text import clean
from cfa_lib.data import Question

Verdict = Literal["correct", "incorrect", "no_answer", "truncated", "judge"]
AnswerSource = Literal["final_line", "heuristic"]
VERDICTS: tuple[str, ...] = ("correct", "incorrect", "no_answer", "truncated", "judge")

__all__ = ["VERDICTS", "OpenGrade", "grade_choice", "grade_open_answer", "open_key"]


@dataclass(frozen=True)
class OpenGrade:
    """The verdict on one answer, the value (or letter) read, why, and which path read it."""

    verdict: Verdict
    value: Number | None
    reason: str
    answer_source: AnswerSource | None = None
    letter: str | None = None  # grade_choice only

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "value": None if self.value is None else self.value.value,
            "unit": None if self.value is None else self.value.unit,
            "letter": self.letter,
            "answer_source": self.answer_source,
            "reason": self.reason,
        }

    @property
    def correct(self) -> bool | None:
        """True/False for a graded answer, None when numbers did not decide (no_answer, truncated, judge)."""
        return {"correct": True, "incorrect": False}.get(self.verdict)


def open_key(question: Question) -> NumericKey | None:
    """The question's numeric key, its option numbers read in the unit the stem asks for ('(€ millions)')."""
    key = numeric_key(question.choices, question.answer)
    unit = stem_unit(question.stem)
    if key is None or unit is None or unit.bps:
        return key

    def scaled(text: str) -> Number | None:
        number = gold_number_from_option(text)
        return None if number is None else in_stem_unit(number, text, unit)

    return NumericKey(
        scaled(question.correct_text),  # type: ignore[arg-type]
        {letter: scaled(question.choices[letter]) for letter in key.distractors},
    )


def grade_open_answer(question: Question, response: str | None, finish_reason: str | None = None,
                      tolerance: float = 0.02) -> OpenGrade:
    """Grade one open-ended response against the question's key (see the module docstring for the order)."""
    body = normalise_signs(clean(response))
    final = final_answer_line(body)
    if finish_reason == "length" and final is None:
        return OpenGrade("truncated", None, "cut by the token limit before a FINAL ANSWER line")
    if not body.strip():
        return OpenGrade("no_answer", None, "nothing is committed outside the reasoning block")

    key = open_key(question)
    if final is not None:
        source: AnswerSource = "final_line"
        reading = read_body(final, question.stem)
        committed_text = final
    else:
        source = "heuristic"
        reading = read_body(body, question.stem)
        if is_refusal(body, reading.number if reading else None):
            return OpenGrade("no_answer", None, "the response refuses or asks for the options", source)
        # alternatives laid out before the committed value are not a hedge ("X can be 1, 2 or 3, so ...")
        committed_text = body[reading.at :] if reading else conclusion(body)
    # a hedge between numbers leaves nothing to compare; words ("either operating or financing cash
    # flows") are the judge's to read when the key is words
    if key is not None and is_hedge(committed_text):
        return OpenGrade("no_answer", None, "the response offers alternatives or a range without choosing", source)
    if key is None:
        value = _in_stem_unit(reading, question) if reading else None
        return OpenGrade("judge", value, "the correct option is not a single computed number "
                         "(words, a comparison, a label or a number shared with a distractor)", source)
    if source == "heuristic":
        settled = _settle(question, body, reading, key, tolerance)
        if isinstance(settled, OpenGrade):
            return settled
        reading = settled
    if reading is None:
        if has_refusal(body):
            return OpenGrade("no_answer", None, "the response refuses or asks for the options", source)
        return OpenGrade("judge", None, "the response commits to words, not a number", source)
    return _graded(question, reading, final if final is not None else reading.region, key, tolerance, source)


def _graded(question: Question, reading: Reading, clause: str, key: NumericKey, tolerance: float,
            source: AnswerSource) -> OpenGrade:
    """The committed value against the window, then its direction words against the key's ('sell 263'
    against 'Buy 263 ...' is incorrect; 'a loss of $1,300' answers 'the maximum possible loss')."""
    value = _in_stem_unit(reading, question)
    direction = direction_agreement(key_directions(question), clause)
    if direction == "same" and value.value * key.gold.value < 0:
        value = Number(-value.value, value.unit)  # the key's own word carries the sign
    grade = grade_number(value, key.gold, list(key.distractors.values()), rel_tol=tolerance)
    shown = on_key_scale(value, key.gold)
    if grade.match and direction == "opposite":
        return OpenGrade("incorrect", shown, f"{grade.reason}, but its direction word contradicts the key's "
                         f"({question.correct_text.strip()})", source)
    if grade.match and direction == "both":
        return OpenGrade("judge", shown, "the number matches but the answer names both directions", source)
    return OpenGrade("correct" if grade.match else "incorrect", shown, grade.reason, source)


_COMPARED_BEFORE = re.compile(
    r"(?i)\b(?:exceed\w*|outperform\w*|beat\w*)\b[^.;]{0,80}\bby\s*$|\b(?:than|vs\.?|versus)\s*$"
)
_COMPARED_AFTER = re.compile(r"(?i)^\s*(?:more|less|higher|lower|greater|smaller|above|below)\b")
_SUPPOSED = re.compile(
    r"(?i)^\W*(?:with|under|using)\b[^.]*\bwould\b|\b(?:if|had|were|instead|otherwise|alternatively)\b"
    r"[^.]*\bwould\b|\bwould\b[^.]*\b(?:if|instead|otherwise)\b"
)


def _comments(reading: Reading) -> bool:
    """The value read is the object of a comparison or a supposition rather than a statement of the answer:
    'exceeds ... by $772.17', '$4,000 more than ...', 'With annual compounding it would take ... 563 months'."""
    before, after = reading.region[: reading.found.start], reading.region[reading.found.end :]
    return bool(_COMPARED_BEFORE.search(before) or _COMPARED_AFTER.match(after) or _SUPPOSED.search(reading.region))


def key_directions(question: Question) -> set[Direction]:
    """The direction the key states: words of the correct option ('Buy 263 ...', 'receive $103,500'), else of
    the asked phrase ('the maximum possible loss')."""
    return directions(question.correct_text) or directions(asked_phrase(question.stem))


def _settle(question: Question, body: str, reading: Reading | None, key: NumericKey,
            tolerance: float) -> Reading | OpenGrade | None:
    """The heuristic reading checked against the last statement of the asked quantity ('The Macaulay
    duration is 2.83 years.'): they agree, or the reading is a later comparison or another measure (the
    statement wins), or the response commits to two values and the judge decides."""
    def match(r: Reading) -> bool:
        return grade_number(_in_stem_unit(r, question), key.gold, list(key.distractors.values()), tolerance).match

    asked = asked_quantity(question.stem)
    stated = statements(body, asked)
    if not stated or asked is None:
        if reading is None or reading.explicit or not _comments(reading):
            return reading
        start = max((at for at, _ in sentence_spans(body) if at <= reading.at), default=0)
        before = read_body(body[:start], question.stem)
        if before is None or match(before) == match(reading):
            return reading
        return OpenGrade("judge", None, f"the last value read ({_in_stem_unit(reading, question)}) comments on an "
                         f"earlier one ({_in_stem_unit(before, question)})", "heuristic")
    last = stated[-1]
    if reading is None:
        return last
    if match(reading) == match(last):
        return reading
    another = _comments(reading) or (asked.specific and not mentions(asked, reading.region))
    if last.position < reading.position and not reading.explicit and another:
        return last
    return OpenGrade("judge", None, f"two committed values: {_in_stem_unit(last, question)} stated for the asked "
                     f"quantity and {_in_stem_unit(reading, question)} read as the conclusion", "heuristic")


def on_key_scale(value: Number, gold: Number) -> Number:
    """The value written on the key's scale and unit: 0.1429 against a 14.3 % key is 14.29 %."""
    x, _ = aligned_values(value, gold)
    if gold.unit == PERCENT:
        return Number(float(f"{x * 100:.12g}"), PERCENT)  # 0.45 %, not 0.45000000000000007 %
    return Number(x, gold.unit if value.unit in (None, *CURRENCY_UNITS) else value.unit)


def _in_stem_unit(reading: Reading, question: Question) -> Number:
    return in_stem_unit(reading.number, reading.token, stem_unit(question.stem))


def grade_choice(question: Question, response: str | None, finish_reason: str | None = None) -> OpenGrade:
    """Grade one multiple-choice response: the `ANSWER: X` line wins over trailing hypotheticals; a response
    cut by the token limit before any answer line is truncated, never wrong."""
    letters = "".join(question.choices)
    body = clean(response)
    if finish_reason == "length" and not has_answer_line(body, letters):
        return OpenGrade("truncated", None, "cut by the token limit before an ANSWER line")
    letter = extract_choice(response, letters)
    if letter is None:
        reason = "nothing is committed outside the reasoning block" if not body.strip() else \
            "no single letter is committed"
        return OpenGrade("no_answer", None, reason)
    source: AnswerSource = "final_line" if has_answer_line(body, letters) else "heuristic"
    verdict: Verdict = "correct" if letter == question.answer else "incorrect"
    return OpenGrade(verdict, None, f"committed to {letter}; the key is {question.answer}", source, letter)

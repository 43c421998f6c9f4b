"""One outcome type for every graded item of every experiment (after inspect_ai's `Score`).

An answer is correct, partial (three-tier Level B), incorrect, no answer (a refusal, a hedge, two letters left
open: counted, never correct), or excluded, with the reason from one closed set: a failed call, a response cut
by the token limit or one whose letter cannot be read is never counted wrong, and neither is a judge panel without
a verdict. The results files keep the study's documented spellings (`MODEL_FAILED`, `TRUNCATED`, `answered`,
level names): `study_files` is the one translation between the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from cfa_lib.answers import OpenGrade, grade_choice, grade_open_answer
from cfa_lib.data import Question
from cfa_lib.models import Completion

Status = Literal["correct", "partial", "incorrect", "no_answer", "excluded"]
Exclusion = Literal["failed", "truncated", "judge_failed", "judge_tie", "judge_uncalibrated", "not_grounded",
                    "skipped", "empty_response", "not_recorded", "letter_undecided", "unreadable", "key_set_aside",
                    "key_corrected"]

@dataclass(frozen=True)
class Outcome:
    """One graded item: its status, the value read (a letter, a number, a level), why, and who read it."""

    status: Status
    value: Any = None
    reason: str | None = None  # the grader's sentence, the judge's reasoning, or the error of a failed call
    source: str | None = None  # the path that read the answer: "final_line" or "heuristic"
    judged: bool = False  # a judge decided, not the numbers or the key
    excluded: Exclusion | None = None  # set exactly when status == "excluded"

    @classmethod
    def exclude(cls, why: Exclusion, reason: str | None = None, **fields: Any) -> Outcome:
        return cls("excluded", reason=reason, excluded=why, **fields)

    @property
    def correct(self) -> bool | None:
        """True or False for a counted item (no answer is not correct), None for an excluded one."""
        return None if self.status == "excluded" else self.status == "correct"

    @property
    def tier(self) -> str | None:
        """Three-tier's letter, a view of the status: A correct, B partial, C incorrect or no answer."""
        return {"correct": "A", "partial": "B", "incorrect": "C", "no_answer": "C"}.get(self.status)

    @property
    def decided_by(self) -> str:
        """The path that decided the verdict, as a review names it: judge, final_line, heuristic, the letter
        reader, refusal rule or numbers."""
        if self.judged:
            return "judge"
        if self.source in ("final_line", "heuristic"):
            return self.source
        if self.source == "letter":
            return "letter reader"
        return "refusal rule" if self.status == "no_answer" else "numbers"


def cut_short(completion: Completion) -> bool:
    """The token limit ended the response (the engine's retry with a larger budget did not help)."""
    return completion.finish_reason == "length" or completion.error_kind == "truncated"


def read_reply(completion: Completion, grade: Callable[[str, str | None], OpenGrade]) -> OpenGrade | Outcome:
    """The one reading of a model's reply: a failed call is excluded, never graded; otherwise `grade(text,
    finish_reason)`, a reply the token limit cut short read as finish_reason "length"."""
    if not completion.ok and not cut_short(completion):
        return Outcome.exclude("failed", completion.error)
    return grade(completion.text, "length" if cut_short(completion) else completion.finish_reason)


def outcome_of(grade: OpenGrade) -> Outcome:
    """A grader's verdict as an outcome; "judge" is no outcome yet (the caller asks the judges)."""
    value = grade.letter if grade.letter is not None else grade.value
    if grade.verdict == "truncated":
        return Outcome.exclude("truncated", grade.reason, source=grade.answer_source)
    if grade.verdict == "judge":
        raise ValueError("numbers do not decide this answer: the judge does")
    return Outcome(grade.verdict, value, grade.reason, grade.answer_source)


def grade_letter(completion: Completion, question: Question) -> Outcome:
    """A multiple-choice reply against its key: the letter (`value`), or why it is excluded (a reply whose
    answer matches two options is neither guessed nor counted as no answer: no judge reads letters)."""
    graded = read_reply(completion, partial(grade_choice, question))
    if isinstance(graded, Outcome):
        return graded
    if graded.verdict == "judge":
        return Outcome.exclude("letter_undecided", graded.reason, source=graded.answer_source)
    return outcome_of(graded)


def read_open_answer(completion: Completion, question: Question, tolerance: float) -> OpenGrade | Outcome:
    """An open reply read by numbers (`grade_open_answer`): its grade, whose verdict may still be "judge",
    or the outcome of a failed call."""
    return read_reply(completion, partial(grade_open_answer, question, tolerance=tolerance))

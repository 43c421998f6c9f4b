"""One outcome type for every graded item of every experiment (after inspect_ai's `Score`).

An answer is correct, partial (three-tier Level B), incorrect, no answer (a refusal, a hedge, no letter:
counted, never correct), or excluded, with the reason from one closed set: a failed call or a response
cut by the token limit is never counted wrong, and neither is a judge panel without a verdict. The
results files keep the study's documented spellings (`MODEL_FAILED`, `TRUNCATED`, `answered`, ...):
`FILE_CODES` and `response_status` are the one translation between the two.
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
                    "skipped", "empty_response", "not_recorded", "letter_undecided", "unreadable"]

# The results files' spelling of each exclusion (three-tier `excluded`, option-bias `judge_verdict`).
FILE_CODES: dict[Exclusion, str] = {
    "failed": "MODEL_FAILED",
    "truncated": "TRUNCATED",
    "judge_failed": "JUDGE_FAILED",
    "judge_tie": "JUDGE_TIE",
    "judge_uncalibrated": "JUDGE_UNCALIBRATED",  # the judge failed calibration: its verdicts are set aside
    "not_grounded": "GOLD_NOT_GROUNDED",  # graded against a model's number that is not the key's
    "skipped": "SKIPPED",  # reason_then_choose without a complete Format B reply to continue from
    "empty_response": "EMPTY_RESPONSE",  # the study's file: an empty open answer, graded by its judge anyway
    "not_recorded": "NO_LETTER_RECORDED",  # the study's file: no letter and thousands of tokens spent
    "letter_undecided": "LETTER_UNDECIDED",  # the reader cannot tell which option a reply names (two match)
    "unreadable": "UNREADABLE",  # a reply not in the form asked (a follow-up's JSON that does not validate)
}
EXCLUSION_OF_CODE: dict[str, Exclusion] = {code: reason for reason, code in FILE_CODES.items()}


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
    def decided_by(self) -> str:
        """The path that decided the verdict, as a review names it: judge, final_line, heuristic, refusal rule
        or numbers."""
        if self.judged:
            return "judge"
        if self.source in ("final_line", "heuristic"):
            return self.source
        return "refusal rule" if self.status == "no_answer" else "numbers"

    @property
    def code(self) -> str | None:
        """The results files' spelling of the exclusion (`MODEL_FAILED`, `TRUNCATED`, ...), or None."""
        return None if self.excluded is None else FILE_CODES[self.excluded]


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


def letter_error(outcome: Outcome) -> str | None:
    """The `error` the files record for an excluded letter: "TRUNCATED: <why>", "LETTER_UNDECIDED: <why>", or the
    failed call's error."""
    if outcome.excluded in ("truncated", "letter_undecided"):  # read back by their code (letter_from_file)
        return f"{FILE_CODES[outcome.excluded]}: {outcome.reason}"
    return outcome.reason if outcome.excluded is not None else None


def letter_from_file(letter: str | None, correct: bool | None, error: str | None, no_answer: bool = False
                     ) -> Outcome:
    """The outcome a file's multiple-choice fields record (ours or the study's)."""
    if correct is None:
        code = (error or "").split(":")[0]
        return Outcome.exclude(EXCLUSION_OF_CODE.get(code, "failed"), error, value=letter)
    if no_answer:
        return Outcome("no_answer")
    return Outcome("correct" if correct else "incorrect", letter)


def response_status(outcome: Outcome) -> str:
    """What became of the model's response, as the files say it: answered, no_answer, or why it was not
    (failed, truncated, skipped); a judge without a verdict leaves the response answered."""
    if outcome.excluded in ("failed", "truncated", "skipped"):
        return outcome.excluded
    return "no_answer" if outcome.status == "no_answer" else "answered"

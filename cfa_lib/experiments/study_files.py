"""The original study's results files, read and written: the one adapter between its spellings and `Outcome`.

The study's files (and ours, which keep its documented layout so its readers work on them) spell what
became of an answer in several ways: an exclusion's code (`MODEL_FAILED`, `TRUNCATED`, `JUDGE_TIE`, ...),
option bias's `judge_verdict` (`NUMERICAL_MATCH`, `JUDGE_INCORRECT`, `NO_ANSWER`, ...), a response's
`open_status` (answered, no_answer, failed, ...), a letter's `error`, and three-tier's level names (exact,
directional, incorrect) for the tier letters A, B, C. Every one of them is a view of the one vocabulary
of `outcome` (a status and, when excluded, a reason), translated here and nowhere else.
"""

from __future__ import annotations

from cfa_lib.experiments.outcome import Exclusion, Outcome, Status

# The files' spelling of each exclusion (three-tier `excluded`, option-bias `judge_verdict`, a letter's `error`).
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
    "key_set_aside": "KEY_SET_ASIDE",  # the key audit found no single right option, or the question unclear
    "key_corrected": "KEY_CORRECTED",  # judged against a key the audit corrected: that verdict cannot stand
}
EXCLUSION_OF_CODE: dict[str, Exclusion] = {code: reason for reason, code in FILE_CODES.items()}

# Three-tier: the tier letter's level name in the files, and the status each level is.
LEVEL_NAMES = {"A": "exact", "B": "directional", "C": "incorrect"}
LEVEL_STATUS: dict[str, Status] = {"exact": "correct", "directional": "partial", "incorrect": "incorrect"}


def file_code(outcome: Outcome) -> str | None:
    """The files' spelling of the outcome's exclusion (`MODEL_FAILED`, `TRUNCATED`, ...), or None."""
    return None if outcome.excluded is None else FILE_CODES[outcome.excluded]


NO_ANSWER = "NO_ANSWER"


def verdict_code(outcome: Outcome) -> str:
    """Format B's outcome as the files spell `judge_verdict`: who decided (numbers or the judge) and what, or
    why it is excluded (MODEL_FAILED, TRUNCATED, JUDGE_FAILED, JUDGE_TIE, JUDGE_UNCALIBRATED, ...)."""
    if (code := file_code(outcome)) is not None:
        return code
    if outcome.status == "no_answer":
        return NO_ANSWER
    if outcome.judged:
        return "JUDGE_CORRECT" if outcome.correct else "JUDGE_INCORRECT"
    return "NUMERICAL_MATCH" if outcome.correct else "NUMERICAL_MISMATCH"


def letter_error(outcome: Outcome) -> str | None:
    """The `error` the files record for an excluded letter: "TRUNCATED: <why>", "LETTER_UNDECIDED: <why>", or the
    failed call's error."""
    if outcome.excluded in ("truncated", "letter_undecided"):  # read back by their code (`letter_from_file`)
        return f"{FILE_CODES[outcome.excluded]}: {outcome.reason}"
    return outcome.reason if outcome.excluded is not None else None


def letter_from_file(letter: str | None, correct: bool | None, error: str | None, no_answer: bool = False
                     ) -> Outcome:
    """The outcome a file's multiple-choice fields record (ours or the study's)."""
    if correct is None:
        code = (error or "").split(":")[0]
        return Outcome.exclude(EXCLUSION_OF_CODE.get(code, "failed"), error, value=letter)
    if no_answer:
        return Outcome("no_answer", source="letter")
    return Outcome("correct" if correct else "incorrect", letter, source="letter")


def response_status(outcome: Outcome) -> str:
    """What became of the model's response, as the files say it: answered, no_answer, or why it was not
    (failed, truncated, skipped); a judge without a verdict leaves the response answered."""
    if outcome.excluded in ("failed", "truncated", "skipped"):
        return outcome.excluded
    return "no_answer" if outcome.status == "no_answer" else "answered"

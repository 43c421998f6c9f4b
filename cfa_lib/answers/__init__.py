"""Reading answers and the answer key: everything that turns model text into a verdict's inputs.

* `text`: clean-up every reader needs (reasoning blocks, LaTeX, markup);
* `numbers`: `Number`, numbers as answers write them, and the one rule for comparing two numbers on
  one scale (`aligned_values`, `relative_error`);
* `choice`: the letter a multiple-choice response commits to (`extract_choice`);
* `final_number`: the number an open response commits to (`extract_number`);
* `key`: the numeric key of a question's options and grading a number against it (`grade_number`);
* `structured`: the one reader of a structured (JSON schema) model reply (`parse_reply`);
* `commitment`: what a response commits to (FINAL ANSWER line, refusals, hedges, asides, sign and
  direction words, the unit the stem asks for);
* `asked`: the quantity the stem asks for and the statements that equate a value to it;
* `settle`: the value a grader would point at, or why only the judge can tell;
* `open_answer`: one verdict per answer, `grade_open_answer` and `grade_choice` (`OpenGrade`).
"""

from cfa_lib.answers.choice import extract_choice
from cfa_lib.answers.final_number import extract_number
from cfa_lib.answers.key import NumericGrade, NumericKey, gold_number_from_option, grade_number, numeric_key
from cfa_lib.answers.numbers import Number, aligned_values, extract_numbers_in, numbers_match, relative_error
from cfa_lib.answers.open_answer import VERDICTS, OpenGrade, grade_choice, grade_open_answer, open_key
from cfa_lib.answers.structured import parse_reply

__all__ = [
    "VERDICTS",
    "Number",
    "NumericGrade",
    "OpenGrade",
    "NumericKey",
    "aligned_values",
    "extract_choice",
    "extract_number",
    "extract_numbers_in",
    "gold_number_from_option",
    "grade_choice",
    "grade_number",
    "grade_open_answer",
    "open_key",
    "numbers_match",
    "numeric_key",
    "parse_reply",
    "relative_error",
]

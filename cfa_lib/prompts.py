"""Every prompt the study sends, in one place.

The book renders these constants verbatim, and `PROMPT_VERSION` (a hash of all of them) is written
into every results file, so a reader can tell whether two runs asked the same thing.
"""

from __future__ import annotations

import hashlib

from cfa_lib.data import Question

# Format A and Format B: the wording of the experiment card (seed 000), kept verbatim.
MCQ_SYSTEM = (
    "You are a CFA exam expert. Read the question carefully, show your reasoning, "
    "then state your final answer as: ANSWER: X (where X is A, B, or C)."
)
OPEN_SYSTEM = (
    "You are a CFA exam expert. Solve the following problem step by step. "
    "Do NOT choose from multiple-choice options — compute and state your answer directly."
)

JUDGE_SYSTEM = (
    "You are an expert CFA exam grader. You compare a student's open-ended answer with the correct "
    "answer of a CFA question. The student did not see any answer choices. Judge the student's final "
    "answer, not the style: it is correct when it reaches the same conclusion (or a numerically "
    "equivalent value) as the correct answer. Reply in JSON: "
    '{"correct": true|false, "reasoning": "<one or two sentences>"}.'
)
JUDGE_USER = "Question:\n{question}\n\nCorrect answer:\n{gold}\n\nStudent response:\n{response}"

GOLD_SYSTEM = (
    "You are a CFA charterholder writing the answer key of an open-ended version of a multiple-choice "
    "question. You are given the question, its choices and the correct choice. Derive the answer a "
    "student should give without seeing the choices. If the answer is a number, give it in "
    "numerical_answer (as written, e.g. 8.0 for 8.0%, 400000 for £400,000) with its unit "
    '("%", "$", "€", "£", "¥" or null); otherwise numerical_answer is null. Reply in JSON: '
    '{"numerical_answer": number|null, "unit": string|null, '
    '"concept": "<the concept or formula>", "solution_summary": "<the key steps>"}.'
)
GOLD_USER = "{mcq}\n\nCorrect choice: {answer}: {correct_text}"

GOLD_CHECK_SYSTEM = (
    "You check an answer key. Given a multiple-choice CFA question, its correct choice and a candidate "
    "numerical answer, decide whether the number makes the correct choice true and each wrong choice "
    'false. Reply in JSON: {"consistent": true|false, "reasoning": "<one sentence>"}.'
)
GOLD_CHECK_USER = "{mcq}\n\nCorrect choice: {answer}\nCandidate numerical answer: {value} {unit}"

TIER_SYSTEM = (
    "You are an expert CFA exam grader using three levels. "
    "A (exact): the student's final answer matches the gold answer (same value within rounding, or the "
    "same meaning for a text answer). "
    "B (directional): right approach and the same order of magnitude and sign, but a different "
    "defensible assumption (compounding frequency, day count, annual versus periodic rate, rounding). "
    "C (incorrect): a wrong answer or flawed reasoning. Reply in JSON: "
    '{"level": "A"|"B"|"C", "reasoning": "<one or two sentences>"}.'
)
TIER_USER = (
    "Question:\n{question}\n\nGold answer: {gold}\nGold solution: {solution}\n\nStudent response:\n{response}"
)

ERROR_SYSTEM = (
    "You diagnose why a student's answer to a CFA question is wrong. Choose exactly one error_category "
    "from: conceptual_error, formula_error, assumption_error, arithmetic_error, reading_error (misread "
    "the data or extracted the wrong number), incomplete_reasoning. Reply in JSON: "
    '{"error_category": "<one of the six>", "explanation": "<one sentence>", '
    '"could_be_fixed_with_tools": true|false}.'
)
ERROR_USER = "Question:\n{question}\n\nGold answer: {gold}\n\nStudent response:\n{response}"


def mcq_messages(question: Question) -> list[dict[str, str]]:
    """Format A: the question with its choices."""
    return [{"role": "system", "content": MCQ_SYSTEM}, {"role": "user", "content": question.mcq_text()}]


def open_messages(question: Question) -> list[dict[str, str]]:
    """Format B: the same question with the choices removed."""
    return [{"role": "system", "content": OPEN_SYSTEM}, {"role": "user", "content": question.open_text()}]


def chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def all_prompts() -> dict[str, str]:
    """Name → text of every prompt constant, for the book and for the version hash."""
    return {name: value for name, value in globals().items() if name.isupper() and isinstance(value, str)
            and name != "PROMPT_VERSION"}


PROMPT_VERSION = hashlib.sha256(
    "\n".join(f"{k}={v}" for k, v in sorted(all_prompts().items())).encode()
).hexdigest()[:12]

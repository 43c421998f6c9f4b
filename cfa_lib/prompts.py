"""Every prompt the study sends, in one place.

The book renders these constants verbatim, and `PROMPT_VERSION` (a hash of all of them) is written
into every results file, so a reader can tell whether two runs asked the same thing.
"""

from __future__ import annotations

import hashlib

from cfa_lib.data import Question

# Format A and Format B: the wording of the experiment card (seed 000), kept verbatim, except that Format B
# now ends with the final-answer line (as Format A asks for `ANSWER: X`): `grade_open_answer` reads it first.
MCQ_SYSTEM = (
    "You are a CFA exam expert. Read the question carefully, show your reasoning, "
    "then state your final answer as: ANSWER: X (where X is A, B, or C)."
)
OPEN_SYSTEM = (
    "You are a CFA exam expert. Solve the following problem step by step. "
    "Do NOT choose from multiple-choice options — compute and state your answer directly. "
    "End your response with one line: FINAL ANSWER: <value with its unit>."
)

# The judge as an answer matcher (Chandak et al. 2025): it sees the question, the correct option's text and
# the response, and says only whether the response's final answer matches; the reasoning is not graded.
JUDGE_SYSTEM = (
    "You check whether a student's final answer to a CFA question matches the reference answer. The student "
    "did not see any answer choices. Find the final answer the response commits to and compare only that "
    "answer with the reference: it matches when it is the same value (allowing rounding and equivalent "
    "notation such as 0.15, 15% and 3/20), the same direction (buy or sell, gain or loss, increase or "
    "decrease, pay or receive) and, for a text answer, the same meaning. Do not grade the reasoning or the "
    "method. A response that commits to no answer, or offers several without choosing, does not match. "
    'Reply in JSON: {"correct": true|false, "reasoning": "<one or two sentences>"}.'
)
JUDGE_USER = (
    "Question:\n{question}\n\nReference answer:\n{gold}\n\nStudent response:\n{response}\n\n"
    "Does the student's final answer match the reference answer?"
)

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

# Counterfactual perturbations (cfa_lib.perturbation): the generator describes a question as a formula,
# then rewrites its text around values the code has settled.
PERTURB_EXTRACTION_SYSTEM = (
    "You turn a quantitative CFA exam question into a formula. You are given the question, its answer "
    "choices and the correct choice. Reply in JSON with these fields.\n"
    "- computable: false when the correct answer is not one number computed from numbers in the question "
    "by one closed-form formula (conceptual questions, statements, comparisons); then say why in reason "
    "and leave the other fields empty.\n"
    "- parameters: every input the answer depends on, each with: name (letters, digits, _; e.g. pv, r, n), "
    'value (a plain number), kind, span (the input exactly as written in the question, e.g. "7%", '
    '"$75,000", "10-year", "2.50%"; words such as "quarterly" for conventions not written as digits), '
    'description (a few words, e.g. "stated annual interest rate") and derived_from.\n'
    '  kind is "rate" (give it as a decimal fraction: 7% -> 0.07), "count" (years, periods, payments), '
    '"amount" (money or prices: "$10 million" -> 10000000) or "other" (fixed conventions such as 100 '
    "of par, 4 quarters a year, 365 days).\n"
    "  derived_from: empty, unless the question states a number that is itself computed from other "
    "parameters (e.g. a given PV of an ordinary annuity); then the formula that computes it from them.\n"
    "- formula: one expression over the parameter names that computes the asked quantity, using only "
    "numbers, + - * / **, parentheses and exp, log, sqrt, min, max, abs, ncdf(x) (the standard normal CDF), "
    "irr(c0, c1, ..., cn) (the per-period IRR of cash flows now and at the end of each period) and "
    "rate(n, pmt, pv, fv) (a calculator's per-period I/Y, pv negative for a price paid). "
    "When the answer is a percentage, "
    "the formula returns a decimal fraction (8.0% -> 0.08).\n"
    '- asked_quantity: what the question asks for; unit: the unit of the answer ("$", "%", "years").'
)
PERTURB_EXTRACTION_USER = "{mcq}\n\nCorrect choice: {answer}: {correct_text}"

PERTURB_REWRITE_SYSTEM = (
    "You edit CFA exam questions. Rewrite the question exactly as instructed and change nothing else: "
    "same wording, same style, no answer choices, no answer, no explanation. Write every new value "
    'exactly as given. Reply in JSON: {"question": "<the rewritten question>"}.'
)
PERTURB_REWRITE_CHANGE_USER = (
    "Question:\n{stem}\n\nReplace these values (every occurrence) and keep everything else:\n{changes}"
)
PERTURB_REWRITE_UNKNOWN_USER = (
    "Question:\n{stem}\n\nThe answer to this question is {answer_option}. Rewrite the question so that "
    "it states {answer} (written exactly so) as a given and asks instead for the {target} (now written as "
    "{span}). The rewritten question must not contain {span}. Keep every other value exactly as written: "
    '{kept}. End with "is closest to:".'
)


# Answer-format variants (cfa_lib.experiments.variants): where the multiple-choice advantage comes from.
# options_only hides the stem; none_of_the_above and shuffled are Format A on an altered question (the
# MCQ_SYSTEM prompt, the choices changed); reason_then_choose continues the Format B conversation.
OPTIONS_ONLY_SYSTEM = (
    "You are a CFA exam expert. The question has been hidden: only its answer choices are shown. "
    "Pick the choice that is most likely the correct answer to a CFA exam question, "
    "then state your final answer as: ANSWER: X (where X is A, B, or C)."
)
OPTIONS_ONLY_USER = "Which option is most likely correct?\n\n{options}"
NONE_OF_THE_ABOVE = "None of the above."
REASON_THEN_CHOOSE_USER = (
    "Here are the answer choices.\n\n{options}\n\n"
    "Now choose the option that matches your answer, and state it as: ANSWER: X (where X is A, B, or C)."
)


def mcq_messages(question: Question) -> list[dict[str, str]]:
    """Format A: the question with its choices."""
    return [{"role": "system", "content": MCQ_SYSTEM}, {"role": "user", "content": question.mcq_text()}]


def open_messages(question: Question) -> list[dict[str, str]]:
    """Format B: the same question with the choices removed."""
    return [{"role": "system", "content": OPEN_SYSTEM}, {"role": "user", "content": question.open_text()}]


def options_text(choices: dict[str, str]) -> str:
    """The choices as Format A shows them: one "A: text" line each."""
    return "\n".join(f"{letter}: {text}" for letter, text in choices.items())


def options_only_messages(question: Question) -> list[dict[str, str]]:
    """The choices without the stem (variant options_only)."""
    return chat(OPTIONS_ONLY_SYSTEM, OPTIONS_ONLY_USER.format(options=options_text(question.choices)))


def reason_then_choose_messages(question: Question, open_reply: str) -> list[dict[str, str]]:
    """Format B's conversation, its reply as the assistant turn, then the choices (variant reason_then_choose)."""
    return [*open_messages(question), {"role": "assistant", "content": open_reply},
            {"role": "user", "content": REASON_THEN_CHOOSE_USER.format(options=options_text(question.choices))}]


def chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def all_prompts() -> dict[str, str]:
    """Name → text of every prompt constant, for the book and for the version hash."""
    return {name: value for name, value in globals().items() if name.isupper() and isinstance(value, str)
            and name != "PROMPT_VERSION"}


def version_of(prompts: dict[str, str]) -> str:
    """A short hash of a set of prompts: two runs with the same version asked the same things."""
    return hashlib.sha256("\n".join(f"{k}={v}" for k, v in sorted(prompts.items())).encode()).hexdigest()[:12]


PROMPT_VERSION = version_of(all_prompts())

"""Option bias (experiment A5): the same question with and without its answer choices.

Format A is graded against the answer key by the letter the response commits to. Format B is graded
against the correct option: numerically when the option carries a number (with the rule that a value
closer to a distractor is wrong), otherwise by an LLM judge. Failed model or judge calls are excluded
from the paired analysis and reported, never counted as wrong answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cfa_lib import prompts, stats
from cfa_lib.data import Question
from cfa_lib.experiments.common import (
    Settings,
    count,
    format_number,
    metadata,
    ready_client,
    usage,
)
from cfa_lib.extract import extract_choice, extract_number
from cfa_lib.grading import grade_number, numeric_key
from cfa_lib.models import Completion, Request, get_client
from cfa_lib.results import load_results, new_run_id, write_results

EXPERIMENT = "option_bias"


class JudgeVerdict(BaseModel):
    """The open-answer judge's reply (experiment card A5)."""

    correct: bool
    reasoning: str


NUMERICAL_MATCH = "NUMERICAL_MATCH"
NUMERICAL_MISMATCH = "NUMERICAL_MISMATCH"
JUDGE_CORRECT = "JUDGE_CORRECT"
JUDGE_INCORRECT = "JUDGE_INCORRECT"
NO_ANSWER = "NO_ANSWER"
JUDGE_FAILED = "JUDGE_FAILED"
MODEL_FAILED = "MODEL_FAILED"
CORRECT_VERDICTS = {NUMERICAL_MATCH, JUDGE_CORRECT, "CORRECT"}  # "CORRECT": the original study's judge
EXCLUDED_VERDICTS = {JUDGE_FAILED, MODEL_FAILED}


def format_requests(questions: Sequence[Question]) -> list[Request]:
    """Format A then Format B for every question, so one batch uses the concurrency and the cache."""
    return [Request(prompts.mcq_messages(q)) for q in questions] + [
        Request(prompts.open_messages(q)) for q in questions
    ]


def judge_request(question: Question, response: str) -> Request:
    user = prompts.JUDGE_USER.format(
        question=question.open_text(), gold=f"{question.answer}: {question.correct_text}", response=response
    )
    return Request(prompts.chat(prompts.JUDGE_SYSTEM, user), schema=JudgeVerdict)


def grade_open_numerically(question: Question, response: str, tolerance: float) -> dict[str, Any] | None:
    """The numeric verdict for Format B, or None when the judge must decide: no number in the response,
    or options that numbers cannot tell apart (none in the correct one, or the same in a distractor)."""
    key = numeric_key(question.choices, question.answer)
    answer = extract_number(response)
    if key is None or answer is None:
        return None
    grade = grade_number(answer, key.gold, list(key.distractors.values()), rel_tol=tolerance)
    return {
        "judge_verdict": NUMERICAL_MATCH if grade.match else NUMERICAL_MISMATCH,
        "answer_without": format_number(answer),
        "judge_reasoning": grade.reason,
    }


def grade_mcq(completion: Completion, answer_key: str) -> dict[str, Any]:
    if not completion.ok:
        return {"answer_with": None, "correct_with_options": None, "no_answer_with": False,
                "error_with": completion.error}
    letter = extract_choice(completion.text)
    return {"answer_with": letter, "correct_with_options": letter == answer_key,
            "no_answer_with": letter is None, "error_with": None}


def grade_rows(
    questions: Sequence[Question],
    mcq: Sequence[Completion],
    open_: Sequence[Completion],
    judge: dict[str, Completion],
    tolerance: float,
) -> list[dict[str, Any]]:
    """One results row per question, from the completions of both formats and the judge."""
    rows = []
    for question, with_options, without_options in zip(questions, mcq, open_, strict=True):
        row: dict[str, Any] = {"question_id": question.id, "correct_answer": question.answer,
                               "correct_text": question.correct_text}
        row.update(grade_mcq(with_options, question.answer))
        row.update(grade_open(question, without_options, judge.get(question.id), tolerance))
        verdict = row["judge_verdict"]
        row["correct_without_options"] = None if verdict in EXCLUDED_VERDICTS else verdict in CORRECT_VERDICTS
        paired = row["correct_with_options"] is not None and row["correct_without_options"] is not None
        row["option_biased"] = (row["correct_with_options"] and not row["correct_without_options"]) if paired \
            else None
        row["response_with"] = with_options.text
        row["response_without"] = without_options.text
        row["thinking_with"] = with_options.thinking
        row["thinking_without"] = without_options.thinking
        rows.append(row)
    return rows


def grade_open(
    question: Question, completion: Completion, judged: Completion | None, tolerance: float
) -> dict[str, Any]:
    if not completion.ok:
        return {"judge_verdict": MODEL_FAILED, "answer_without": None, "judge_reasoning": completion.error}
    if not completion.text.strip():
        return {"judge_verdict": NO_ANSWER, "answer_without": None, "judge_reasoning": "empty response"}
    numeric = grade_open_numerically(question, completion.text, tolerance)
    if numeric is not None:
        return numeric
    if judged is None or not judged.ok or judged.parsed is None:
        reason = judged.error if judged is not None else "judge not called"
        return {"judge_verdict": JUDGE_FAILED, "answer_without": None, "judge_reasoning": reason}
    verdict = JudgeVerdict.model_validate(judged.parsed)
    return {
        "judge_verdict": JUDGE_CORRECT if verdict.correct else JUDGE_INCORRECT,
        "answer_without": None,
        "judge_reasoning": verdict.reasoning,
    }


def exclusion_reason(row: dict[str, Any]) -> str | None:
    """Why a row is left out of the paired analysis (a failed call), or None when it is paired."""
    if row["correct_without_options"] is None:
        return row["judge_verdict"]
    return "MODEL_FAILED (with options)" if row["correct_with_options"] is None else None


def summarize(rows: Sequence[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    """The card's summary, recomputed from rows (ours or the original study's) on the paired questions."""
    paired = [r for r in rows if exclusion_reason(r) is None]
    with_options = [bool(r["correct_with_options"]) for r in paired]
    without_options = [bool(r["correct_without_options"]) for r in paired]
    n = len(paired)
    outcomes = stats.paired_outcomes(with_options, without_options)
    acc_with = sum(with_options) / n if n else None
    acc_without = sum(without_options) / n if n else None
    bias, low, high = stats.paired_bootstrap_diff(with_options, without_options, seed=seed) if n >= 2 \
        else (None,) * 3
    return {
        "n_questions": len(rows),
        "n_paired": n,
        "n_excluded": len(rows) - n,
        "excluded_reasons": count([exclusion_reason(r) for r in rows if exclusion_reason(r)]),
        "n_no_answer_with_options": sum(bool(r.get("no_answer_with")) for r in paired),
        "verdicts": count([r["judge_verdict"] for r in rows]),
        "accuracy_with_options": acc_with,
        "accuracy_without_options": acc_without,
        "accuracy_with_options_ci": stats.wilson_interval(sum(with_options), n) if n else None,
        "accuracy_without_options_ci": stats.wilson_interval(sum(without_options), n) if n else None,
        "option_bias": None if n == 0 else acc_with - acc_without,
        "option_bias_ci": None if low is None else [low, high],
        "option_bias_bootstrap_estimate": bias,
        "n_biased_questions": outcomes.b,
        "bias_rate": outcomes.b / n if n else None,
        "contingency": {"both_correct": outcomes.a, "with_only": outcomes.b, "without_only": outcomes.c,
                        "both_wrong": outcomes.d},
        "mcnemar_test": stats.mcnemar(outcomes.b, outcomes.c).to_dict(),
    }


def estimate(settings: Settings):
    """Prompt tokens and cost range of the subject calls, before anything is spent."""
    return get_client(settings.model).estimate(format_requests(settings.questions()))


def run(settings: Settings) -> tuple[dict[str, Any], Path]:
    """Ask both formats, judge what numbers cannot decide, write the results file and return it."""
    questions = settings.questions()
    client = ready_client(settings.model)
    answers = client.complete_many(format_requests(questions), max_concurrency=settings.max_concurrency,
                                   desc="Formats A and B")
    mcq, open_ = answers[: len(questions)], answers[len(questions):]
    needs_judge = [
        (q, c) for q, c in zip(questions, open_, strict=True)
        if c.ok and c.text.strip() and grade_open_numerically(q, c.text, settings.tolerance) is None
    ]
    judged: dict[str, Completion] = {}
    if needs_judge:
        judge = client if settings.resolved_judge == settings.model else ready_client(settings.resolved_judge)
        verdicts = judge.complete_many([judge_request(q, c.text) for q, c in needs_judge],
                                       max_concurrency=settings.max_concurrency, desc="Judge")
        judged = {q.id: v for (q, _), v in zip(needs_judge, verdicts, strict=True)}
    rows = grade_rows(questions, mcq, open_, judged, settings.tolerance)
    summary = summarize(rows)
    summary["usage"] = {"subject": usage(answers), "judge": usage(list(judged.values()))}
    summary["total_tokens"] = sum(u["prompt_tokens"] + u["completion_tokens"] for u in summary["usage"].values())
    data = {"metadata": metadata(EXPERIMENT, settings, len(questions)), "summary": summary, "results": rows}
    path = write_results(EXPERIMENT, new_run_id(settings.model, settings.dataset), data)
    return data, path


def load(path: str | Path) -> dict[str, Any]:
    """A results file of this experiment (ours or the original study's), with its summary recomputed."""
    data = load_results(path, EXPERIMENT)  # checks the rows carry what summarize needs
    data["recomputed_summary"] = summarize(data["results"])
    return data

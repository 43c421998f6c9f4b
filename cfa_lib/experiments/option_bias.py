"""Option bias (experiment A5): the same question with and without its answer choices.

Format A is graded against the answer key by the letter the response commits to. Format B is graded
against the correct option: numerically when the option carries a number (with the rule that a value
closer to a distractor is wrong), otherwise by an LLM judge. Failed model or judge calls are excluded
from the paired analysis and reported, never counted as wrong answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cfa_lib import params, prompts, stats
from cfa_lib.answerability import classify, is_open_answerable
from cfa_lib.answers import OpenGrade, grade_open_answer, parse_reply
from cfa_lib.answers.commitment import has_refusal
from cfa_lib.data import Question
from cfa_lib.experiments import variants as answer_variants
from cfa_lib.experiments.common import (
    TRUNCATED,
    Settings,
    count,
    cut_short,
    engine_stats,
    grade_letter,
    load_run,
    metadata,
    ready_client,
    usage,
)
from cfa_lib.experiments.judging import CALIBRATION_QUESTIONS, ask_panel, majority, run_calibration
from cfa_lib.models import Completion, Request, complete_keyed, get_client
from cfa_lib.results import ResultRow, new_run_id, write_results

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
JUDGE_UNCALIBRATED = "JUDGE_UNCALIBRATED"  # the judge failed calibration: its verdicts are set aside
JUDGE_TIE = "JUDGE_TIE"  # a panel split evenly: no verdict, excluded like a failed judge
MODEL_FAILED = "MODEL_FAILED"
CORRECT_VERDICTS = {NUMERICAL_MATCH, JUDGE_CORRECT, "CORRECT"}  # "CORRECT": the original study's judge
EXCLUDED_VERDICTS = {JUDGE_FAILED, JUDGE_TIE, JUDGE_UNCALIBRATED, MODEL_FAILED, TRUNCATED, "EMPTY_RESPONSE"}


@dataclass
class Row(ResultRow):
    """One question of an option-bias run: both formats, the open verdict, the pairing."""

    question_id: str
    correct_with_options: bool | None
    correct_without_options: bool | None
    judge_verdict: str
    correct_answer: str | None = None
    correct_text: str | None = None
    answer_with: str | None = None
    no_answer_with: bool = False
    error_with: str | None = None
    answer_without: str | None = None
    judge_reasoning: str | None = None
    option_biased: bool | None = None
    response_with: str | None = None
    response_without: str | None = None
    thinking_with: str | None = None
    thinking_without: str | None = None
    open_answerable: bool | None = None  # None in the study's files: the shipped classification decides
    open_status: str | None = None  # answered | no_answer | truncated | failed (Format B)
    answer_source: str | None = None  # final_line | heuristic: which path read Format B's answer
    variants: dict[str, dict[str, Any]] | None = None  # answer-format variants asked (experiments.variants)

    @property
    def answerable(self) -> bool:
        known = self.open_answerable if self.open_answerable is not None else is_open_answerable(self.question_id)
        return bool(known)

    def to_dict(self) -> dict[str, Any]:
        """The documented order of the study's files (question, Format A, Format B, pairing, texts)."""
        order = ("question_id", "correct_answer", "correct_text", "answer_with", "correct_with_options",
                 "no_answer_with", "error_with", "judge_verdict", "answer_without", "judge_reasoning",
                 "correct_without_options", "option_biased", "response_with", "response_without",
                 "thinking_with", "thinking_without", "open_answerable", "open_status", "answer_source")
        row = super().to_dict()
        if row.get("variants") is None:
            row.pop("variants", None)  # files without variants keep their shape
        return {**{k: row.pop(k) for k in order}, **row}


def format_requests(questions: Sequence[Question]) -> dict[tuple[str, str], Request]:
    """Format A and Format B of every question, keyed by (question id, format), sent as one batch."""
    return {
        **{(q.id, "A"): Request(prompts.mcq_messages(q)) for q in questions},
        **{(q.id, "B"): Request(prompts.open_messages(q)) for q in questions},
    }


def judge_request(question: Question, response: str) -> Request:
    """The answer-matching request: the question, the correct option's text (no letter: the student saw
    none) and the response; the judge says whether the final answer matches."""
    user = prompts.JUDGE_USER.format(question=question.open_text(), gold=question.correct_text, response=response)
    return Request(prompts.chat(prompts.JUDGE_SYSTEM, user), schema=JudgeVerdict)


def open_grade(question: Question, completion: Completion, tolerance: float) -> OpenGrade | None:
    """`grade_open_answer` on a Format B completion; None for a failed call (excluded, never graded)."""
    if not completion.ok and not cut_short(completion):
        return None
    finish = "length" if cut_short(completion) else completion.finish_reason
    return grade_open_answer(question, completion.text, finish, tolerance)


def needs_judge(question: Question, completion: Completion, tolerance: float) -> bool:
    grade = open_grade(question, completion, tolerance)
    return grade is not None and grade.verdict == "judge"


def grade_question(question: Question, with_options: Completion, without_options: Completion,
                   judged: Mapping[str, Completion] | None, tolerance: float) -> Row:
    """The results row of one question, from its two formats' completions and the judge's (if asked)."""
    fields: dict[str, Any] = {"question_id": question.id, "correct_answer": question.answer,
                              "correct_text": question.correct_text}
    letter = grade_letter(with_options, question)
    fields.update(answer_with=letter.letter, correct_with_options=letter.correct, no_answer_with=letter.no_answer,
                  error_with=letter.error)
    fields.update(grade_open(question, without_options, judged, tolerance))
    verdict = fields["judge_verdict"]
    fields["correct_without_options"] = None if verdict in EXCLUDED_VERDICTS else verdict in CORRECT_VERDICTS
    fields["option_biased"] = option_biased(fields["correct_with_options"], fields["correct_without_options"])
    return Row(**fields, response_with=with_options.text, response_without=without_options.text,
               thinking_with=with_options.thinking, thinking_without=without_options.thinking,
               open_answerable=classify(question).open_answerable,
               open_status=open_status(fields["judge_verdict"]))


def option_biased(with_options: bool | None, without_options: bool | None) -> bool | None:
    """Right with the options, wrong without them; None unless both formats were graded."""
    if with_options is None or without_options is None:
        return None
    return with_options and not without_options


def open_status(verdict: str) -> str:
    """What became of the open answer: failed call, cut by the token limit, nothing committed, or answered."""
    if verdict == MODEL_FAILED:
        return "failed"
    return {TRUNCATED: "truncated", NO_ANSWER: "no_answer"}.get(verdict, "answered")


_OPEN_VERDICTS = {"correct": NUMERICAL_MATCH, "incorrect": NUMERICAL_MISMATCH, "no_answer": NO_ANSWER,
                  "truncated": TRUNCATED}


def grade_open(
    question: Question, completion: Completion, judged: Mapping[str, Completion] | None, tolerance: float
) -> dict[str, Any]:
    """Format B's verdict: numbers where they decide, the judge where they cannot; a refusal or a hedge
    is NO_ANSWER (not correct, counted apart), a response cut by the token limit is excluded."""
    grade = open_grade(question, completion, tolerance)
    if grade is None:
        return {"judge_verdict": MODEL_FAILED, "answer_without": None, "judge_reasoning": completion.error}
    source = {"answer_source": grade.answer_source}
    if grade.verdict == "judge":
        return {**judged_open(judged), **source}
    return {"judge_verdict": _OPEN_VERDICTS[grade.verdict], "answer_without": grade.value.short() if grade.value
            else None, "judge_reasoning": grade.reason, **source}


def judge_says(completion: Completion | None) -> bool | None:
    verdict = parse_reply(completion, JudgeVerdict, "judge")[0]
    return None if verdict is None else verdict.correct


def judged_open(judged: Mapping[str, Completion] | None) -> dict[str, Any]:
    """The panel's verdict on an open answer; no verdict (every judge failed, or a tie) excludes the row."""
    if not judged:
        return {"judge_verdict": JUDGE_FAILED, "answer_without": None, "judge_reasoning": "judge not called"}
    says = {name: judge_says(c) for name, c in judged.items()}
    decision, why = majority(list(says.values()))
    if decision is None:
        failed = next((c.error for c in judged.values() if c.error), None)
        reason = why if any(v is not None for v in says.values()) else (failed or why)
        return {"judge_verdict": JUDGE_TIE if "tie" in why else JUDGE_FAILED, "answer_without": None,
                "judge_reasoning": reason}
    first = next(parse_reply(c, JudgeVerdict, "judge")[0] for c in judged.values() if judge_says(c) is not None)
    reasoning = first.reasoning if len(judged) == 1 else f"{why}: {first.reasoning}"
    return {"judge_verdict": JUDGE_CORRECT if decision else JUDGE_INCORRECT, "answer_without": None,
            "judge_reasoning": reasoning}


def set_aside_uncalibrated(row: Row) -> Row:
    """A verdict of a judge that failed calibration is no finding: the row is excluded, the verdict kept
    in the reasoning for the reader."""
    if row.judge_verdict not in (JUDGE_CORRECT, JUDGE_INCORRECT):
        return row
    return replace(row, judge_verdict=JUDGE_UNCALIBRATED, correct_without_options=None, option_biased=None,
                   judge_reasoning=f"{row.judge_verdict} by a judge that failed calibration: {row.judge_reasoning}")


def exclusion_reason(row: Row) -> str | None:
    """Why a row is left out of the paired analysis (a failed call, a response cut short, a judge panel
    without a verdict), or None when it is paired."""
    if row.correct_without_options is None:
        return row.judge_verdict
    if row.correct_with_options is None:
        why = next((w for w in (TRUNCATED, NO_LETTER_RECORDED) if (row.error_with or "").startswith(w)), MODEL_FAILED)
        return f"{why} (with options)"
    return None


def summarize(rows: Sequence[Row], seed: int = 0) -> dict[str, Any]:
    """The card's summary on all paired questions (the seed's keys), and the same keys under "answerable"
    over the open-answerable subset: the like-with-like headline, since a stem that points at its options
    is no question without them."""
    answerable = [r for r in rows if r.answerable]
    return {**summarize_paired(rows, seed), "answerable": summarize_paired(answerable, seed),
            "open_status": count([r.open_status for r in rows if r.open_status])}


def summarize_paired(rows: Sequence[Row], seed: int = 0) -> dict[str, Any]:
    """The card's summary, recomputed from rows (ours or the original study's) on the paired questions."""
    paired = [r for r in rows if exclusion_reason(r) is None]
    with_options = [bool(r.correct_with_options) for r in paired]
    without_options = [bool(r.correct_without_options) for r in paired]
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
        "n_no_answer_with_options": sum(bool(r.no_answer_with) for r in paired),
        "verdicts": count([r.judge_verdict for r in rows]),
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


def estimate(settings: Settings, variants: Sequence[str] | str = ()):
    """Prompt tokens and cost range of the subject calls (both formats and the variants asked), before
    anything is spent."""
    questions = settings.questions()
    requests = [*format_requests(questions).values(),
                *answer_variants.variant_requests(questions, answer_variants.check_variants(variants)).values()]
    return get_client(settings.model).estimate(requests)


def check_run_options(calibration_sample: int = CALIBRATION_QUESTIONS, variants: Sequence[str] | str = ()) -> None:
    params.check_count("calibration_sample", calibration_sample)
    answer_variants.check_variants(variants)


def run(settings: Settings, calibration_sample: int = CALIBRATION_QUESTIONS, variants: Sequence[str] | str = ()
        ) -> tuple[dict[str, Any], Path]:
    """Ask both formats, judge what numbers cannot decide, ask the answer-format variants (if any), write
    the results file and return it."""
    names = answer_variants.check_variants(variants)
    questions = settings.questions()
    client = ready_client(settings.model)
    answers = complete_keyed(client, format_requests(questions), **settings.engine(),
                             desc="Formats A and B")
    to_judge = {
        q.id: judge_request(q, open_.text) for q in questions
        if (open_ := answers[q.id, "B"]).ok and open_.text.strip()
        and needs_judge(q, open_, settings.tolerance)
    }
    judges = {name: client if name == settings.model else ready_client(name) for name in settings.judges}
    judged = ask_panel(judges, to_judge, **settings.engine()) if to_judge else {}
    rows = [grade_question(q, answers[q.id, "A"], answers[q.id, "B"], judged.get(q.id), settings.tolerance)
            for q in questions]
    variant_answers = complete_keyed(
        client, answer_variants.variant_requests(questions, names, {q.id: answers[q.id, "B"] for q in questions}),
        **settings.engine(), desc="Variants") if names else {}
    if names:
        answer_variants.attach(rows, questions, names, variant_answers)
    by_id = {q.id: q for q in questions}
    decided = [r.correct_without_options for r in rows if r.judge_verdict in (JUDGE_CORRECT, JUDGE_INCORRECT)]
    judged_questions = [by_id[qid] for qid in to_judge]
    calibration = run_calibration(
        judges, [q for q in judged_questions if classify(q).open_answerable] or judged_questions, judge_request,
        judge_says, decided, sample=calibration_sample, **settings.engine()) if to_judge else None
    if calibration is not None and not calibration["passed"]:
        rows = [set_aside_uncalibrated(row) for row in rows]
    summary = summarize(rows)
    summary["judge_calibration"] = calibration
    if names:
        summary["variants"] = answer_variants.summarize_variants(rows, names)
    summary["usage"] = {"subject": usage(list(answers.values())),
                        "judge": usage([c for replies in judged.values() for c in replies.values()]),
                        **({"variants": usage(list(variant_answers.values()))} if names else {})}
    summary["total_tokens"] = sum(u["prompt_tokens"] + u["completion_tokens"] for u in summary["usage"].values())
    meta = metadata(EXPERIMENT, settings, len(questions), engine=engine_stats(subject=client, **judges))
    data = {"metadata": meta,
            "summary": summary,
            "results": [row.to_dict() for row in rows]}
    path = write_results(EXPERIMENT, new_run_id(settings.model, settings.dataset), data)
    return data, path


def load(path: str | Path) -> dict[str, Any]:
    """A results file of this experiment (ours or the original study's), with its summary recomputed."""
    return load_run(path, EXPERIMENT, Row, lambda rows, _: summarize(rows), regrade)


NO_LETTER_RECORDED = "NO_LETTER_RECORDED"  # the study's file: no letter and thousands of tokens spent
EMPTY_RESPONSE = "EMPTY_RESPONSE"  # the study's file: an empty open answer, graded by its judge anyway


def regrade(rows: list[Row]) -> tuple[list[Row], dict[str, int]]:
    """This toolkit's rules on rows whose verdicts another grader wrote (the original study's files).

    Only what the stored (cut-short) text still shows is re-read: a refusal ("Please paste the options")
    is not a correct answer; an empty open answer and a missing letter are not answers at all and are
    excluded (the study's budget ran out), never counted as right or wrong. Our own rows are already
    graded by these rules and pass through unchanged.
    """
    changes: Counter[str] = Counter()
    out = []
    for row in rows:
        if row.open_status is not None:  # graded by this toolkit
            out.append(row)
            continue
        update: dict[str, Any] = {}
        text = row.answer_without or ""
        if row.answer_with is None and row.correct_with_options is False:
            update.update(correct_with_options=None, error_with=f"{NO_LETTER_RECORDED}: no letter in the file")
            changes["no letter recorded with options: excluded, not wrong"] += 1
        if not text.strip() and row.correct_without_options is not None:
            update.update(correct_without_options=None, judge_verdict=EMPTY_RESPONSE)
            changes["empty open answer: excluded, not judged"] += 1
        elif has_refusal(text) and row.correct_without_options is not None and \
                row.judge_verdict not in (NO_ANSWER, NUMERICAL_MATCH):
            if row.correct_without_options:
                changes["refusal judged correct: not correct"] += 1
            update.update(correct_without_options=False, judge_verdict=NO_ANSWER)
        if update:
            row = replace(row, **update)
            row = replace(row, option_biased=option_biased(row.correct_with_options, row.correct_without_options))
        out.append(row)
    return out, dict(changes)

"""Three-tier grading of open answers (experiment A1) with error attribution.

Numbers decide what numbers can: within tolerance (and not closer to a distractor) is A; the wrong
sign or a factor of 2 or more is C without asking anyone. Only the band in between, and answers in
words, go to the judge, whose reasoning is recorded. Every C gets an error category from a fixed set.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from cfa_lib import params, prompts, stats
from cfa_lib.answerability import is_open_answerable
from cfa_lib.answers import (
    Number,
    aligned_values,
    gold_number_from_option,
    grade_number,
    grade_open_answer,
    numeric_key,
    open_key,
    parse_reply,
    relative_error,
)
from cfa_lib.data import Question, dataset_of, questions_by_id
from cfa_lib.experiments.common import (
    TRUNCATED,
    Settings,
    count,
    cut_short,
    engine_stats,
    load_run,
    metadata,
    ready_client,
    usage,
)
from cfa_lib.experiments.judging import CALIBRATION_QUESTIONS, ask_panel, majority, run_calibration
from cfa_lib.gold import GoldAnswer, gold_answers
from cfa_lib.models import Completion, Request, complete_keyed, get_client
from cfa_lib.results import ResultRow, new_run_id, write_results

EXPERIMENT = "three_tier"
LEVEL_NAMES = {"A": "exact", "B": "directional", "C": "incorrect"}
ERROR_CATEGORIES = ("conceptual_error", "formula_error", "assumption_error", "arithmetic_error",
                    "reading_error", "incomplete_reasoning")


class TierVerdict(BaseModel):
    level: Literal["A", "B", "C"]
    reasoning: str


class ErrorAttribution(BaseModel):
    error_category: Literal[ERROR_CATEGORIES]  # type: ignore[valid-type]
    explanation: str
    could_be_fixed_with_tools: bool


@dataclass
class Row(ResultRow):
    """One open answer of a three-tier run: its gold answer, level and (for a C) error attribution."""

    level: str | None
    evaluation: dict[str, Any]
    question_id: str | None = None
    correct_answer_letter: str | None = None
    gold_answer: dict[str, Any] | None = None
    model_response: str | None = None
    thinking: str | None = None
    error_attribution: dict[str, Any] | None = None
    excluded: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The documented order of the study's files."""
        order = ("question_id", "correct_answer_letter", "level", "gold_answer", "model_response", "thinking",
                 "evaluation", "error_attribution", "excluded")
        row = super().to_dict()
        return {**{k: row.pop(k) for k in order}, **row}


@dataclass(frozen=True)
class NumericTier:
    """What the numbers alone say: a level, or None when the judge must decide between B and C."""

    level: str | None
    reasoning: str


def numeric_tier(answer: Number, gold: GoldAnswer, distractors: Sequence[Number | None], tolerance: float
                 ) -> NumericTier:
    gold_number = Number(gold.numerical, gold.unit)
    grade = grade_number(answer, gold_number, distractors, rel_tol=tolerance)
    if grade.match:
        return NumericTier("A", grade.reason)
    student, expected = aligned_values(answer, gold_number)
    if expected == 0 or student == 0 or (student > 0) != (expected > 0):
        return NumericTier("C", f"wrong sign or zero: {answer.value:g} vs gold {gold.numerical:g}")
    ratio = student / expected
    if ratio >= 2 or ratio <= 0.5:
        return NumericTier("C", f"off by a factor of {max(ratio, 1 / ratio):.2f} (2 or more)")
    return NumericTier(None, f"{grade.reason}; within a factor of 2, so the judge decides B or C")


def judged_level(verdict: TierVerdict, numeric_band: bool) -> str:
    """The judge's level; a number already found outside the tolerance cannot be exact, so A becomes B."""
    return LEVEL_NAMES["B" if numeric_band and verdict.level == "A" else verdict.level]


def tier_request(question: Question, gold: GoldAnswer, response: str) -> Request:
    gold_text = gold.text if gold.numerical is None else f"{gold.numerical:g} {gold.unit or ''} ({gold.text})"
    user = prompts.TIER_USER.format(question=question.open_text(), gold=gold_text,
                                    solution=gold.solution_summary or "not given", response=response)
    return Request(prompts.chat(prompts.TIER_SYSTEM, user), schema=TierVerdict)


def error_request(question: Question, gold: GoldAnswer, response: str) -> Request:
    user = prompts.ERROR_USER.format(question=question.open_text(), gold=gold.text, response=response)
    return Request(prompts.chat(prompts.ERROR_SYSTEM, user), schema=ErrorAttribution)


def open_requests(questions: Sequence[Question]) -> dict[str, Request]:
    """Format B of every question, keyed by question id (the same requests as option bias: shared cache)."""
    return {q.id: Request(prompts.open_messages(q)) for q in questions}


def check_run_options(gold_model: str | None = None, agreement_sample: int = 50, agreement_seed: int = 0,
                      calibration_sample: int = CALIBRATION_QUESTIONS) -> None:
    """The notebook's own parameters, checked before the cost estimate and any call."""
    if gold_model is not None:
        params.check_model(gold_model, "gold_model")
    params.check_count("agreement_sample", agreement_sample)
    params.check_count("agreement_seed", agreement_seed)
    params.check_count("calibration_sample", calibration_sample)


def estimate(settings: Settings):
    """Cost of the subject's open answers (judge and gold calls come on top)."""
    return get_client(settings.model).estimate(list(open_requests(settings.questions()).values()))


def run(settings: Settings, gold_model: str | None = None, agreement_sample: int = 50,
        agreement_seed: int = 0, calibration_sample: int = CALIBRATION_QUESTIONS) -> tuple[dict[str, Any], Path]:
    """Open answers (shared with option bias through the cache), gold answers, grading, attribution."""
    check_run_options(gold_model, agreement_sample, agreement_seed, calibration_sample)
    questions = settings.questions()
    client = ready_client(settings.model)
    judges = {name: client if name == settings.model else ready_client(name) for name in settings.judges}
    judge = next(iter(judges.values()))  # the panel's first judge attributes errors (one category per C)
    gold_name = gold_model or settings.judges[0]
    gold_client = judges.get(gold_name) or (client if gold_name == settings.model else ready_client(gold_name))

    responses = complete_keyed(client, open_requests(questions), **settings.engine(),
                               desc="Open answers")
    golds = gold_answers(questions, gold_client, **settings.engine())
    by_id = {q.id: q for q in questions}

    rows = {q.id: first_pass(q, golds[q.id], responses[q.id], settings.tolerance) for q in questions}
    to_judge = [qid for qid, row in rows.items() if row.level is None and not row.excluded]
    auto = [qid for qid, row in rows.items() if row.evaluation["auto_graded"]]
    agreement_ids = random.Random(agreement_seed).sample(auto, min(agreement_sample, len(auto)))
    judged = ask_panel(judges, {
        **{(qid, "tier"): tier_request(by_id[qid], golds[qid], rows[qid].model_response) for qid in to_judge},
        **{(qid, "agreement"): tier_request(by_id[qid], golds[qid], rows[qid].model_response)
           for qid in agreement_ids},
    }, **settings.engine())
    for qid in to_judge:
        apply_verdict(rows[qid], golds[qid], judged[qid, "tier"])
    agreement = judge_agreement([(rows[qid], judged[qid, "agreement"]) for qid in agreement_ids])

    credited = [r.level != "incorrect" for r in rows.values() if r.evaluation.get("judge_level")]
    calibration = run_calibration(
        judges, [by_id[qid] for qid in to_judge], lambda q, answer: tier_request(q, golds[q.id], answer),
        judge_credits, credited, sample=calibration_sample, **settings.engine()) if to_judge else None
    if calibration is not None and not calibration["passed"]:
        for row in rows.values():  # a judge that failed calibration decides nothing the book presents
            if row.evaluation.get("judge_level") and not row.evaluation.get("auto_graded"):
                row.excluded, row.level = "JUDGE_UNCALIBRATED", None

    wrong = [qid for qid, row in rows.items() if row.level == "incorrect"]
    attributions = complete_keyed(
        judge, {qid: error_request(by_id[qid], golds[qid], rows[qid].model_response) for qid in wrong},
        **settings.engine(), desc="Error attribution")
    for qid, completion in attributions.items():
        rows[qid].error_attribution = attribution(completion)

    summary = summarize(list(rows.values()))
    summary["judge_agreement"] = agreement
    summary["judge_calibration"] = calibration
    summary["gold_sources"] = count([g.source for g in golds.values()])
    summary["usage"] = {"subject": usage(list(responses.values())),
                        "judge": usage([c for replies in judged.values() for c in replies.values()]
                                       + list(attributions.values()))}
    data = {"metadata": metadata(EXPERIMENT, settings, len(questions), gold_model=gold_name,
                                 engine=engine_stats(subject=client, **judges, gold=gold_client)),
            "summary": summary, "results": [row.to_dict() for row in rows.values()]}
    return data, write_results(EXPERIMENT, new_run_id(settings.model, settings.dataset), data)


def first_pass(question: Question, gold: GoldAnswer, response: Completion, tolerance: float) -> Row:
    """A results row graded as far as numbers go: a level when they decide, else None for the judge.

    The answer is read by `grade_open_answer`: cut by the token limit is excluded (never C); a refusal, a
    hedge or nothing committed is C and counted as `no_answer`; words, or a key that is not a number, go
    to the judge.
    """
    failed = not response.ok and not cut_short(response)
    grade = None if failed else grade_open_answer(question, response.text,
                                                   "length" if cut_short(response) else response.finish_reason,
                                                   tolerance)
    answer = grade.value if grade is not None else None
    row = Row(
        question_id=question.id, correct_answer_letter=question.answer, level=None, gold_answer=gold.to_dict(),
        model_response=response.text, thinking=response.thinking,
        evaluation={"reasoning": None, "auto_graded": False, "student_value": answer.value if answer else None,
                    "student_unit": answer.unit if answer else None, "gold_value": gold.numerical,
                    "verdict": grade.verdict if grade else None,
                    "answer_source": grade.answer_source if grade else None},
    )
    if grade is None:
        row.excluded = "MODEL_FAILED"
        row.evaluation["reasoning"] = response.error
    elif grade.verdict == "truncated":
        row.excluded = TRUNCATED
        row.evaluation["reasoning"] = grade.reason
    elif grade.verdict == "no_answer":
        row.level, row.evaluation["auto_graded"], row.evaluation["reasoning"] = "incorrect", True, grade.reason
    elif grade.verdict in ("correct", "incorrect") and gold.numerical is not None and answer is not None:
        key = open_key(question)
        distractors = list(key.distractors.values()) if key else []
        tier = numeric_tier(answer, gold, distractors, tolerance)
        row.evaluation["reasoning"] = tier.reasoning
        if tier.level is not None:
            row.level = LEVEL_NAMES[tier.level]
            row.evaluation["auto_graded"] = True
    return row


def judge_level(completion: Completion | None) -> str | None:
    verdict = parse_reply(completion, TierVerdict, "judge")[0]
    return None if verdict is None else verdict.level


def judge_credits(completion: Completion | None) -> bool | None:
    """For calibration: did the judge give the answer any credit (A or B)? The key must get it, no distractor."""
    level = judge_level(completion)
    return None if level is None else level != "C"


def apply_verdict(row: Row, gold: GoldAnswer, judged: Mapping[str, Completion]) -> None:
    """The panel's level and reasoning into the row; no verdict (failed judges, a tie) excludes the row,
    never grades it C."""
    level, why = majority([judge_level(c) for c in judged.values()])
    if level is None:
        row.excluded = "JUDGE_TIE" if "tie" in why else "JUDGE_FAILED"
        row.evaluation["reasoning"] = why if "tie" in why else row.evaluation["reasoning"]
        return
    verdict = next(v for c in judged.values() if (v := parse_reply(c, TierVerdict, "judge")[0]) and v.level == level)
    numeric_band = gold.numerical is not None and row.evaluation["student_value"] is not None
    row.level = judged_level(verdict, numeric_band)
    row.evaluation["reasoning"] = verdict.reasoning if len(judged) == 1 else f"{why}: {verdict.reasoning}"
    row.evaluation["judge_level"] = level


def attribution(completion: Completion) -> dict[str, Any]:
    """The error category of a Level C answer; a reply outside the fixed set (after the engine's one
    retry) is `unclassified`, so raw model text never lands in the category field."""
    parsed = parse_reply(completion, ErrorAttribution, "judge")[0]
    if parsed is not None:
        return parsed.model_dump()
    return {"error_category": "unclassified", "explanation": completion.error, "could_be_fixed_with_tools": None}


def judge_agreement(items: Sequence[tuple[Row, Mapping[str, Completion]]]) -> dict[str, Any]:
    """How often the judge (the panel's majority), asked blind, agrees with the numeric grader on
    auto-graded items."""
    pairs = []
    for row, judged in items:
        level = majority([judge_level(c) for c in judged.values()])[0]
        if level is not None:
            pairs.append((row.level, LEVEL_NAMES[level]))
    if not pairs:
        return {"n": 0, "percent_agreement": None, "cohen_kappa": None, "judge_failed": len(items)}
    numeric, judged = zip(*pairs, strict=True)
    return {
        "n": len(pairs),
        "percent_agreement": sum(a == b for a, b in pairs) / len(pairs),
        "cohen_kappa": stats.cohen_kappa(list(numeric), list(judged)),
        "cohen_kappa_ci": stats.cohen_kappa_ci(list(numeric), list(judged)),
        "judge_failed": len(items) - len(pairs),
    }


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    """The card's summary over every question, and the same keys under "answerable" over the questions that
    can be asked without their options (the subset the open format really tests)."""
    answerable = [r for r in rows if is_open_answerable(r.question_id or "")]
    return {**summarize_levels(rows), "answerable": summarize_levels(answerable)}


def summarize_levels(rows: Sequence[Row]) -> dict[str, Any]:
    """The card's summary from rows (ours or the original study's); excluded rows are reported apart."""
    graded = [r for r in rows if r.level in LEVEL_NAMES.values()]
    n = len(graded)
    levels = {name: sum(r.level == name for r in graded) for name in LEVEL_NAMES.values()}
    lenient = levels["exact"] + levels["directional"]
    categories = [(r.error_attribution or {}).get("error_category") for r in graded if r.level == "incorrect"]
    return {
        "n_questions": len(rows),
        "n_graded": n,
        "n_excluded": len(rows) - n,
        "excluded_reasons": count([r.excluded for r in rows if r.excluded]),
        "level_distribution": levels,
        "level_rates": {k: (v / n if n else None) for k, v in levels.items()},
        "strict_accuracy": levels["exact"] / n if n else None,
        "strict_accuracy_ci": stats.wilson_interval(levels["exact"], n) if n else None,
        "lenient_accuracy": lenient / n if n else None,
        "lenient_accuracy_ci": stats.wilson_interval(lenient, n) if n else None,
        "auto_graded": sum(bool(r.evaluation.get("auto_graded")) for r in graded),
        "no_answer": sum(r.evaluation.get("verdict") == "no_answer" for r in graded),
        "error_categories": count([c for c in categories if c is not None]),
    }


def load(path: str | Path) -> dict[str, Any]:
    """A results file of this experiment (ours or the original study's), with its summary recomputed."""
    return load_run(path, EXPERIMENT, Row, lambda rows, _: summarize(rows), regrade)


GOLD_MATCH = 0.005  # a gold number within 0.5 % of the key's is the key's (rounding)


def regrade(rows: list[Row], tolerance: float = 0.02) -> tuple[list[Row], dict[str, int]]:
    """This toolkit's gold rule on any file: a numeric gold is the key's number or none.

    A model gold that disagrees with the key's number is replaced by it and the stored answer is graded
    again by numbers; a model gold where the key has no number leaves the verdict without ground, so the
    row is excluded with the reason (its verdict would need the judge again, in words).
    """
    changes: Counter[str] = Counter()
    out = []
    for row in rows:
        why = _regrade_row(row, tolerance)
        if why:
            changes[why] += 1
        out.append(row)
    return out, dict(changes)


def _regrade_row(row: Row, tolerance: float) -> str | None:
    gold = (row.gold_answer or {}).get("numerical")
    dataset = dataset_of(row.question_id or "")
    question = questions_by_id(dataset).get(row.question_id or "") if dataset else None
    if gold is None or question is None or row.level is None:
        return None
    key = numeric_key(question.choices, question.answer)
    if key is not None and relative_error(Number(float(gold), (row.gold_answer or {}).get("unit")), key.gold) \
            <= GOLD_MATCH:
        return None
    if key is None:
        row.excluded, row.level = "GOLD_NOT_GROUNDED", None
        return "graded against a model's number where the key has none"
    student = row.evaluation.get("student_value")
    if not row.evaluation.get("auto_graded") or student is None:
        row.excluded, row.level = "GOLD_NOT_GROUNDED", None
        return "judged against a model's number that is not the key's"
    key_gold = GoldAnswer(key.gold.value, key.gold.unit, question.correct_text, None, None, "option")
    distractors = [gold_number_from_option(t) for t in question.distractors.values()]
    tier = numeric_tier(Number(float(student), row.evaluation.get("student_unit")), key_gold, distractors, tolerance)
    if tier.level is None:
        row.excluded, row.level = "GOLD_NOT_GROUNDED", None
        return "regraded against the key's number: needs the judge"
    changed = LEVEL_NAMES[tier.level] != row.level
    row.level = LEVEL_NAMES[tier.level]
    row.evaluation = {**row.evaluation, "reasoning": f"re-graded against the key's number: {tier.reasoning}"}
    return "regraded against the key's number: level changed" if changed else \
        "regraded against the key's number: same level"


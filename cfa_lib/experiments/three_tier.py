"""Three-tier grading of open answers (experiment A1) with error attribution.

Numbers decide what numbers can: within tolerance (and not closer to a distractor) is A; the wrong
sign or a factor of 2 or more is C without asking anyone. Only the band in between, and answers in
words, go to the judge, whose reasoning is recorded. Every C gets an error category from a fixed set.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from cfa_lib import params, prompts, stats
from cfa_lib.data import Question
from cfa_lib.experiments.common import Settings, count, metadata, ready_client, usage
from cfa_lib.extract import Number, extract_number
from cfa_lib.gold import GoldAnswer, gold_answers
from cfa_lib.grading import gold_number_from_option, grade_number
from cfa_lib.models import Completion, Request, get_client
from cfa_lib.results import load_results, new_run_id, write_results

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
    student, expected = _comparable(answer, gold_number)
    if expected == 0 or student == 0 or (student > 0) != (expected > 0):
        return NumericTier("C", f"wrong sign or zero: {answer.value:g} vs gold {gold.numerical:g}")
    ratio = student / expected
    if ratio >= 2 or ratio <= 0.5:
        return NumericTier("C", f"off by a factor of {max(ratio, 1 / ratio):.2f} (2 or more)")
    return NumericTier(None, f"{grade.reason}; within a factor of 2, so the judge decides B or C")


def _comparable(answer: Number, gold: Number) -> tuple[float, float]:
    """Both values on one scale when only one is a percentage: 8.0 % and 0.08 are the same rate."""
    if (answer.unit == "%") == (gold.unit == "%"):
        return answer.value, gold.value
    return tuple(n.value / 100 if n.unit == "%" else n.value for n in (answer, gold))  # type: ignore[return-value]


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


def parsed_or_none(completion: Completion | None, schema: type[BaseModel]) -> BaseModel | None:
    if completion is None or not completion.ok or completion.parsed is None:
        return None
    try:
        return schema.model_validate(completion.parsed)
    except ValueError:
        return None


def open_requests(questions: Sequence[Question]) -> list[Request]:
    return [Request(prompts.open_messages(q)) for q in questions]


def check_run_options(gold_model: str | None = None, agreement_sample: int = 50, agreement_seed: int = 0) -> None:
    """The notebook's own parameters, checked before the cost estimate and any call."""
    if gold_model is not None:
        params.check_model(gold_model, "gold_model")
    params.check_count("agreement_sample", agreement_sample)
    params.check_count("agreement_seed", agreement_seed)


def estimate(settings: Settings):
    """Cost of the subject's open answers (judge and gold calls come on top)."""
    return get_client(settings.model).estimate(open_requests(settings.questions()))


def run(settings: Settings, gold_model: str | None = None, agreement_sample: int = 50,
        agreement_seed: int = 0) -> tuple[dict[str, Any], Path]:
    """Open answers (shared with option bias through the cache), gold answers, grading, attribution."""
    check_run_options(gold_model, agreement_sample, agreement_seed)
    questions = settings.questions()
    client = ready_client(settings.model)
    judge = client if settings.resolved_judge == settings.model else ready_client(settings.resolved_judge)
    gold_name = gold_model or settings.resolved_judge
    gold_client = judge if gold_name == settings.resolved_judge else ready_client(gold_name)

    responses = client.complete_many(open_requests(questions),
                                     max_concurrency=settings.max_concurrency, desc="Open answers")
    golds = gold_answers(questions, gold_client, settings.max_concurrency)

    rows = [first_pass(q, golds[q.id], r, settings.tolerance) for q, r in zip(questions, responses, strict=True)]
    items = list(zip(questions, (golds[q.id] for q in questions), rows, strict=True))
    to_judge = [item for item in items if item[2]["level"] is None and not item[2]["excluded"]]
    auto = [item for item in items if item[2]["evaluation"]["auto_graded"]]
    agreement_items = random.Random(agreement_seed).sample(auto, min(agreement_sample, len(auto)))
    judged = judge.complete_many(
        [tier_request(q, g, r["model_response"]) for q, g, r in to_judge + agreement_items],
        max_concurrency=settings.max_concurrency, desc="Judge") if to_judge or agreement_items else []
    for (_, gold, row), completion in zip(to_judge, judged[: len(to_judge)], strict=True):
        apply_verdict(row, gold, completion)
    agreement = judge_agreement(agreement_items, judged[len(to_judge):])

    wrong = [(q, g, r) for q, g, r in items if r["level"] == "incorrect"]
    attributions = judge.complete_many([error_request(q, g, r["model_response"]) for q, g, r in wrong],
                                       max_concurrency=settings.max_concurrency,
                                       desc="Error attribution") if wrong else []
    for (_, _, row), completion in zip(wrong, attributions, strict=True):
        row["error_attribution"] = attribution(completion)

    summary = summarize(rows)
    summary["judge_agreement"] = agreement
    summary["gold_sources"] = count([g.source for g in golds.values()])
    summary["usage"] = {"subject": usage(responses), "judge": usage(list(judged) + list(attributions))}
    data = {"metadata": metadata(EXPERIMENT, settings, len(questions), gold_model=gold_name),
            "summary": summary, "results": rows}
    return data, write_results(EXPERIMENT, new_run_id(settings.model, settings.dataset), data)


def first_pass(question: Question, gold: GoldAnswer, response: Completion, tolerance: float) -> dict[str, Any]:
    """A results row graded as far as numbers go: a level when they decide, else None for the judge."""
    answer = extract_number(response.text) if response.ok else None
    row: dict[str, Any] = {
        "question_id": question.id, "correct_answer_letter": question.answer, "level": None,
        "gold_answer": gold.to_dict(), "model_response": response.text, "thinking": response.thinking,
        "evaluation": {"reasoning": None, "auto_graded": False,
                       "student_value": answer.value if answer else None,
                       "student_unit": answer.unit if answer else None, "gold_value": gold.numerical},
        "error_attribution": None, "excluded": None,
    }
    if not response.ok:
        row["excluded"] = "MODEL_FAILED"
        row["evaluation"]["reasoning"] = response.error
    elif gold.numerical is not None and answer is not None:
        distractors = [gold_number_from_option(t) for t in question.distractors.values()]
        tier = numeric_tier(answer, gold, distractors, tolerance)
        row["evaluation"]["reasoning"] = tier.reasoning
        if tier.level is not None:
            row["level"] = LEVEL_NAMES[tier.level]
            row["evaluation"]["auto_graded"] = True
    return row


def apply_verdict(row: dict[str, Any], gold: GoldAnswer, completion: Completion) -> None:
    """The judge's level and reasoning into the row; a failed judge excludes the row, never grades it C."""
    verdict = parsed_or_none(completion, TierVerdict)
    if verdict is None:
        row["excluded"] = "JUDGE_FAILED"
        return
    numeric_band = gold.numerical is not None and row["evaluation"]["student_value"] is not None
    row["level"] = judged_level(verdict, numeric_band)
    row["evaluation"]["reasoning"] = verdict.reasoning
    row["evaluation"]["judge_level"] = verdict.level


def attribution(completion: Completion) -> dict[str, Any]:
    """The error category of a Level C answer; a reply outside the fixed set (after the engine's one
    retry) is `unclassified`, so raw model text never lands in the category field."""
    parsed = parsed_or_none(completion, ErrorAttribution)
    if parsed is not None:
        return parsed.model_dump()
    return {"error_category": "unclassified", "explanation": completion.error, "could_be_fixed_with_tools": None}


def judge_agreement(items: Sequence[tuple[Question, GoldAnswer, dict]], completions: Sequence[Completion]
                    ) -> dict[str, Any]:
    """How often the judge, asked blind, agrees with the numeric grader on auto-graded items."""
    pairs = []
    for (_, _, row), completion in zip(items, completions, strict=True):
        verdict = parsed_or_none(completion, TierVerdict)
        if verdict is not None:
            pairs.append((row["level"], LEVEL_NAMES[verdict.level]))
    if not pairs:
        return {"n": 0, "percent_agreement": None, "cohen_kappa": None, "judge_failed": len(items)}
    numeric, judged = zip(*pairs, strict=True)
    return {
        "n": len(pairs),
        "percent_agreement": sum(a == b for a, b in pairs) / len(pairs),
        "cohen_kappa": stats.cohen_kappa(list(numeric), list(judged)),
        "judge_failed": len(items) - len(pairs),
    }


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The card's summary from rows (ours or the original study's); excluded rows are reported apart."""
    graded = [r for r in rows if r.get("level") in LEVEL_NAMES.values()]
    n = len(graded)
    levels = {name: sum(r["level"] == name for r in graded) for name in LEVEL_NAMES.values()}
    lenient = levels["exact"] + levels["directional"]
    categories = [(r.get("error_attribution") or {}).get("error_category") for r in graded
                  if r["level"] == "incorrect"]
    return {
        "n_questions": len(rows),
        "n_graded": n,
        "n_excluded": len(rows) - n,
        "excluded_reasons": count([r["excluded"] for r in rows if r.get("excluded")]),
        "level_distribution": levels,
        "level_rates": {k: (v / n if n else None) for k, v in levels.items()},
        "strict_accuracy": levels["exact"] / n if n else None,
        "strict_accuracy_ci": stats.wilson_interval(levels["exact"], n) if n else None,
        "lenient_accuracy": lenient / n if n else None,
        "lenient_accuracy_ci": stats.wilson_interval(lenient, n) if n else None,
        "auto_graded": sum(bool(r["evaluation"].get("auto_graded")) for r in graded),
        "error_categories": count([c for c in categories if c is not None]),
    }


def load(path: str | Path) -> dict[str, Any]:
    data = load_results(path, EXPERIMENT)  # checks the rows carry what summarize needs
    data["recomputed_summary"] = summarize(data["results"])
    return data

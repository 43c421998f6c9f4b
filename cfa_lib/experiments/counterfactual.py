"""Counterfactual testing (experiment I1): is a correct answer reasoning or memory?

The numbers of a question are changed and its new answer is computed by `cfa_lib.perturbation` from a
verified formula, never taken from a model. The subject answers the original and every valid
perturbation in the multiple-choice format of the option-bias experiment (same prompt, same
extraction), and the metrics compare the two on the same questions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfa_lib import params, prompts, stats
from cfa_lib.data import Question
from cfa_lib.experiments.common import (
    Settings,
    engine_stats,
    grade_letter,
    load_run,
    metadata,
    ready_client,
    usage,
)
from cfa_lib.models import Completion, Request, complete_keyed, get_client, parse_model_name
from cfa_lib.perturbation import (
    PerturbationRecord,
    build_perturbations,
    coverage_counts,
    left_out,
    load_templates,
    template_perturbations,
)
from cfa_lib.results import ResultRow, new_run_id, write_results

EXPERIMENT = "counterfactual"


@dataclass
class Row(ResultRow):
    """One question of a counterfactual run: the original answer and its perturbations (each a dict with
    the record of how it was built and checked, and the subject's answer when it was valid)."""

    original: dict[str, Any]
    perturbations: list[dict[str, Any]]
    question_id: str | None = None
    correct_answer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        row = super().to_dict()
        return {"question_id": row.pop("question_id"), "correct_answer": row.pop("correct_answer"), **row}


def default_generator(model: str) -> str:
    """gpt-4o writes perturbations for OpenAI runs (as in the card); any other model writes its own."""
    return "gpt-4o" if parse_model_name(model).backend == "openai" else model


def check_run_options(generator_model: str | None = None, perturbation_levels: Sequence[int] = (1,),
                      seed: int = 0) -> None:
    """The notebook's own parameters, checked before the cost estimate and any call."""
    params.check_levels(perturbation_levels)
    if generator_model is not None:
        params.check_model(generator_model, "generator_model")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise params.ParameterError(f"Parameter seed={seed!r} is not valid: accepted values are an integer.")


def estimate(settings: Settings):
    """Cost of the subject's answers to the originals (perturbations and generator calls come on top)."""
    return get_client(settings.model).estimate([Request(prompts.mcq_messages(q)) for q in settings.questions()])


def run(settings: Settings, generator_model: str | None = None, perturbation_levels: Sequence[int] = (1,),
        seed: int = 0) -> tuple[dict[str, Any], Path]:
    check_run_options(generator_model, perturbation_levels, seed)
    levels = params.check_levels(perturbation_levels)
    generator_name = params.check_model(generator_model or default_generator(settings.model), "generator_model")
    questions = settings.questions()
    client = ready_client(settings.model)

    records = perturbations(questions, settings, levels, seed, generator_name, client)
    asked = {q.id: q for q in questions} | {r.as_question().id: r.as_question() for r in records if r.valid}
    answers = complete_keyed(client, {qid: Request(prompts.mcq_messages(q)) for qid, q in asked.items()},
                             **settings.engine(), desc="Originals and perturbations")
    rows = [row_of(question, [r for r in records if r.question_id == question.id], answers) for question in questions]
    summary = summarize(rows, levels)
    summary["coverage"] = {str(k): v for k, v in coverage_counts(records).items()}
    summary["usage"] = {"subject": usage(list(answers.values()))}
    meta = metadata(EXPERIMENT, settings, len(questions), engine=engine_stats(subject=client),
                    generator_model=generator_name,
                    perturbation_levels=levels, perturbation_seed=seed)
    meta.pop("judge_model")
    data = {"metadata": meta, "summary": summary, "results": [row.to_dict() for row in rows]}
    return data, write_results(EXPERIMENT, new_run_id(settings.model, settings.dataset), data)


def perturbations(questions: Sequence[Question], settings: Settings, levels: Sequence[int], seed: int,
                  generator_name: str, client: Any) -> list[PerturbationRecord]:
    """Verified templates first (offline, no model call); the generator describes only what has none.

    A question the census left out (no number, numbers that decide nothing, or computational without a
    faithful template) is `not_perturbable` with its reviewed reason, without asking. So a run on CFA-Easy
    or CFA-Challenge, whose every question is in the census, never loads a generator.
    """
    templates = load_templates(settings.dataset)
    reviewed = left_out(settings.dataset)
    by_template = template_perturbations([q for q in questions if q.id in templates or q.id in reviewed],
                                         templates, levels, seed, reviewed)
    rest = [q for q in questions if q.id not in templates and q.id not in reviewed]
    if not rest:
        return order_like(questions, by_template)
    generator = client if generator_name == settings.model else ready_client(generator_name)
    by_generator = build_perturbations(rest, generator, levels=levels, seed=seed,
                                       max_concurrency=settings.max_concurrency)
    return order_like(questions, by_template + by_generator)


def order_like(questions: Sequence[Question], records: Sequence[PerturbationRecord]) -> list[PerturbationRecord]:
    position = {q.id: i for i, q in enumerate(questions)}
    return sorted(records, key=lambda r: (position[r.question_id], r.level))


def outcome(completion: Completion, question: Question) -> dict[str, Any]:
    """A multiple-choice answer as the study's files record it, for originals and perturbations alike."""
    letter = grade_letter(completion, question)
    return {"answer": letter.letter, "correct": letter.correct, "response": completion.text, "error": letter.error}


def row_of(question: Question, records: Sequence[PerturbationRecord], answers: Mapping[str, Completion]) -> Row:
    """A question's row: its original answer and every perturbation attempt, answered when valid."""
    perturbations = []
    for record in records:
        entry: dict[str, Any] = {"valid": record.valid, **record.to_dict()}
        if record.valid:
            perturbed = record.as_question()
            answered = outcome(answers[perturbed.id], perturbed)
            entry.update(model_answer=answered["answer"], correct=answered["correct"], response=answered["response"],
                         error=answered["error"])
        perturbations.append(entry)
    return Row(question_id=question.id, correct_answer=question.answer,
               original=outcome(answers[question.id], question), perturbations=perturbations)


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _ci(values: Sequence[bool]) -> list[float] | None:
    return list(stats.wilson_interval(sum(values), len(values))) if values else None


def flips(rows: Sequence[Row], level: int) -> dict[str, int]:
    """Decision questions whose perturbation changed the correct option: did the model follow the new key,
    or stay with the option that was right before (the strongest sign of a memorized answer)?"""
    flipped = [(r, p) for r in rows for p in r.perturbations
               if p["level"] == level and p["valid"] and p.get("flipped") and p.get("correct") is not None]
    return {
        "n": len(flipped),
        "followed_new_key": sum(p["model_answer"] == p["correct_letter"] for _, p in flipped),
        "stayed_with_old_key": sum(p["model_answer"] == r.correct_answer for r, p in flipped),
    }


def summarize(rows: Sequence[Row], levels: Sequence[int] | None = None) -> dict[str, Any]:
    """The card's metrics on paired outcomes, plus the original study's own formulas for comparison.

    Ours compare originals and perturbations on the same questions; the study's memorization gap
    subtracted the perturbed accuracy from the accuracy on *all* originals, and its robust accuracy
    counted questions without any valid perturbation as robust.
    """
    originals = [r.original["correct"] for r in rows if r.original["correct"] is not None]
    levels = levels or sorted({p["level"] for r in rows for p in r.perturbations})
    by_level: dict[str, Any] = {}
    for level in levels:
        pairs = [(r.original["correct"], p["correct"]) for r in rows for p in r.perturbations
                 if p["level"] == level and p["valid"] and p.get("correct") is not None
                 and r.original["correct"] is not None]
        before, after = [a for a, _ in pairs], [b for _, b in pairs]
        outcomes = stats.paired_outcomes(before, after)
        acc_before, acc_after = _rate(before), _rate(after)
        gap = None if not pairs else acc_before - acc_after
        by_level[str(level)] = {
            "n_valid": sum(p["valid"] for r in rows for p in r.perturbations if p["level"] == level),
            "n_paired": len(pairs),
            "accuracy": acc_after,
            "accuracy_ci": _ci(after),
            "accuracy_original_on_valid": acc_before,
            "accuracy_original_on_valid_ci": _ci(before),
            "memorization_gap": gap,
            "memorization_gap_ci": list(stats.paired_bootstrap_diff(before, after)[1:]) if len(pairs) >= 2 else None,
            "consistency_score": None if not acc_before else 1 - gap / acc_before,
            "memorization_suspect": outcomes.b / len(pairs) if pairs else None,
            "mcnemar_test": stats.mcnemar(outcomes.b, outcomes.c).to_dict(),
            "memorization_gap_as_published": None if not originals or acc_after is None
            else _rate(originals) - acc_after,
            "flips": flips(rows, level),
            "by_source": dict(Counter(p.get("source") or "generator" for r in rows for p in r.perturbations
                                      if p["level"] == level and p["valid"])),
        }
    tested = [r for r in rows if r.original["correct"] is not None
              and any(p["valid"] and p.get("correct") is not None for p in r.perturbations)]

    def robust(r: Row) -> bool:
        return bool(r.original["correct"]) and all(p["correct"] for p in r.perturbations
                                                      if p["valid"] and p.get("correct") is not None)

    suspects = [bool(r.original["correct"]) and not robust(r) for r in tested]
    n = len(rows)
    return {
        "n_questions": n,
        "accuracy_original": _rate(originals),
        "accuracy_original_ci": _ci(originals),
        "perturbation_levels": by_level,
        "n_tested": len(tested),
        "robust_accuracy": _rate([robust(r) for r in tested]),
        "memorization_suspect": _rate(suspects),
        "as_published": {
            "robust_accuracy": sum(robust(r) for r in rows if r.original["correct"] is not None) / n if n else None,
            "memorization_suspect": sum(suspects) / n if n else None,
        },
    }


def load(path: str | Path) -> dict[str, Any]:
    """A results file of this experiment (ours or the original study's), with its summary recomputed."""
    return load_run(path, EXPERIMENT, Row, lambda rows, meta: summarize(rows, meta.get("perturbation_levels")),
                    regrade)


_NOTHING_CHANGED = re.compile(
    r"(?i)\b(?:no|nothing)\b[^.]*\b(?:changes?|changed|modified|altered)\b|\bnot\s+(?:changed|modified|altered)\b"
    r"|\bunchanged\b")


def unchanged_reason(p: Mapping[str, Any]) -> str | None:
    """Why a perturbation marked valid tested nothing: no recorded change, a change list saying nothing
    changed, or a perturbed question identical to the original."""
    if "changes_made" in p:
        changes = [str(c) for c in p.get("changes_made") or []]
        if not changes:
            return "no recorded change"
        if all(_NOTHING_CHANGED.search(c) and not re.search(r"(?i)\bbut\b", c) for c in changes):
            return "the change list says nothing changed"
    if "changed" in p and not p.get("changed"):
        return "no recorded change"
    return None


def regrade(rows: list[Row]) -> tuple[list[Row], dict[str, int]]:
    """This toolkit's validity rule on any file: a perturbation that changed nothing is not valid."""
    changes: Counter[str] = Counter()
    out = []
    for row in rows:
        perturbations = []
        for p in row.perturbations:
            why = unchanged_reason(p) if p.get("valid") else None
            if why:
                changes[why] += 1
                p = {**p, "valid": False, "status": "rejected", "reason": f"re-graded: {why}"}
            perturbations.append(p)
        out.append(Row(original=row.original, perturbations=perturbations, question_id=row.question_id,
                       correct_answer=row.correct_answer, extra=row.extra))
    return out, dict(changes)

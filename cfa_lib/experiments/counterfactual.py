"""Counterfactual testing (experiment I1): is a correct answer reasoning or memory?

The numbers of a question are changed and its new answer is computed by `cfa_lib.perturbation` from a
verified formula, never taken from a model. The subject answers the original and every valid
perturbation in the multiple-choice format of the option-bias experiment (same prompt, same
extraction), and the metrics compare the two on the same questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfa_lib import params, prompts, stats
from cfa_lib.data import Question
from cfa_lib.experiments.common import Settings, metadata, ready_client, usage
from cfa_lib.experiments.option_bias import grade_mcq
from cfa_lib.models import Request, get_client, parse_model_name
from cfa_lib.perturbation import build_perturbations, coverage_counts
from cfa_lib.results import load_results, new_run_id, write_results

EXPERIMENT = "counterfactual"


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
    generator = client if generator_name == settings.model else ready_client(generator_name)

    records = build_perturbations(questions, generator, levels=levels, seed=seed,
                                  max_concurrency=settings.max_concurrency)
    valid = [r for r in records if r.valid]
    asked: list[Question] = list(questions) + [r.as_question() for r in valid]
    answers = client.complete_many([Request(prompts.mcq_messages(q)) for q in asked],
                                   max_concurrency=settings.max_concurrency, desc="Originals and perturbations")
    graded = {q.id: {**grade_mcq(c, q.answer), "response": c.text} for q, c in zip(asked, answers, strict=True)}

    rows = []
    for question in questions:
        original = graded[question.id]
        perturbations = []
        for record in (r for r in records if r.question_id == question.id):
            entry: dict[str, Any] = {"valid": record.valid, **record.to_dict()}
            if record.valid:
                outcome = graded[record.as_question().id]
                entry.update(model_answer=outcome["answer_with"], correct=outcome["correct_with_options"],
                             response=outcome["response"], error=outcome["error_with"])
            perturbations.append(entry)
        rows.append({
            "question_id": question.id,
            "correct_answer": question.answer,
            "original": {"answer": original["answer_with"], "correct": original["correct_with_options"],
                         "response": original["response"], "error": original["error_with"]},
            "perturbations": perturbations,
        })
    summary = summarize(rows, levels)
    summary["coverage"] = {str(k): v for k, v in coverage_counts(records).items()}
    summary["usage"] = {"subject": usage(answers)}
    meta = metadata(EXPERIMENT, settings, len(questions), generator_model=generator_name,
                    perturbation_levels=levels, perturbation_seed=seed)
    meta.pop("judge_model")
    data = {"metadata": meta, "summary": summary, "results": rows}
    return data, write_results(EXPERIMENT, new_run_id(settings.model, settings.dataset), data)


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _ci(values: Sequence[bool]) -> list[float] | None:
    return list(stats.wilson_interval(sum(values), len(values))) if values else None


def summarize(rows: Sequence[dict[str, Any]], levels: Sequence[int] | None = None) -> dict[str, Any]:
    """The card's metrics on paired outcomes, plus the original study's own formulas for comparison.

    Ours compare originals and perturbations on the same questions; the study's memorization gap
    subtracted the perturbed accuracy from the accuracy on *all* originals, and its robust accuracy
    counted questions without any valid perturbation as robust.
    """
    originals = [r["original"]["correct"] for r in rows if r["original"]["correct"] is not None]
    levels = levels or sorted({p["level"] for r in rows for p in r["perturbations"]})
    by_level: dict[str, Any] = {}
    for level in levels:
        pairs = [(r["original"]["correct"], p["correct"]) for r in rows for p in r["perturbations"]
                 if p["level"] == level and p["valid"] and p.get("correct") is not None
                 and r["original"]["correct"] is not None]
        before, after = [a for a, _ in pairs], [b for _, b in pairs]
        outcomes = stats.paired_outcomes(before, after)
        acc_before, acc_after = _rate(before), _rate(after)
        gap = None if not pairs else acc_before - acc_after
        by_level[str(level)] = {
            "n_valid": sum(p["valid"] for r in rows for p in r["perturbations"] if p["level"] == level),
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
        }
    tested = [r for r in rows if r["original"]["correct"] is not None
              and any(p["valid"] and p.get("correct") is not None for p in r["perturbations"])]

    def robust(r: dict[str, Any]) -> bool:
        return bool(r["original"]["correct"]) and all(p["correct"] for p in r["perturbations"]
                                                      if p["valid"] and p.get("correct") is not None)

    suspects = [bool(r["original"]["correct"]) and not robust(r) for r in tested]
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
            "robust_accuracy": sum(robust(r) for r in rows if r["original"]["correct"] is not None) / n if n else None,
            "memorization_suspect": sum(suspects) / n if n else None,
        },
    }


def load(path: str | Path) -> dict[str, Any]:
    data = load_results(path, EXPERIMENT)  # checks the rows carry what summarize needs
    data["recomputed_summary"] = summarize(data["results"], data["metadata"].get("perturbation_levels"))
    return data

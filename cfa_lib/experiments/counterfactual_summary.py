"""Counterfactual testing's summary: originals and their perturbations compared on the same questions,
beside the original study's own formulas.

Ours compare originals and perturbations on the same questions; the study's memorization gap subtracted
the perturbed accuracy from the accuracy on *all* originals, and its robust accuracy counted questions
without any valid perturbation as robust (`as_published`).

Beside all valid items, the same measures on the separating items only: a decision whose key flipped, or a
numeric key a memorized answer misses (`separating` of each perturbation, set when it was built). An item a
memorizer passes inflates robust accuracy and shrinks the gap; a file without the field has none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfa_lib import stats
from cfa_lib.experiments.contract import Summary
from cfa_lib.stats import McNemarResult


@dataclass(frozen=True)
class Flips(Summary):
    """Decision questions whose perturbation changed the correct option, answered: did the model follow
    the new key, or stay with the option that was right before (the strongest sign of a memorized answer)?"""

    n: int
    followed_new_key: int
    stayed_with_old_key: int


@dataclass(frozen=True)
class Separating(Summary):
    """One level's separating items (a flipped decision, a key a memorized answer misses), originals against
    them on the same questions."""

    n_valid: int = 0
    n_paired: int = 0
    accuracy: float | None = None
    accuracy_original_on_valid: float | None = None
    memorization_gap: float | None = None
    memorization_gap_ci: list[float] | None = None


@dataclass(frozen=True)
class PerturbationLevel(Summary):
    """One perturbation level: valid perturbations, and the originals against them on the same questions."""

    n_valid: int
    n_paired: int
    accuracy: float | None  # on the perturbed questions
    accuracy_ci: list[float] | None
    accuracy_original_on_valid: float | None  # on their originals
    accuracy_original_on_valid_ci: list[float] | None
    memorization_gap: float | None  # original − perturbed, same questions
    memorization_gap_ci: list[float] | None
    consistency_score: float | None
    memorization_suspect: float | None  # right on the original, wrong on the perturbation
    mcnemar_test: McNemarResult
    memorization_gap_as_published: float | None  # the study's: all originals − perturbed
    flips: Flips
    by_source: dict[str, int]  # template or generator
    separating: Separating = Separating()


@dataclass(frozen=True)
class StudyFormulas(Summary):
    robust_accuracy: float | None  # untested questions counted as robust
    memorization_suspect: float | None  # over all questions


@dataclass(frozen=True)
class CounterfactualSummary(Summary):
    n_questions: int
    accuracy_original: float | None
    accuracy_original_ci: list[float] | None
    perturbation_levels: dict[str, PerturbationLevel]  # by level ("1", "2", "3")
    n_tested: int  # originals answered with at least one valid perturbation answered
    robust_accuracy: float | None  # right on the original and on every valid perturbation
    memorization_suspect: float | None
    as_published: StudyFormulas
    n_tested_separating: int = 0  # originals answered with at least one separating perturbation answered
    robust_accuracy_separating: float | None = None  # right on the original and on every separating one


def _rate(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _ci(values: Sequence[bool]) -> list[float] | None:
    return list(stats.wilson_interval(sum(values), len(values))) if values else None


def _answered(p: dict[str, Any]) -> bool:
    return bool(p["valid"]) and p.get("correct") is not None


def _separating(p: dict[str, Any]) -> bool:
    return bool(p["valid"]) and bool(p.get("separating"))


def _paired(rows: Sequence[Any], level: int, separating: bool = False) -> list[tuple[bool, bool]]:
    """(original right, perturbation right) of every answered valid perturbation of `level` (only the
    separating ones with `separating`) whose original was graded."""
    return [(r.original["correct"], p["correct"]) for r in rows for p in r.perturbations
            if p["level"] == level and _answered(p) and r.original["correct"] is not None
            and (not separating or _separating(p))]


def _gap_ci(before: Sequence[bool], after: Sequence[bool]) -> list[float] | None:
    return list(stats.paired_bootstrap_diff(before, after)[1:]) if len(before) >= 2 else None


def summarize_separating(rows: Sequence[Any], level: int) -> Separating:
    pairs = _paired(rows, level, separating=True)
    before, after = [a for a, _ in pairs], [b for _, b in pairs]
    acc_before, acc_after = _rate(before), _rate(after)
    return Separating(
        n_valid=sum(_separating(p) for r in rows for p in r.perturbations if p["level"] == level),
        n_paired=len(pairs), accuracy=acc_after, accuracy_original_on_valid=acc_before,
        memorization_gap=None if not pairs else acc_before - acc_after,  # type: ignore[operator]
        memorization_gap_ci=_gap_ci(before, after))


def flips(rows: Sequence[Any], level: int) -> Flips:
    flipped = [(r, p) for r in rows for p in r.perturbations
               if p["level"] == level and p["valid"] and p.get("flipped") and p.get("correct") is not None]
    return Flips(n=len(flipped),
                 followed_new_key=sum(p["model_answer"] == p["correct_letter"] for _, p in flipped),
                 stayed_with_old_key=sum(p["model_answer"] == r.correct_answer for r, p in flipped))


def summarize_level(rows: Sequence[Any], level: int, originals: Sequence[bool]) -> PerturbationLevel:
    pairs = _paired(rows, level)
    before, after = [a for a, _ in pairs], [b for _, b in pairs]
    outcomes = stats.paired_outcomes(before, after)
    acc_before, acc_after = _rate(before), _rate(after)
    gap = None if not pairs else acc_before - acc_after
    return PerturbationLevel(
        n_valid=sum(p["valid"] for r in rows for p in r.perturbations if p["level"] == level),
        n_paired=len(pairs),
        accuracy=acc_after,
        accuracy_ci=_ci(after),
        accuracy_original_on_valid=acc_before,
        accuracy_original_on_valid_ci=_ci(before),
        memorization_gap=gap,
        memorization_gap_ci=_gap_ci(before, after),
        consistency_score=None if not acc_before else 1 - gap / acc_before,
        memorization_suspect=outcomes.b / len(pairs) if pairs else None,
        mcnemar_test=stats.mcnemar(outcomes.b, outcomes.c),
        memorization_gap_as_published=None if not originals or acc_after is None else _rate(originals) - acc_after,
        flips=flips(rows, level),
        by_source=dict(Counter(p.get("source") or "generator" for r in rows for p in r.perturbations
                               if p["level"] == level and p["valid"])),
        separating=summarize_separating(rows, level),
    )


def summarize(rows: Sequence[Any], levels: Sequence[int] | None = None) -> CounterfactualSummary:
    """The card's metrics on paired outcomes, plus the original study's own formulas for comparison; `rows`
    are `counterfactual.Row`s, `levels` default to those the rows carry."""
    originals = [r.original["correct"] for r in rows if r.original["correct"] is not None]
    levels = levels or sorted({p["level"] for r in rows for p in r.perturbations})
    tested = [r for r in rows if r.original["correct"] is not None and any(_answered(p) for p in r.perturbations)]

    def robust(r: Any) -> bool:
        return bool(r.original["correct"]) and all(p["correct"] for p in r.perturbations if _answered(p))

    suspects = [bool(r.original["correct"]) and not robust(r) for r in tested]
    separated = [r for r in tested if any(_answered(p) and _separating(p) for p in r.perturbations)]

    def robust_separating(r: Any) -> bool:
        return bool(r.original["correct"]) and all(p["correct"] for p in r.perturbations
                                                   if _answered(p) and _separating(p))

    n = len(rows)
    return CounterfactualSummary(
        n_questions=n,
        accuracy_original=_rate(originals),
        accuracy_original_ci=_ci(originals),
        perturbation_levels={str(level): summarize_level(rows, level, originals) for level in levels},
        n_tested=len(tested),
        robust_accuracy=_rate([robust(r) for r in tested]),
        memorization_suspect=_rate(suspects),
        as_published=StudyFormulas(
            robust_accuracy=sum(robust(r) for r in rows if r.original["correct"] is not None) / n if n else None,
            memorization_suspect=sum(suspects) / n if n else None),
        n_tested_separating=len(separated),
        robust_accuracy_separating=_rate([robust_separating(r) for r in separated]),
    )

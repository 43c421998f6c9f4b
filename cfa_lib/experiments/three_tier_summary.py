"""Three-tier grading's summary: levels, strict and lenient accuracy, error categories.

The summary reads each answer as a `Tiered` (its outcome, level and error category), so it depends on the
one outcome type, not on the file's fields; `three_tier.Row.tiered` makes one from a row of any file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfa_lib import stats
from cfa_lib.experiments.contract import Summary, tally
from cfa_lib.experiments.outcome import Outcome
from cfa_lib.experiments.study_files import LEVEL_NAMES, file_code


@dataclass(frozen=True)
class Tiered:
    """One open answer as the summary sees it."""

    outcome: Outcome  # correct (A), partial (B), incorrect or no answer (C), or excluded and why
    level: str | None  # exact | directional | incorrect, None when excluded
    auto_graded: bool  # numbers decided, not the judge
    error_category: str | None  # of a Level C answer, when attributed
    answerable: bool  # open-answerable: the stem is a question without its options


@dataclass(frozen=True)
class LevelSummary(Summary):
    """The card's summary (the keys of the study's A1 files, and more); excluded answers are reported apart."""

    n_questions: int
    n_graded: int  # at a level: A, B or C
    n_excluded: int  # failed, cut short, no judge verdict, graded against no ground
    excluded_reasons: dict[str, int]  # by the files' codes (MODEL_FAILED, TRUNCATED, GOLD_NOT_GROUNDED, ...)
    level_distribution: dict[str, int]  # exact, directional, incorrect
    level_rates: dict[str, float | None]
    strict_accuracy: float | None  # Level A
    strict_accuracy_ci: tuple[float, float] | None
    lenient_accuracy: float | None  # Levels A and B
    lenient_accuracy_ci: tuple[float, float] | None
    auto_graded: int
    no_answer: int  # refusals and hedges, graded C
    error_categories: dict[str, int]


@dataclass(frozen=True)
class ThreeTierSummary(LevelSummary):
    """Every question, and under `answerable` the questions that can be asked without their options (the
    subset the open format really tests)."""

    answerable: LevelSummary


def summarize_levels(answers: Sequence[Tiered]) -> dict[str, Any]:
    graded = [a for a in answers if a.outcome.excluded is None]
    n = len(graded)
    levels = {name: sum(a.level == name for a in graded) for name in LEVEL_NAMES.values()}
    lenient = levels["exact"] + levels["directional"]
    categories = [a.error_category for a in graded if a.level == "incorrect"]
    return {
        "n_questions": len(answers),
        "n_graded": n,
        "n_excluded": len(answers) - n,
        "excluded_reasons": tally([file_code(a.outcome) for a in answers if a.outcome.excluded is not None]),
        "level_distribution": levels,
        "level_rates": {k: (v / n if n else None) for k, v in levels.items()},
        "strict_accuracy": levels["exact"] / n if n else None,
        "strict_accuracy_ci": stats.wilson_interval(levels["exact"], n) if n else None,
        "lenient_accuracy": lenient / n if n else None,
        "lenient_accuracy_ci": stats.wilson_interval(lenient, n) if n else None,
        "auto_graded": sum(a.auto_graded for a in graded),
        "no_answer": sum(a.outcome.status == "no_answer" for a in graded),
        "error_categories": tally([c for c in categories if c is not None]),
    }


def summarize(answers: Sequence[Tiered]) -> ThreeTierSummary:
    """The summary over every answer and, under `answerable`, over the open-answerable questions."""
    return ThreeTierSummary(**summarize_levels(answers),
                            answerable=LevelSummary(**summarize_levels([a for a in answers if a.answerable])))

"""Option bias's summary: the card's statistics on the questions answered in both formats.

The summary reads each question as a `Pair` of outcomes (Format A, Format B), so it depends on the one
outcome type, not on the file's fields; `option_bias.Row.pair` makes one from a row of any file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfa_lib import stats
from cfa_lib.experiments.contract import Summary, tally
from cfa_lib.experiments.outcome import Outcome
from cfa_lib.experiments.study_files import file_code
from cfa_lib.stats import McNemarResult


@dataclass(frozen=True)
class Pair:
    """One question as the summary sees it: both formats' outcomes and the file's own words for them."""

    with_options: Outcome
    without_options: Outcome
    verdict: str  # Format B's `judge_verdict` as the file spells it (the study's "CORRECT" included)
    answerable: bool  # open-answerable: the stem is a question without its options
    open_status: str | None  # what became of Format B's response (None in the study's files)

    @property
    def exclusion(self) -> str | None:
        """Why the question is left out of the pairs, in the files' spelling, or None when it is paired."""
        if self.without_options.excluded is not None:
            return file_code(self.without_options)
        if self.with_options.excluded is not None:
            return f"{file_code(self.with_options)} (with options)"
        return None


@dataclass(frozen=True)
class Contingency(Summary):
    both_correct: int
    with_only: int  # right with the options only: option-biased
    without_only: int
    both_wrong: int


@dataclass(frozen=True)
class PairedSummary(Summary):
    """The card's summary on the paired questions (the keys of the study's A5 files, and more)."""

    n_questions: int
    n_paired: int  # graded in both formats
    n_excluded: int  # a failed call, a response cut short, a judge panel without a verdict: in either format
    excluded_reasons: dict[str, int]  # by the files' codes; "(with options)" when Format A is the cause
    n_no_answer_with_options: int
    verdicts: dict[str, int]
    accuracy_with_options: float | None
    accuracy_without_options: float | None
    accuracy_with_options_ci: tuple[float, float] | None
    accuracy_without_options_ci: tuple[float, float] | None
    option_bias: float | None  # accuracy with options − without, on the same questions
    option_bias_ci: list[float] | None  # paired bootstrap
    option_bias_bootstrap_estimate: float | None
    n_biased_questions: int
    bias_rate: float | None
    contingency: Contingency
    mcnemar_test: McNemarResult


@dataclass(frozen=True)
class OptionBiasSummary(PairedSummary):
    """All questions, and the same statistics over the open-answerable ones: the like-with-like headline,
    since a stem that points at its options is no question without them."""

    answerable: PairedSummary
    open_status: dict[str, int]

    @property
    def variants(self) -> dict[str, Any]:
        """The answer-format variants' summaries ({} when none was asked or attached)."""
        return self.facts.get("variants") or {}


def summarize_paired(pairs: Sequence[Pair], seed: int = 0) -> dict[str, Any]:
    """The card's statistics, recomputed from the outcomes (ours or the original study's) of paired questions."""
    paired = [p for p in pairs if p.exclusion is None]
    with_options = [bool(p.with_options.correct) for p in paired]
    without_options = [bool(p.without_options.correct) for p in paired]
    n = len(paired)
    outcomes = stats.paired_outcomes(with_options, without_options)
    acc_with = sum(with_options) / n if n else None
    acc_without = sum(without_options) / n if n else None
    bias, low, high = stats.paired_bootstrap_diff(with_options, without_options, seed=seed) if n >= 2 \
        else (None,) * 3
    return {
        "n_questions": len(pairs),
        "n_paired": n,
        "n_excluded": len(pairs) - n,
        "excluded_reasons": tally([p.exclusion for p in pairs if p.exclusion]),
        "n_no_answer_with_options": sum(p.with_options.status == "no_answer" for p in paired),
        "verdicts": tally([p.verdict for p in pairs]),
        "accuracy_with_options": acc_with,
        "accuracy_without_options": acc_without,
        "accuracy_with_options_ci": stats.wilson_interval(sum(with_options), n) if n else None,
        "accuracy_without_options_ci": stats.wilson_interval(sum(without_options), n) if n else None,
        "option_bias": None if n == 0 else acc_with - acc_without,
        "option_bias_ci": None if low is None else [low, high],
        "option_bias_bootstrap_estimate": bias,
        "n_biased_questions": outcomes.b,
        "bias_rate": outcomes.b / n if n else None,
        "contingency": Contingency(outcomes.a, outcomes.b, outcomes.c, outcomes.d),
        "mcnemar_test": stats.mcnemar(outcomes.b, outcomes.c),
    }


def summarize(pairs: Sequence[Pair], seed: int = 0) -> OptionBiasSummary:
    """The summary over every question and, under `answerable`, over the open-answerable ones."""
    answerable = [p for p in pairs if p.answerable]
    return OptionBiasSummary(**summarize_paired(pairs, seed),
                             answerable=PairedSummary(**summarize_paired(answerable, seed)),
                             open_status=tally([p.open_status for p in pairs if p.open_status]))

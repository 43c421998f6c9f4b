"""The paired items a comparison across models stands on, from `items_frame`.

Each comparison pairs two conditions of the same question and the same model: Format A against Format B
(option bias, on the open-answerable questions), an original against its valid perturbations at one level
(the memorization gap). Only counted items enter (an excluded one is neither right nor wrong), and a
question enters a model's data only when both of its conditions are counted, as in the per-run summaries.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from cfa_lib.experiments.contract import FORMAT_A, FORMAT_B, ORIGINAL, PERTURBED
from cfa_lib.experiments.counterfactual import COUNTERFACTUAL
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.stats import MIN_PAIRS as MIN_PAIRS  # re-exported: the comparisons' threshold

CONDITION_NAMES = {"A": "Format A", "B": "Format B", "original": "the originals", "perturbed": "the perturbations"}


@dataclass(frozen=True)
class Measure:
    """What is compared: the effect is P(correct | control) − P(correct | treated), in probability."""

    name: str  # "option bias", "memorization gap (level 1)"
    experiment: str
    control: str  # the condition whose accuracy comes first: "A", "original"
    treated: str  # "B", "perturbed"


def option_bias() -> Measure:
    return Measure("option bias", OPTION_BIAS.name, FORMAT_A, FORMAT_B)


def memorization_gap(level: int) -> Measure:
    return Measure(f"memorization gap (level {level})", COUNTERFACTUAL.name, ORIGINAL, PERTURBED)


def paired_items(items: pd.DataFrame, measure: Measure, level: int | None = None) -> pd.DataFrame:
    """Columns subject, question_id, treated (0/1), correct (0/1): the counted items of the questions each
    subject answered in both conditions. Option bias keeps the open-answerable questions (the headline
    subset); the memorization gap keeps valid perturbations of `level`. The original study's as-published
    rows are left out: the re-graded ones of the same run stand for it."""
    frame = items[(items["experiment"] == measure.experiment) & ~items["as_published"].astype(bool)
                  & items["correct"].notna()]
    if measure.treated == FORMAT_B:  # the headline subset: the questions answerable without options
        frame = frame[frame["answerable"].astype(bool)]
    else:
        perturbed = frame["condition"] == measure.treated
        frame = frame[~perturbed | (frame["valid"].fillna(False).astype(bool)
                                    & (frame["perturbation_level"] == level))]
    frame = frame[frame["condition"].isin([measure.control, measure.treated])]
    out = pd.DataFrame({"subject": frame["subject"].to_numpy(), "question_id": frame["question_id"].to_numpy(),
                        "treated": (frame["condition"] == measure.treated).astype(int).to_numpy(),
                        "correct": frame["correct"].astype(int).to_numpy()})
    both = out.groupby(["subject", "question_id"])["treated"].transform("nunique") == 2
    return out[both].reset_index(drop=True)


def perturbation_levels(items: pd.DataFrame) -> list[int]:
    """The perturbation levels with valid items in the frame, in order."""
    valid = items[(items["condition"] == PERTURBED) & items["valid"].fillna(False).astype(bool)]
    return sorted(int(level) for level in valid["perturbation_level"].dropna().unique())

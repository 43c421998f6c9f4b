"""Do the models rank the same with and without the options? (Chandak et al. 2025 found they need not.)

Each model's accuracy in Format A (multiple choice) and Format B (open, answer matching) on the same
questions: those every ranked model answered in both formats (open-answerable, counted). Ranks are 1 for
the best (ties share the mean rank); Kendall's τ-b between the two accuracies (scipy.stats.kendalltau)
says how far the orders agree, and its 95% interval is a percentile bootstrap over questions (the same
questions resampled for every model). With two models τ is +1 or −1 by construction: it says only
whether the pair swapped; it carries information from three models on.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from cfa_lib.compare.paired import MIN_PAIRS, option_bias, paired_items


@dataclass(frozen=True)
class Ranked:
    subject: str
    accuracy_a: float
    accuracy_b: float
    rank_a: float  # 1 = best
    rank_b: float


@dataclass(frozen=True)
class Ranking:
    """The models' ranks in both formats and Kendall's τ between them, or why there is none."""

    ranked: list[Ranked] = field(default_factory=list)
    n_questions: int = 0  # shared by every ranked model
    tau: float | None = None
    tau_ci: tuple[float, float] | None = None
    n_resamples: int = 0
    n_undefined: int = 0  # bootstrap replicates where τ is undefined (one format's accuracies all tied)
    left_out: dict[str, str] = field(default_factory=dict)
    note: str | None = None  # why τ is missing or degenerate, in words
    kept_order: float | None = None  # two models: the share of resamples (τ defined) keeping the observed order

    @property
    def degenerate(self) -> bool:
        """Two models: τ is ±1 by construction."""
        return len(self.ranked) == 2


def _tau(x: np.ndarray, y: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(sps.kendalltau(x, y).statistic)


def _correctness(data: pd.DataFrame) -> tuple[list[str], pd.DataFrame, pd.DataFrame]:
    """Subjects, and their 0/1 answers (question × subject) in Format A and Format B on shared questions."""
    wide = data.pivot_table(index="question_id", columns=["treated", "subject"], values="correct", aggfunc="first")
    wide = wide.dropna()
    subjects = list(dict.fromkeys(data["subject"]))
    return subjects, wide[0][subjects], wide[1][subjects]


def rank(data: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> Ranking:
    """Ranks and τ from `paired.paired_items(items, paired.option_bias())`."""
    counts = data.groupby("subject", sort=False)["question_id"].nunique()
    left_out = {str(s): f"{n} paired questions (at least {MIN_PAIRS} are needed)"
                for s, n in counts.items() if n < MIN_PAIRS}
    data = data[~data["subject"].isin(left_out)]
    if data["subject"].nunique() == 0:
        return Ranking(left_out=left_out, note="no model has enough paired questions to rank")
    subjects, a, b = _correctness(data)
    if len(a) < MIN_PAIRS:
        return Ranking(left_out=left_out, n_questions=len(a),
                       note=f"the models share {len(a)} questions answered in both formats (at least "
                            f"{MIN_PAIRS} are needed)")
    acc_a, acc_b = a.to_numpy().mean(axis=0), b.to_numpy().mean(axis=0)
    rank_a, rank_b = sps.rankdata(-acc_a), sps.rankdata(-acc_b)
    ranked = [Ranked(s, float(x), float(y), float(ra), float(rb))
              for s, x, y, ra, rb in zip(subjects, acc_a, acc_b, rank_a, rank_b, strict=True)]
    ranking = Ranking(ranked, len(a), left_out=left_out)
    if len(subjects) < 2:
        return Ranking(ranked, len(a), left_out=left_out, note="a ranking needs at least two models")
    tau = _tau(acc_a, acc_b)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(a), size=(n_resamples, len(a)))
    boot_a, boot_b = a.to_numpy()[index].mean(axis=1), b.to_numpy()[index].mean(axis=1)
    taus = np.array([_tau(x, y) for x, y in zip(boot_a, boot_b, strict=True)])
    defined = taus[~np.isnan(taus)]
    interval = (float(np.percentile(defined, 2.5)), float(np.percentile(defined, 97.5))) if len(defined) else None
    note = None
    if np.isnan(tau):
        note = "τ is undefined: the accuracies tie in one format"
    elif len(subjects) == 2:
        note = ("with two models τ is +1 (same order) or −1 (swapped) by construction, so it carries no more "
                "than whether the pair swapped; what the resamples say is how often they keep the observed order")
    kept = float(np.mean(defined == tau)) if len(subjects) == 2 and len(defined) and not np.isnan(tau) else None
    return Ranking(ranking.ranked, ranking.n_questions, None if np.isnan(tau) else tau, interval, n_resamples,
                   int(np.isnan(taus).sum()), left_out, note, kept)


def rank_items(items: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> Ranking:
    """The ranking of the models of an `items_frame`, with and without the options."""
    return rank(paired_items(items, option_bias()), n_resamples, seed)

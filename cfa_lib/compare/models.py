"""Per-question models across runs: is one model's effect different from another's, questions shared?

The same hard question counts against every model, so the models' answers are not independent. A GEE
(statsmodels) with a logit link and an exchangeable correlation among all answers to one question, across
models and conditions, fits one probability per model × condition cell (cell means: correct ~ model ×
condition, saturated); its robust (sandwich) covariance carries the clustering by question.

The estimand is population-averaged and on the probability scale, like the per-run headlines: a model's
effect is P(correct | control) − P(correct | treated) (option bias: Format A − Format B; memorization gap:
original − perturbed), with a delta-method 95% interval from the robust covariance. The interaction test
asks whether the effects differ between models: a Wald χ² on the differences of effects (k − 1 degrees of
freedom), and pairwise differences with Holm's correction of their p-values.

A model is left out, in words, when a cell is all right or all wrong (separation: its log-odds is infinite)
or when it has fewer than `MIN_PAIRS` paired questions; `benchmarks/model_comparison_simulation.py`
checks the intervals' coverage.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats as sps
from scipy.special import expit
from statsmodels.stats.multitest import multipletests
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from cfa_lib.compare.paired import (
    CONDITION_NAMES,
    MIN_PAIRS,
    Measure,
    memorization_gap,
    option_bias,
    paired_items,
    perturbation_levels,
)

Z95 = float(sps.norm.ppf(0.975))


@dataclass(frozen=True)
class Effect:
    """One model's effect: the two accuracies the model fits and their difference, with its interval."""

    subject: str
    n_questions: int  # paired questions
    control: float  # fitted accuracy in the control condition (Format A, the original)
    treated: float
    effect: float  # control − treated, a difference of probabilities
    ci: tuple[float, float]  # delta method, robust covariance
    p_value: float  # effect = 0


@dataclass(frozen=True)
class PairwiseDifference:
    first: str
    second: str
    difference: float  # effect of `first` − effect of `second`
    ci: tuple[float, float]
    p_value: float
    p_holm: float  # Holm's correction over all the pairs compared


@dataclass(frozen=True)
class Interaction:
    """Do the effects differ between models? Wald χ² on the k − 1 differences to the first model, on the
    probability scale (the estimand) and, for a referee who asks for it, on the log-odds scale (do the odds
    ratios differ?): near a ceiling the same drop in points is a larger drop in log-odds, so the two can
    disagree."""

    chi2: float
    df: int
    p_value: float
    chi2_log_odds: float
    p_log_odds: float


def _wald(values: np.ndarray, cov: np.ndarray) -> tuple[float, float] | None:
    """χ² and p of "all k values equal", from their covariance; None when the differences have no variance."""
    k = len(values)
    contrast = np.zeros((k - 1, k))
    contrast[:, 0], contrast[np.arange(k - 1), np.arange(1, k)] = -1, 1
    diff, diff_cov = contrast @ values, contrast @ cov @ contrast.T
    if np.linalg.matrix_rank(diff_cov) < k - 1:  # a guard: `_left_out` removes the models that cause it
        return None
    chi2 = float(diff @ np.linalg.solve(diff_cov, diff))
    return chi2, float(sps.chi2.sf(chi2, k - 1))


@dataclass(frozen=True)
class Comparison:
    """A measure compared across models: what was fit, or in words why nothing could be."""

    measure: Measure
    effects: list[Effect] = field(default_factory=list)
    pairwise: list[PairwiseDifference] = field(default_factory=list)
    interaction: Interaction | None = None
    left_out: dict[str, str] = field(default_factory=dict)  # subject -> why it is not in the model
    n_questions: int = 0  # distinct questions (clusters) in the fit
    n_shared: int = 0  # of which every fitted model answered (in both conditions)
    problem: str | None = None  # why no model was fit

    @property
    def compared(self) -> bool:
        """At least two models' effects, tested against each other."""
        return self.interaction is not None


def _left_out(data: pd.DataFrame, measure: Measure) -> dict[str, str]:
    """The subjects the model cannot estimate, and why, in words."""
    why = {}
    for subject, rows in data.groupby("subject", sort=False):
        n = rows["question_id"].nunique()
        if n < MIN_PAIRS:
            why[str(subject)] = f"{n} paired questions (at least {MIN_PAIRS} are needed)"
            continue
        rates = rows.groupby("treated")["correct"].mean()
        extreme = [f"every answer {'right' if rate else 'wrong'} in {CONDITION_NAMES[condition]}"
                   for condition, rate in ((measure.control, rates[0]), (measure.treated, rates[1]))
                   if rate in (0.0, 1.0)]
        if extreme:
            why[str(subject)] = " and ".join(extreme) + " (separation: no finite log-odds)"
        elif rows.groupby("question_id")["correct"].nunique().max() < 2:
            why[str(subject)] = ("no question answered differently in the two conditions: the effect is 0 "
                                 "with no variance to estimate")
    return why


def _fit(data: pd.DataFrame, subjects: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Cell-mean log-odds (subject × condition, in that order) and their robust covariance."""
    cells = [(s, t) for s in subjects for t in (0, 1)]
    index = {cell: i for i, cell in enumerate(cells)}
    exog = np.zeros((len(data), len(cells)))
    exog[np.arange(len(data)), [index[(s, t)] for s, t in zip(data["subject"], data["treated"], strict=True)]] = 1
    order = np.argsort(data["question_id"].to_numpy(), kind="stable")  # GEE wants each cluster's rows together
    model = sm.GEE(data["correct"].to_numpy()[order], exog[order], groups=data["question_id"].to_numpy()[order],
                   family=sm.families.Binomial(), cov_struct=sm.cov_struct.Exchangeable())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = model.fit(maxiter=100)
    return np.asarray(result.params), np.asarray(result.cov_robust)


def _interval(estimate: float, se: float) -> tuple[float, float]:
    return estimate - Z95 * se, estimate + Z95 * se


def _p(estimate: float, se: float) -> float:
    return float(2 * sps.norm.sf(abs(estimate) / se)) if se > 0 else float("nan")


def compare(data: pd.DataFrame, measure: Measure) -> Comparison:
    """Fit the measure across the subjects of `data` (`paired.paired_items`); see the module's docstring."""
    left_out = _left_out(data, measure)
    data = data[~data["subject"].isin(left_out)]
    subjects = list(dict.fromkeys(data["subject"]))
    if not subjects:
        return Comparison(measure, left_out=left_out, problem="no model has enough paired questions")
    try:
        beta, cov = _fit(data, subjects)
    except (ConvergenceWarning, np.linalg.LinAlgError, ValueError) as exc:
        return Comparison(measure, left_out=left_out, problem=f"the GEE did not converge ({exc})")
    if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(cov))):
        return Comparison(measure, left_out=left_out, problem="the GEE gave no finite estimate")
    p = expit(beta)
    k = len(subjects)
    grad = np.zeros((k, 2 * k))  # d effect_m / d beta: p0(1 − p0) and −p1(1 − p1) in the model's two cells
    for m in range(k):
        grad[m, 2 * m] = p[2 * m] * (1 - p[2 * m])
        grad[m, 2 * m + 1] = -p[2 * m + 1] * (1 - p[2 * m + 1])
    effects_value = p[0::2] - p[1::2]
    effects_cov = grad @ cov @ grad.T
    counts = data.groupby("subject")["question_id"].nunique()
    shared = int((data.groupby("question_id")["subject"].nunique() == k).sum())
    effects = []
    for m, subject in enumerate(subjects):
        se = float(np.sqrt(max(effects_cov[m, m], 0.0)))
        effects.append(Effect(subject, int(counts[subject]), float(p[2 * m]), float(p[2 * m + 1]),
                              float(effects_value[m]), _interval(float(effects_value[m]), se),
                              _p(float(effects_value[m]), se)))
    comparison = Comparison(measure, effects, left_out=left_out, n_questions=int(data["question_id"].nunique()),
                            n_shared=shared)
    if k < 2:
        return comparison
    on_probability = _wald(effects_value, effects_cov)
    log_odds = np.zeros((k, 2 * k))  # the log odds ratio of each model: beta_control − beta_treated
    log_odds[np.arange(k), 2 * np.arange(k)], log_odds[np.arange(k), 2 * np.arange(k) + 1] = 1, -1
    on_log_odds = _wald(log_odds @ beta, log_odds @ cov @ log_odds.T)
    if on_probability is None or on_log_odds is None:
        return replace(comparison, problem="the differences between the models' effects have no variance to test")
    interaction = Interaction(on_probability[0], k - 1, on_probability[1], *on_log_odds)
    pairs = list(combinations(range(k), 2))
    raw = []
    for a, b in pairs:
        vector = np.zeros(k)
        vector[a], vector[b] = 1, -1
        estimate, se = float(vector @ effects_value), float(np.sqrt(max(vector @ effects_cov @ vector, 0.0)))
        raw.append((estimate, se, _p(estimate, se)))
    holm = multipletests([r[2] for r in raw], method="holm")[1]
    pairwise = [PairwiseDifference(subjects[a], subjects[b], estimate, _interval(estimate, se), p_value,
                                   float(adjusted))
                for (a, b), (estimate, se, p_value), adjusted in zip(pairs, raw, holm, strict=True)]
    return Comparison(measure, effects, pairwise, interaction, left_out, comparison.n_questions, shared)


def compare_items(items: pd.DataFrame) -> list[Comparison]:
    """Option bias and the memorization gap at every perturbation level the items carry, compared across
    the models of an `items_frame`."""
    measures = [(option_bias(), None), *((memorization_gap(level), level) for level in perturbation_levels(items))]
    return [compare(paired_items(items, measure, level), measure) for measure, level in measures]

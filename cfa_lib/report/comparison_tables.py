"""Notebook 04's comparison of models: one row per model with its headline figures, the per-question
model's effects and pairwise tests beneath, and the rankings with and without options.

The headline figures are the runs' own summaries (the same numbers as notebooks 01-03); the tests and the
rankings come from `cfa_lib.compare` on the items of `items_frame`. What cannot be computed (one model, too
few questions, separation) is said in words, never printed as a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from cfa_lib.compare.models import Comparison
from cfa_lib.compare.rankings import Ranking
from cfa_lib.experiments.counterfactual import COUNTERFACTUAL
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.experiments.three_tier import THREE_TIER
from cfa_lib.report.format import DASH, TooFew, ci, format_p, p_cell, paired, pct, pct_ci, pp
from cfa_lib.report.items_frame import subject_label
from cfa_lib.report.runs import Run
from cfa_lib.stats import wilson_interval

NEEDS_TWO = "only **{subject}** {what}: comparing models needs at least two"


def compared_runs(runs: Mapping[str, Sequence[Run]]) -> dict[str, list[Run]]:
    """The runs a comparison takes: the original study's files once, re-graded (not also as published)."""
    return {name: [run for run in group if not run.as_published] for name, group in runs.items()}


def _subjects(runs: Mapping[str, Sequence[Run]]) -> dict[str, dict[str, Any]]:
    """{subject: {experiment: summary}}, subjects named as `items_frame` names them."""
    chosen = compared_runs(runs)
    several = len({run.loaded.dataset for group in chosen.values() for run in group}) > 1
    table: dict[str, dict[str, Any]] = {}
    for name, group in chosen.items():
        for run in group:
            subject = subject_label(run.loaded.model, run.loaded.dataset, run.reference, several)
            table.setdefault(subject, {})[name] = run.summary
    return table


def _pp_ci(value: Any, interval: Sequence[float] | None) -> str:
    return DASH if value is None else f"{pp(value)} {ci(interval)}" if interval is not None else pp(value)


def _bootstrap_pp(value: Any, interval: Sequence[float] | None, n: int) -> str:
    """A paired difference with its bootstrap interval; on fewer than `MIN_PAIRS` pairs neither is printed
    ([0.0, 0.0] on four concordant pairs), only the count and what it needs (`format.paired`)."""
    if value is None:
        return DASH
    shown = paired(value, n)
    return str(shown) if isinstance(shown, TooFew) else _pp_ci(value, interval)


def _robust(summary: Any) -> str:
    if summary.robust_accuracy is None or not summary.n_tested:
        return DASH
    robust = round(summary.robust_accuracy * summary.n_tested)
    return pct_ci(summary.robust_accuracy, wilson_interval(robust, summary.n_tested))


def comparative_table(runs: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """A row per model: option bias on the open-answerable questions (pp, paired bootstrap 95% CI) and its
    pairs, strict and lenient accuracy of the open answers (Wilson), the memorization gap at each level (pp,
    paired bootstrap) and robust accuracy (Wilson, on the questions tested); a dash where the model has no
    such run."""
    by_subject = _subjects(runs)
    levels = sorted({level for s in by_subject.values() if COUNTERFACTUAL.name in s
                     for level in s[COUNTERFACTUAL.name].perturbation_levels})
    rows = {}
    for subject, found in by_subject.items():
        row: dict[str, str] = {}
        bias, tiers, counter = (found.get(e.name) for e in (OPTION_BIAS, THREE_TIER, COUNTERFACTUAL))
        headline = None if bias is None else bias.answerable
        row["option bias (pp)"] = DASH if headline is None else _bootstrap_pp(
            headline.option_bias, headline.option_bias_ci, headline.n_paired)
        row["pairs"] = DASH if headline is None else str(headline.n_paired)
        row["strict accuracy"] = DASH if tiers is None else pct_ci(tiers.strict_accuracy, tiers.strict_accuracy_ci)
        row["lenient accuracy"] = DASH if tiers is None else pct_ci(tiers.lenient_accuracy,
                                                                     tiers.lenient_accuracy_ci)
        for level in levels:
            at = None if counter is None else counter.perturbation_levels.get(level)
            row[f"gap, level {level} (pp)"] = DASH if at is None else _bootstrap_pp(
                at.memorization_gap, at.memorization_gap_ci, at.n_paired)
        row["robust accuracy"] = DASH if counter is None else _robust(counter)
        rows[subject] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("model")


def effects_table(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """Each model's effect as the per-question model fits it, beside the accuracies it fits."""
    rows = [{"measure": c.measure.name, "model": e.subject, "pairs": e.n_questions,
             "accuracy A / original": pct(e.control), "accuracy B / perturbed": pct(e.treated),
             "effect (pp) [95% CI]": _pp_ci(e.effect, e.ci), "p": p_cell(e.p_value)}
            for c in comparisons for e in c.effects]
    return pd.DataFrame(rows).fillna(DASH).set_index(["measure", "model"]) if rows else pd.DataFrame()


def pairwise_table(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """The interaction test (do the effects differ?) and every pair's difference, Holm-corrected."""
    rows = []
    for c in comparisons:
        if not c.compared:
            continue
        test = c.interaction
        rows += [{"measure": c.measure.name, "test": f"effects differ ({len(c.effects)} models){scale}",
                  "difference (pp) [95% CI]": DASH, "statistic": f"χ² = {chi2:.2f}, df = {test.df}",
                  "p": p_cell(p), "p (Holm)": DASH}
                 for scale, chi2, p in (("", test.chi2, test.p_value),
                                        (", on the log-odds scale", test.chi2_log_odds, test.p_log_odds))]
        rows += [{"measure": c.measure.name, "test": f"{d.first} − {d.second}",
                  "difference (pp) [95% CI]": _pp_ci(d.difference, d.ci), "statistic": DASH,
                  "p": p_cell(d.p_value), "p (Holm)": p_cell(d.p_holm)} for d in c.pairwise]
    return pd.DataFrame(rows).set_index(["measure", "test"]) if rows else pd.DataFrame()


def describe_comparisons(comparisons: Sequence[Comparison]) -> str:
    """In words: what was compared, what was left out and why, and what needs more models."""
    lines = []
    for c in comparisons:
        name = c.measure.name.capitalize()
        for subject, why in c.left_out.items():
            lines.append(f"* {name}: **{subject}** is not in the model: {why}.")
        if c.problem:
            lines.append(f"* {name}: " + (f"the effects are shown, but not tested against each other: {c.problem}."
                                          if c.effects else f"nothing to fit: {c.problem}."))
        elif not c.compared:
            lines.append(f"* {name}: " + NEEDS_TWO.format(subject=c.effects[0].subject, what="is fit") +
                         ". Its effect is shown; no test between models is possible.")
        else:
            test = c.interaction
            verdict = "differ" if test.p_value < 0.05 else "are not shown to differ"
            odds = "differ" if test.p_log_odds < 0.05 else "are not shown to differ"
            scale = (f"; the odds ratios {odds} too ({format_p(test.p_log_odds)})" if odds == verdict else
                     f"; on the log-odds scale, though, the odds ratios {odds} ({format_p(test.p_log_odds)}): "
                     "near a ceiling the same drop in points is a larger drop in log-odds")
            lines.append(f"* {name}: the effects in points {verdict} between the {len(c.effects)} models, each "
                         f"question a cluster ({c.n_questions} questions, {c.n_shared} answered by every model; "
                         f"{format_p(test.p_value)}){scale}.")
    return "\n".join(lines) if lines else "No run to compare."


def ranking_table(ranking: Ranking) -> pd.DataFrame:
    """Each model's accuracy and rank (1 = best) with the options (Format A) and without (Format B)."""
    rows = [{"model": r.subject, "accuracy A": pct(r.accuracy_a), "rank A": f"{r.rank_a:g}",
             "accuracy B": pct(r.accuracy_b), "rank B": f"{r.rank_b:g}",
             "rank change": f"{r.rank_a - r.rank_b:+g}" if r.rank_a != r.rank_b else "0"} for r in ranking.ranked]
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


def describe_ranking(ranking: Ranking) -> str:
    """Kendall's τ in words, or why there is none; which models were left out."""
    lines = [f"* **{s}** is not ranked: {why}." for s, why in ranking.left_out.items()]
    if not ranking.ranked:
        return "\n".join([*lines, f"* No ranking: {ranking.note}."])
    if len(ranking.ranked) < 2:
        return "\n".join([*lines, "* " + NEEDS_TWO.format(subject=ranking.ranked[0].subject, what="is ranked")
                           + "."])
    shared = f"on the {ranking.n_questions} open-answerable questions every ranked model answered in both formats"
    if ranking.tau is None:
        lines.append(f"* Kendall's τ {shared}: {ranking.note}.")
    elif ranking.degenerate:
        order = "the same" if ranking.tau > 0 else "swapped"
        lines.append(f"* Kendall's τ {shared} is {ranking.tau:+.0f}: the two models' order is {order}. "
                     f"{ranking.note.capitalize()}: {ranking.kept_order:.1%} of {ranking.n_resamples} "
                     "bootstrap resamples of the questions keep it.")
    else:
        interval = DASH if ranking.tau_ci is None else f"[{ranking.tau_ci[0]:+.2f}, {ranking.tau_ci[1]:+.2f}]"
        lines.append(f"* Kendall's τ-b {shared}: {ranking.tau:+.2f}, 95% bootstrap interval {interval} "
                     f"({ranking.n_resamples} resamples of the questions"
                     + (f"; τ undefined in {ranking.n_undefined} of them, left out)" if ranking.n_undefined
                        else ")") + ".")
    return "\n".join(lines)

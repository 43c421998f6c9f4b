"""The notebooks' "Human check": how a person's review of a run agrees with its rules and its judge.

Every table reads a `ReviewScore` (cfa_lib.review.scoring) by attribute. A run with a review file
(beside its results, or shipped in datasets/reviews/ for the study's runs) is shown with the reference
runs of the same experiment that have a shipped review, so the section has real numbers offline; a run
without one gets the sentence that says how to make it. A "cannot tell" is counted in every table and
left out of every figure; a statistic that is undefined prints as a dash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from cfa_lib.experiments.contract import Experiment
from cfa_lib.experiments.loading import LoadedRun, load_run, reference_files
from cfa_lib.paths import display_path
from cfa_lib.report.figures import COLORS, FULL_WIDTH, empty_figure, publication_style
from cfa_lib.report.format import DASH, ci, count, decimal, pct, pct_ci
from cfa_lib.report.runs import model_label
from cfa_lib.review.agreement import MIN_FOR_INTERVAL
from cfa_lib.review.files import beside, review_file
from cfa_lib.review.items import ours
from cfa_lib.review.scoring import ReviewScore, score_review


@dataclass(frozen=True)
class Reviewed:
    """A run and the score of its review."""

    label: str
    run: LoadedRun
    score: ReviewScore


MODEL_LABELS = "labels by a model"  # beside every run whose review is not a person's, in every table and figure


def _reviewed(run: LoadedRun, path: Path, reference: bool) -> Reviewed:
    """A run and its review's score, labelled with the run and, when a model made the labels, with that."""
    score = score_review(run, path)
    label = f"{model_label(run.model)} (reference)" if reference else model_label(run.model)
    return Reviewed(label if score.by_a_person else f"{label}, {MODEL_LABELS}", run, score)


def reviewed_runs(run: LoadedRun | None, entry: Experiment) -> list[Reviewed]:
    """This run's review (if it has one) and the shipped reviews of the experiment's reference runs."""
    out = []
    if run is not None and (path := review_file(run.path)) is not None:
        out.append(_reviewed(run, path, False))
    for results in reference_files(entry):
        if (path := review_file(results)) is None or (run is not None and results.resolve() == run.path.resolve()):
            continue
        # the shipped reviews saw the dataset's keys (they predate the key audit): scored against that grading
        out.append(_reviewed(load_run(entry, results, keys="original"), path, True))
    return out


def how_to_review(run: LoadedRun) -> str:
    """The sentence a run without a review gets: how to make one."""
    results = display_path(run.path)
    return (f"This run has no review yet. To make one, write a blind sample with `python -m cfa_lib.review export "
            f"{results} --n 60 --out {display_path(beside(run.path))}`, fill in the `verdict` column in any "
            "spreadsheet program (or label one item at a time in JupyterLab with "
            "`cfa_lib.review.widget.review_widget(run, path, reviewer)`), and run this notebook again: the section "
            "then shows the agreement, the judge's sensitivity and specificity, and the corrected accuracies.")


def describe(run: LoadedRun | None, reviewed: Sequence[Reviewed]) -> str:
    """The paragraph above the tables: what was reviewed, by whom, what was visible, how much could not be told."""
    lines = []
    if run is not None and (run.path.resolve() not in {r.run.path.resolve() for r in reviewed}):
        lines.append(how_to_review(run))
    for r in reviewed:
        s = r.score
        who = ", ".join(s.reviewers) or "no one yet"
        if s.labels and not s.by_a_person:
            who += (" — a model acting as a careful CFA grader, not a person: this is a worked example of the check, "
                    "and every figure corrected by these labels is a model's, not a human check's")
        lines.append(f"**{r.label}**: {s.labels} verdicts by {who}, on {s.sampled} sampled items of {s.run_items} "
                     f"(`{display_path(s.review_path)}`), seeing {r.run.entry.review_shows[not ours(r.run)]}; "
                     f"{s.cannot_tell} were \"cannot tell\" (counted, left out of every figure), "
                     f"{s.unlabelled} not labelled.")
    if any(r.score.accuracies for r in reviewed):
        lines.append("In the corrections below, *judged / counted* are the run's verdicts the judge decided and all "
                     "its counted verdicts of that format (a Format B answer counts even where Format A has no letter, "
                     "so it can exceed the pairs of Table P1a); which path grades a question depends on its key (a "
                     "number, or words), so two models' runs of the same questions can have the same counts. *As "
                     "graded* is the run re-graded by this toolkit, as in the tables above.")
    return "\n\n".join(lines) if lines else "No review file exists for this experiment."


def _kappa_cell(value: float | None, interval: tuple[float, float] | None, n: int) -> str:
    """A chance-corrected agreement with its interval; on fewer than MIN_FOR_INTERVAL items neither is
    printed (one item more or less swings it by tenths)."""
    if value is None:
        return DASH
    if n < MIN_FOR_INTERVAL:
        return f"{DASH} (n < {MIN_FOR_INTERVAL})"
    return f"{value:.2f}" + ("" if interval is None else f" [{interval[0]:.2f}, {interval[1]:.2f}]")


def agreement_table(reviewed: Sequence[Reviewed]) -> pd.DataFrame:
    """One row per reviewed run: items, cannot tell, agreement, Cohen's kappa, Scott's pi, the reviewers' ceiling."""
    rows = []
    for r in reviewed:
        a, c = r.score.overall, r.score.ceiling
        rows.append({"run": r.label, "labels": count(r.score.labels), "cannot tell": count(r.score.cannot_tell),
                     "compared": count(a.n), "agreement (95% CI)": pct_ci(a.rate, a.rate_ci),
                     "Cohen's κ": _kappa_cell(a.kappa, a.kappa_ci, a.n), "Scott's π": _kappa_cell(a.pi, a.pi_ci, a.n),
                     "reviewers' own agreement": DASH if c is None else
                     f"{pct(c.rate)}, π {_kappa_cell(c.pi, c.pi_ci, c.n)} (n={c.n})"})
    return pd.DataFrame(rows).set_index("run") if rows else pd.DataFrame()


def by_path_table(reviewed: Sequence[Reviewed]) -> pd.DataFrame:
    """Agreement per path that decided (final line, heuristic reader, numbers, judge, ...) and per verdict."""
    rows = []
    for r in reviewed:
        for kind, groups in (("path", r.score.by_path), ("toolkit verdict", r.score.by_verdict)):
            for name, a in groups.items():
                rows.append({"run": r.label, "by": kind, "group": name, "compared": count(a.n),
                             "cannot tell": count(a.cannot_tell), "agreement (95% CI)": pct_ci(a.rate, a.rate_ci),
                             "Cohen's κ": _kappa_cell(a.kappa, a.kappa_ci, a.n),
                             "Scott's π": _kappa_cell(a.pi, a.pi_ci, a.n)})
    return pd.DataFrame(rows).set_index(["run", "by", "group"]) if rows else pd.DataFrame()


def confusion_tables(reviewed: Sequence[Reviewed]) -> pd.DataFrame:
    """The confusion matrices side by side (rows: the toolkit's verdict; columns: the person's)."""
    if not reviewed:
        return pd.DataFrame()
    return pd.concat({r.label: r.score.confusion for r in reviewed}, axis=1)


def correction_table(reviewed: Sequence[Reviewed]) -> pd.DataFrame:
    """Every judge-based accuracy of each run, as graded and corrected for the judge's measured errors."""
    rows = []
    for r in reviewed:
        for acc in r.score.accuracies:
            j = acc.judge
            why = f"undefined: no usable label in {', '.join(j.missing)}" if j.missing else DASH
            rows.append({"run": r.label, "accuracy": acc.name, "as graded": pct(acc.raw),
                         "judged / counted": f"{acc.judged} / {acc.n}", "judge's labels used": count(j.reviewed),
                         "sensitivity q₁": decimal(j.q1, 2), "specificity q₀": decimal(j.q0, 2),
                         "corrected (95% CI)": pct_ci(acc.corrected, acc.ci) if acc.corrected is not None else why})
    return pd.DataFrame(rows).set_index(["run", "accuracy"]) if rows else pd.DataFrame()


def validity_table(reviewed: Sequence[Reviewed]) -> pd.DataFrame:
    """Counterfactual items: of those the run held valid and the person could judge, the share valid (Wilson)."""
    rows = []
    for r in reviewed:
        v = r.score.validity
        rows.append({"run": r.label, "valid items judged": DASH if v is None else count(v["items"]),
                     "valid by the reviewer": DASH if v is None else count(v["valid"]),
                     "reviewed validity (95% Wilson)": DASH if v is None else
                     f"{pct(v['rate'])} {ci((v['ci_low'], v['ci_high']))}",
                     "cannot tell": count(r.score.cannot_tell)})
    return pd.DataFrame(rows).set_index("run") if rows else pd.DataFrame()


def figure(reviewed: Sequence[Reviewed]) -> Figure:
    """Agreement with the person per path that decided, per run, with 95% Wilson intervals; n above each bar."""
    bars = [(r.label, path, a) for r in reviewed for path, a in r.score.by_path.items() if a.n]
    if not bars:
        return empty_figure("No item could be compared: every reviewed verdict was \"cannot tell\".")
    paths = sorted({path for _, path, _ in bars})
    labels = list(dict.fromkeys(label for label, _, _ in bars))
    width = 0.8 / len(labels)
    with publication_style():
        fig, ax = plt.subplots(figsize=(FULL_WIDTH, 2.6))
        for k, label in enumerate(labels):
            for x, path in enumerate(paths):
                a = next((a for lab, p, a in bars if lab == label and p == path), None)
                if a is None:
                    continue
                pos = x - 0.4 + width * (k + 0.5)
                ax.bar(pos, 100 * a.rate, width * 0.9, color=COLORS[k % len(COLORS)],
                       label=label if x == paths.index(next(p for lab, p, _ in bars if lab == label)) else None)
                low, high = a.rate_ci
                ax.errorbar(pos, 100 * a.rate, yerr=[[100 * (a.rate - low)], [100 * (high - a.rate)]], fmt="none",
                            ecolor="#333333", capsize=2, lw=0.8)
                ax.text(pos, 103, f"n={a.n}", ha="center", va="bottom", fontsize=6.5)
        ax.set_xticks(np.arange(len(paths)), paths)
        ax.set_ylim(0, 112)
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("Agreement with the person (%)")
        ax.grid(axis="x", visible=False)
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=min(len(labels), 3), frameon=False)
    plt.close(fig)  # returned to a notebook, it is shown once
    return fig


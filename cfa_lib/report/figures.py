"""Every figure, in one publication style, and saving them for the paper (PDF) and the book (PNG).

Every drawing function takes typed summaries by label (label → the experiment's summary), so a figure is
drawn alike from our results files and from the original study's. Accuracies are fractions in the
summaries and percent on the axes.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from cfa_lib.experiments.counterfactual_summary import CounterfactualSummary
from cfa_lib.experiments.option_bias_summary import OptionBiasSummary
from cfa_lib.experiments.registry import experiment_showing
from cfa_lib.experiments.three_tier_summary import ThreeTierSummary
from cfa_lib.paths import resolve
from cfa_lib.report.format import DASH, MIN_PAIRS, format_p, percent_value
from cfa_lib.report.runs import Run
from cfa_lib.report.runs import summaries as label_summaries
from cfa_lib.report.shaping import (
    LEVEL_LABELS,
    PERTURBATION_NAMES,
    VARIANT_LABELS,
    category_order,
    error_category_shares,
    pretty_category,
    share_models,
)

FULL_WIDTH = 6.5  # inches: the text width of a one-column journal page
COLORS = sns.color_palette("colorblind")
CONDITION_COLORS = {"with options": COLORS[0], "without options": COLORS[1]}
COUNTERFACTUAL_COLORS = {"original question": COLORS[0], "perturbed question": COLORS[3]}
LEVEL_COLORS = {"exact": COLORS[2], "directional": COLORS[8], "incorrect": "#b8b8b8"}

STYLE_RC = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.dpi": 150,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,  # TrueType in the PDF: journals reject Type 3 fonts
    "ps.fonttype": 42,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def use_style() -> None:
    """Set the publication style for the rest of the session (notebooks call this once); tables show
    whole cells, so a source or a response excerpt is never cut at pandas' default 50 characters."""
    sns.set_theme(context="paper", style="whitegrid", palette="colorblind", rc=STYLE_RC)
    pd.set_option("display.max_colwidth", 400)


@contextmanager
def publication_style() -> Iterator[None]:
    """The publication style for one figure, leaving the caller's settings as they were."""
    with plt.rc_context():
        use_style()
        yield


def save_figure(fig: Figure, name: str, directory: str | Path) -> list[Path]:
    """Write `name.pdf` (vector, for the paper) and `name.png` (for the book) and return both paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.pdf", directory / f"{name}.png"]
    for path in paths:
        metadata = {"CreationDate": None} if path.suffix == ".pdf" else None  # reproducible PDF bytes
        fig.savefig(path, dpi=300, bbox_inches="tight", metadata=metadata)
    return paths


# Helpers -----------------------------------------------------------------------------------------------

def _require(summaries: Mapping[str, Any], what: str) -> None:
    if not summaries:
        raise ValueError(f"No {what} runs to plot: run the experiment's notebook or include the reference "
                         "runs.")


def _group_label(label: str, n: int | None) -> str:
    """A run's label under its bars, wrapped so five runs side by side do not overlap."""
    wrapped = _wrap(label)
    return wrapped if n is None else f"{wrapped}\n(n = {n})"


def _wrap(label: str, width: int = 16) -> str:
    return textwrap.fill(label, width, break_on_hyphens=False, break_long_words=False)


def _error_bars(ax, bars, intervals: Sequence[Sequence[float] | None]) -> None:
    """Draw asymmetric 95% intervals (fractions) on bars whose heights are percent."""
    for bar, ci in zip(bars, intervals, strict=True):
        if ci is None or math.isnan(bar.get_height()):
            continue
        low, high = (100 * float(v) for v in ci)
        x = bar.get_x() + bar.get_width() / 2
        height = bar.get_height()
        ax.errorbar(x, height, yerr=[[max(height - low, 0)], [max(high - height, 0)]], fmt="none",
                    ecolor="#333333", elinewidth=0.9, capsize=2.5, capthick=0.9, zorder=3)


def _value_labels(ax, bars, intervals: Sequence[Sequence[float] | None]) -> None:
    """Print each bar's value just above its error bar, where no line crosses it."""
    for bar, ci in zip(bars, intervals, strict=True):
        height = bar.get_height()
        if math.isnan(height):
            continue
        top = max(height, 100 * float(ci[1])) if ci is not None else height
        ax.text(bar.get_x() + bar.get_width() / 2, top + 1.2, f"{height:.1f}", ha="center", va="bottom",
                fontsize=7, color="#222222", zorder=4)


def _bar_pair(rows: list[dict[str, Any]], intervals: dict[str, list], group: str,
              bars: Sequence[tuple[str, float | None, Sequence[float] | None]]) -> None:
    """One group's bars, (condition, accuracy, 95% interval) each, as rows of the plotted table."""
    for condition, value, interval in bars:
        rows.append({"group": group, "condition": condition, "accuracy": percent_value(value)})
        intervals[condition].append(interval)


def finished_figure(fig: Figure) -> Figure:
    """Close the figure in pyplot's registry: returned to a notebook, it is shown once, not twice."""
    plt.close(fig)
    return fig


def empty_figure(message: str) -> Figure:
    """A small figure that says why there is nothing to draw (a tiny demo run can leave a panel empty)."""
    with publication_style():
        fig, ax = plt.subplots(figsize=(FULL_WIDTH, 1.0))
        ax.axis("off")
        ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=9, color="#444444", wrap=True)
    return finished_figure(fig)


def _accuracy_axes(ax, top: float) -> None:
    """The y axis of the paired accuracy bars (0-100 %; above 107 the annotations, clear of the value labels
    of a bar at 100 %), legend on top."""
    ax.set_ylim(0, top)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("Accuracy (%)")
    ax.set_xlabel("")
    ax.grid(axis="x", visible=False)
    _legend_on_top(ax, ncol=2)


def _legend_on_top(ax, ncol: int, title: str | None = None) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    ax.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=ncol, frameon=False,
              title=title)


# Figure 1: option bias ---------------------------------------------------------------------------------

def option_bias_figure(summaries: Mapping[str, OptionBiasSummary]) -> Figure:
    """Accuracy with and without the answer choices per model, with 95% intervals and McNemar's test."""
    _require(summaries, "option-bias")
    # a run with no question answered in both formats has no bar to draw (seaborn drops NaN bars)
    empty = [label for label, s in summaries.items() if not s.n_paired]
    summaries = {label: s for label, s in summaries.items() if s.n_paired}
    if not summaries:
        return empty_figure(f"No question of {', '.join(empty)} has a graded answer in both formats "
                            "(failed, cut short or set aside): nothing to compare.")
    rows, intervals = [], {c: [] for c in CONDITION_COLORS}
    groups = []
    for label, s in summaries.items():
        groups.append(_group_label(label, s.n_paired))
        _bar_pair(rows, intervals, groups[-1], (("with options", s.accuracy_with_options, s.accuracy_with_options_ci),
                                                ("without options", s.accuracy_without_options,
                                                 s.accuracy_without_options_ci)))
    data = pd.DataFrame(rows)
    with publication_style():
        fig, ax = plt.subplots(figsize=(max(3.4, min(FULL_WIDTH, 1.5 + 1.35 * len(groups))), 3.3))
        sns.barplot(data=data, x="group", y="accuracy", hue="condition", order=groups,
                    hue_order=list(CONDITION_COLORS), palette=CONDITION_COLORS, errorbar=None, ax=ax,
                    width=0.7, saturation=1)
        for container, condition in zip(list(ax.containers), CONDITION_COLORS, strict=True):
            _error_bars(ax, container, intervals[condition])
            _value_labels(ax, container, intervals[condition])
        for i, s in enumerate(summaries.values()):
            bias, ci = s.option_bias, s.option_bias_ci
            if s.n_paired < MIN_PAIRS:  # never a statistic on too little: the count, and what it needs
                text = f"{s.n_paired} pairs: too few\nfor the bias and its test\n(needs {MIN_PAIRS})"
            else:
                text = f"bias {percent_value(bias):+.1f} pp" if bias is not None else "bias n/a"
                if ci is not None:
                    text += f"\n95% CI [{percent_value(ci[0]):.1f}, {percent_value(ci[1]):.1f}]"
                text += f"\nMcNemar {format_p(s.mcnemar_test.p_value)}"
            ax.text(i, 107, text, ha="center", va="bottom", fontsize=7.5 if len(groups) <= 4 else 6.5)
        _accuracy_axes(ax, top=128)
        fig.tight_layout()
    return finished_figure(fig)


# Figure 2: three-tier grading --------------------------------------------------------------------------

def three_tier_figure(summaries: Mapping[str, ThreeTierSummary]) -> Figure:
    """Stacked levels A/B/C per model; the A edge is strict accuracy, the B edge lenient accuracy."""
    _require(summaries, "three-tier")
    labels = list(summaries)
    with publication_style():
        fig, ax = plt.subplots(figsize=(FULL_WIDTH, 0.9 + 0.62 * len(labels)))
        y = list(range(len(labels)))
        left = [0.0] * len(labels)
        for level, color in LEVEL_COLORS.items():
            widths = [percent_value(s.level_rates[level]) for s in summaries.values()]
            bars = ax.barh(y, widths, left=left, color=color, height=0.62, label=LEVEL_LABELS[level],
                           edgecolor="white", linewidth=0.6)
            for bar, width in zip(bars, widths, strict=True):
                if width >= 7:
                    ax.text(bar.get_x() + width / 2, bar.get_y() + 0.3 * bar.get_height(), f"{width:.1f}%",
                            ha="center", va="center", fontsize=7.5,
                            color="white" if level == "exact" else "#222222")
            left = [a + (0 if math.isnan(b) else b) for a, b in zip(left, widths, strict=True)]
        for i, s in enumerate(summaries.values()):
            edges = [(s.strict_accuracy, s.strict_accuracy_ci)] + ([(s.lenient_accuracy, s.lenient_accuracy_ci)]
                                                                   if s.lenient_accuracy != s.strict_accuracy
                                                                   else [])  # no Level B: one edge, one interval
            for accuracy, ci in edges:
                if ci is not None and accuracy is not None:
                    value = percent_value(accuracy)  # in the lower half of the bar, below the percentages
                    low, high = max(value - percent_value(ci[0]), 0), max(percent_value(ci[1]) - value, 0)
                    ax.errorbar(value, i + 0.16, xerr=[[low], [high]],
                                fmt="none", ecolor="#222222", elinewidth=0.9, capsize=2.5, zorder=3)
            ax.text(101.5, i, f"strict {percent_value(s.strict_accuracy):.1f}%\nlenient "
                    f"{percent_value(s.lenient_accuracy):.1f}%", va="center", ha="left", fontsize=7.5)
        ticks = [_group_label(label, s.n_graded) for label, s in summaries.items()]
        ax.set_yticks(y, ticks)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("Share of open answers (%)")
        ax.grid(axis="y", visible=False)
        ax.spines["left"].set_visible(False)
        _legend_on_top(ax, ncol=3)
        fig.tight_layout()
    return finished_figure(fig)


# Figure 3: counterfactual ------------------------------------------------------------------------------

def counterfactual_figure(summaries: Mapping[str, CounterfactualSummary]) -> Figure:
    """Accuracy on the original questions versus their perturbed versions, per level and model.

    The original accuracy is taken on the same questions whose perturbation was valid, so each pair of
    bars compares like with like.
    """
    _require(summaries, "counterfactual-testing")
    rows, intervals, gaps, groups = [], {c: [] for c in COUNTERFACTUAL_COLORS}, [], []
    not_shown: list[str] = []
    for label, s in summaries.items():
        for level, lv in sorted(s.perturbation_levels.items()):
            if lv.n_paired == 0:
                not_shown.append(f"{label} (level {level})")
                continue  # no valid perturbation answered at this level: nothing to compare
            name = PERTURBATION_NAMES.get(str(level), "")
            level_name = _wrap(f"level {level}: {name}", 12)
            groups.append(f"{_wrap(label)}\n{level_name}\n(n = {lv.n_paired})")
            _bar_pair(rows, intervals, groups[-1], (
                ("original question", lv.accuracy_original_on_valid, lv.accuracy_original_on_valid_ci),
                ("perturbed question", lv.accuracy, lv.accuracy_ci)))
            gaps.append((lv.memorization_gap, lv.n_paired))
    if not rows:
        return empty_figure("No valid perturbation was answered at any level: nothing to compare "
                            "(see the coverage table).")
    data = pd.DataFrame(rows)
    with publication_style():
        fig, ax = plt.subplots(figsize=(max(3.4, min(FULL_WIDTH, 1.5 + 1.5 * len(groups))), 3.5))
        sns.barplot(data=data, x="group", y="accuracy", hue="condition", order=groups,
                    hue_order=list(COUNTERFACTUAL_COLORS), palette=COUNTERFACTUAL_COLORS,
                    errorbar=None, ax=ax, width=0.7, saturation=1)
        for container, condition in zip(list(ax.containers), COUNTERFACTUAL_COLORS, strict=True):
            _error_bars(ax, container, intervals[condition])
            _value_labels(ax, container, intervals[condition])
        for i, (gap, n) in enumerate(gaps):
            text = (f"{n} pairs:\ntoo few" if n < MIN_PAIRS else "gap n/a" if gap is None
                    else f"gap\n{percent_value(gap):+.1f} pp")
            ax.text(i, 104, text, ha="center", va="bottom", fontsize=7.5 if len(groups) <= 4 else 6.5)
        _accuracy_axes(ax, top=122)
        if not_shown:  # say who is missing rather than let a reader think a run was forgotten
            ax.set_xlabel("No valid perturbation answered: " + ", ".join(not_shown), fontsize=7.5, color="#555555")
        fig.tight_layout()
    return finished_figure(fig)


# Figure 4: error categories ----------------------------------------------------------------------------

def error_categories_figure(summaries: Mapping[str, ThreeTierSummary]) -> Figure:
    """What went wrong in the Level C answers: the share of each error category per model."""
    _require(summaries, "three-tier")
    shares = error_category_shares(summaries)
    if shares.empty:
        return empty_figure("No Level C answers, so no error categories to show.")
    order = category_order(shares)
    models = share_models(shares)
    full = (pd.MultiIndex.from_product([models, order], names=["model", "category"]).to_frame(index=False)
            .merge(shares, how="left", on=["model", "category"]).fillna({"share": 0.0, "count": 0}))
    totals = shares.groupby("model")["n_level_c"].first()
    full["model"] = [f"{m}, n = {int(totals[m])}" for m in full["model"]]
    hue_order = [f"{m}, n = {int(totals[m])}" for m in models]
    full["category"] = full["category"].map(pretty_category)
    palette = dict(zip(hue_order, [COLORS[i % len(COLORS)] for i in (0, 1, 2, 4, 5, 6, 7, 9)], strict=False))
    with publication_style():
        fig, ax = plt.subplots(figsize=(FULL_WIDTH, 0.9 + 0.22 * len(order) * max(2, len(models))))
        sns.barplot(data=full, y="category", x="share", hue="model",
                    order=[pretty_category(c) for c in order],
                    hue_order=hue_order, palette=palette, errorbar=None, ax=ax, orient="h",
                    saturation=1)
        for container in ax.containers:
            ax.bar_label(container, fmt="%.1f%%", padding=2, fontsize=7)
        ax.set_xlim(0, min(100, full["share"].max() * 1.18 + 2))
        ax.set_xlabel("Share of categorised Level C answers (%)")
        ax.set_ylabel("")
        ax.grid(axis="y", visible=False)
        _legend_on_top(ax, ncol=min(3, len(models)), title="Model (Level C answers)")
        fig.tight_layout()
    return finished_figure(fig)


# Where the inflation comes from: the answer-format variants of notebook 01 ----------------------------

def _variants_label(label: str, s: OptionBiasSummary, names: Sequence[str]) -> str:
    """A run's label with the questions behind its bars: Formats A and B paired, each variant paired with A."""
    counts = sorted({s.variants[n].n for n in names if n in s.variants})
    spread = DASH if not counts else str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"{_wrap(label)}\n(A/B: n = {s.n_paired}; variants: n = {spread})"


def variants_figure(summaries: Mapping[str, OptionBiasSummary]) -> Figure:
    """Accuracy per model in Format A (MCQ), Format B (open) and each answer-format variant, with 95% Wilson
    intervals; a dashed chance line over options only; beside it, the shuffled run's answered letters
    against its keys' letters (position bias). Summaries carry the variants (`runs.variants_by_model`)."""
    _require(summaries, "option-bias")
    names = [n for n in VARIANT_LABELS if any(n in s.variants for s in summaries.values())]
    if not names:
        return empty_figure("This run asked no answer-format variant: set the parameter variants, e.g. "
                            "papermill ... -p variants '[\"options_only\", \"shuffled\"]'.")
    conditions = ["MCQ (Format A)", "open (Format B)", *(VARIANT_LABELS[n] for n in names)]
    colors = dict(zip(conditions, [COLORS[0], COLORS[1], *(COLORS[i] for i in (2, 4, 8, 9))], strict=False))
    shuffled = {label: s.variants["shuffled"].letter_distribution for label, s in summaries.items()
                if "shuffled" in s.variants and s.variants["shuffled"].letter_distribution.n}
    width = 0.8 / len(conditions)
    with publication_style():
        if shuffled:
            fig, (ax, side) = plt.subplots(1, 2, figsize=(FULL_WIDTH, 3.4), gridspec_kw={"width_ratios": [3, 1]})
        else:
            fig, ax = plt.subplots(figsize=(FULL_WIDTH, 3.4))
        for i, s in enumerate(summaries.values()):
            variants = s.variants
            values = [(s.accuracy_with_options, s.accuracy_with_options_ci),
                      (s.accuracy_without_options, s.accuracy_without_options_ci),
                      *((variants[n].accuracy, variants[n].accuracy_ci) if n in variants else (None, None)
                        for n in names)]
            for j, (condition, (value, interval)) in enumerate(zip(conditions, values, strict=True)):
                x = i - 0.4 + width * (j + 0.5)
                bars = ax.bar([x], [percent_value(value)], width=width * 0.92, color=colors[condition],
                              label=condition if i == 0 else None)
                _error_bars(ax, bars, [interval])
                _value_labels(ax, bars, [interval])
                if condition == VARIANT_LABELS["options_only"] and "options_only" in variants \
                        and variants["options_only"].chance_level:
                    chance = 100 * variants["options_only"].chance_level
                    ax.hlines(chance, x - width / 2, x + width / 2, colors="#222222", linestyles="--",
                              linewidth=1.0, zorder=4, label="chance (options only)" if i == 0 else None)
        ax.set_xticks(range(len(summaries)), [_variants_label(label, s, names) for label, s in summaries.items()])
        ax.set_xlim(-0.5, len(summaries) - 0.5)
        ax.set_ylim(0, 112)
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("Accuracy (%)")
        ax.grid(axis="x", visible=False)
        handles, labels = ax.get_legend_handles_labels()
        chance = [k for k, text in enumerate(labels) if text.startswith("chance")]  # the line after the bars
        order = [k for k in range(len(labels)) if k not in chance] + chance
        ax.legend([handles[k] for k in order], [labels[k] for k in order], loc="lower center",
                  bbox_to_anchor=(0.5, 1.01), ncol=3, frameon=False)
        if shuffled:
            letters = sorted({letter for d in shuffled.values() for letter in d.answers})
            series = []  # (name, counts, color): the keys' letters in grey beside the answered letters
            for m, (label, d) in enumerate(shuffled.items()):
                suffix = "" if len(shuffled) == 1 else f" ({label})"
                answered = colors[VARIANT_LABELS["shuffled"]] if m == 0 else COLORS[m]
                series += [(f"keys{suffix}", d.keys, "#b8b8b8"), (f"answered{suffix}", d.answers, answered)]
            step = 0.8 / len(series)
            for k, (name, counts, color) in enumerate(series):
                total = sum(counts.values()) or 1
                xs = [m - 0.4 + step * (k + 0.5) for m in range(len(letters))]
                side.bar(xs, [100 * counts.get(letter, 0) / total for letter in letters], width=step * 0.92,
                         color=color, label=name)
            side.set_xticks(range(len(letters)), letters)
            side.set_ylim(0, 100)
            side.set_ylabel("Share of answers (%)")
            side.set_xlabel("Letter, shuffled")
            side.grid(axis="x", visible=False)
            _legend_on_top(side, ncol=1)
        fig.tight_layout()
    return finished_figure(fig)


# Each paper figure by name; which experiment's runs it draws comes from the registry.
FIGURES: dict[str, Callable[[Mapping[str, Any]], Figure]] = {
    "fig1_option_bias": option_bias_figure,
    "fig2_three_tier": three_tier_figure,
    "fig3_counterfactual": counterfactual_figure,
    "fig4_error_categories": error_categories_figure,
}


def figure(name: str, runs: Mapping[str, Sequence[Run]], figures_dir: str | Path | None = None
           ) -> Figure | None:
    """Draw one of the paper's figures, save it as PDF and PNG, and return it (None when there is no run)."""
    experiment = experiment_showing(name).name
    group = runs.get(experiment, [])
    if not group:
        print(f"{name}: no {experiment} runs found, so no figure (run its notebook or include the "
              "reference runs).")
        return None
    fig = FIGURES[name](label_summaries(group))  # already closed in pyplot: shown once, as the cell's value
    if figures_dir is not None:
        save_figure(fig, name, resolve(figures_dir))
    return fig

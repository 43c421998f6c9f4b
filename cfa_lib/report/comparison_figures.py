"""The comparison's figure: how the models' order changes when the options are taken away (a slope chart)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from cfa_lib.compare.rankings import Ranking
from cfa_lib.report.figures import COLORS, FULL_WIDTH, empty_figure, finished_figure, publication_style


def spread(values: Sequence[float], gap: float) -> list[float]:
    """Label heights near `values`, at least `gap` apart, in the values' order (close models do not overlap)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed = [0.0] * len(values)
    previous = None
    for i in order:
        placed[i] = values[i] if previous is None else max(values[i], previous + gap)
        previous = placed[i]
    return placed


def rank_slope_figure(ranking: Ranking) -> Figure:
    """Each model's accuracy with the options (Format A, left) and without (Format B, right) on the same
    questions, joined by a line, labelled with its rank and accuracy at each end; a crossing is a change of
    rank. The accuracies are in the labels, so there is no y axis to read."""
    if len(ranking.ranked) < 2:
        return empty_figure("A ranking needs at least two models with enough shared questions: "
                            f"{len(ranking.ranked)} here.")
    left = [100 * r.accuracy_a for r in ranking.ranked]
    right = [100 * r.accuracy_b for r in ranking.ranked]
    gap = 0.07 * max(max(left + right) - min(left + right), 1.0)
    with publication_style():
        fig, ax = plt.subplots(figsize=(FULL_WIDTH * 0.8, 0.6 + 0.4 * max(4, len(ranking.ranked))))
        for i, (r, y_left, y_right) in enumerate(zip(ranking.ranked, spread(left, gap), spread(right, gap),
                                                     strict=True)):
            color = COLORS[i % len(COLORS)]
            ax.plot((0, 1), (left[i], right[i]), marker="o", color=color, linewidth=1.6)
            ax.annotate(f"#{r.rank_a:g}  {r.subject}  {left[i]:.1f}%", (0, y_left), xytext=(-8, 0),
                        textcoords="offset points", ha="right", va="center", fontsize=7, color=color)
            ax.annotate(f"{right[i]:.1f}%  #{r.rank_b:g}", (1, y_right), xytext=(8, 0), textcoords="offset points",
                        ha="left", va="center", fontsize=7, color=color)
        ax.set_xticks((0, 1), ("Format A\n(with options)", "Format B\n(without options)"))
        ax.set_xlim(-1.3, 1.35)
        ax.yaxis.set_visible(False)
        ax.spines["left"].set_visible(False)
        ax.grid(False)
        ax.set_title(f"Accuracy and rank with and without the options (n = {ranking.n_questions} shared questions)")
    return finished_figure(fig)

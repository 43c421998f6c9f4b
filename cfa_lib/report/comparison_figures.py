"""The comparison's figure: how the models' order changes when the options are taken away (a slope chart)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from cfa_lib.compare.rankings import Ranking
from cfa_lib.report.figures import COLORS, FULL_WIDTH, _finished, empty_figure, publication_style


def rank_slope_figure(ranking: Ranking) -> Figure:
    """Each model's accuracy with the options (Format A, left) and without (Format B, right) on the same
    questions, joined by a line; its rank beside each end. A crossing line is a change of rank."""
    if len(ranking.ranked) < 2:
        return empty_figure("A ranking needs at least two models with enough shared questions: "
                            f"{len(ranking.ranked)} here.")
    with publication_style():
        fig, ax = plt.subplots(figsize=(FULL_WIDTH * 0.75, 0.5 + 0.45 * max(4, len(ranking.ranked))))
        for i, r in enumerate(ranking.ranked):
            color = COLORS[i % len(COLORS)]
            ys = (100 * r.accuracy_a, 100 * r.accuracy_b)
            ax.plot((0, 1), ys, marker="o", color=color, linewidth=1.6)
            ax.annotate(f"#{r.rank_a:g} {r.subject} {ys[0]:.1f}%", (0, ys[0]), xytext=(-6, 0),
                        textcoords="offset points", ha="right", va="center", fontsize=7, color=color)
            ax.annotate(f"{ys[1]:.1f}% #{r.rank_b:g}", (1, ys[1]), xytext=(6, 0), textcoords="offset points",
                        ha="left", va="center", fontsize=7, color=color)
        ax.set_xticks((0, 1), ("Format A\n(with options)", "Format B\n(without options)"))
        ax.set_xlim(-0.9, 1.4)
        ax.set_ylabel("Accuracy (%)")
        ax.grid(axis="x", visible=False)
        ax.set_title(f"Rank with and without the options (n = {ranking.n_questions} shared questions)")
    return _finished(fig)

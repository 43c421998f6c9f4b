"""Rankings with and without the options (cfa_lib.compare.rankings) on synthetic runs of three models."""

from __future__ import annotations

import pandas as pd
import pytest

from cfa_lib.compare.rankings import rank
from cfa_lib.report.comparison_tables import describe_ranking, ranking_table


def model(subject: str, right_a: int, right_b: int, n: int = 20) -> pd.DataFrame:
    """n questions; the first `right_a` right in Format A, the first `right_b` right in Format B."""
    return pd.DataFrame([(subject, f"q{q}", t, int(q < (right_b if t else right_a)))
                         for q in range(n) for t in (0, 1)], columns=["subject", "question_id", "treated", "correct"])


THREE = pd.concat([model("P", 18, 10), model("Q", 14, 12), model("R", 10, 8)], ignore_index=True)


def test_three_models_ranks_and_kendall_tau():
    """A: P 90% > Q 70% > R 50%; B: Q 60% > P 50% > R 40%. One pair of three swaps: τ = (2 − 1) / 3."""
    ranking = rank(THREE, n_resamples=500)
    assert [(r.subject, r.rank_a, r.rank_b) for r in ranking.ranked] == [("P", 1, 2), ("Q", 2, 1), ("R", 3, 3)]
    assert [r.accuracy_b for r in ranking.ranked] == pytest.approx([0.5, 0.6, 0.4])
    assert ranking.tau == pytest.approx(1 / 3)
    low, high = ranking.tau_ci
    assert -1 <= low <= 1 / 3 <= high <= 1
    assert ranking.n_questions == 20 and not ranking.degenerate and ranking.note is None
    table = ranking_table(ranking)
    assert table.loc["P", "rank change"] == "-1" and table.loc["Q", "rank change"] == "+1"
    assert "Kendall's τ-b on the 20 open-answerable questions" in describe_ranking(ranking)


def test_only_questions_every_model_answered_are_ranked():
    short = model("S", 5, 5, n=25).assign(question_id=lambda f: "x" + f["question_id"])  # shares no question
    ranking = rank(pd.concat([THREE, short], ignore_index=True), n_resamples=100)
    assert ranking.ranked == [] and "share 0 questions" in ranking.note


def test_two_models_say_tau_is_degenerate():
    ranking = rank(THREE[THREE["subject"] != "R"], n_resamples=400)
    assert ranking.tau == -1 and ranking.degenerate
    assert 0 < ranking.kept_order <= 1
    assert "by construction" in describe_ranking(ranking)


def test_a_model_with_few_questions_is_left_out_in_words():
    ranking = rank(pd.concat([THREE, model("T", 3, 2, n=5)], ignore_index=True), n_resamples=100)
    assert ranking.left_out == {"T": "5 paired questions (at least 20 are needed)"}
    assert "**T** is not ranked: 5 paired questions" in describe_ranking(ranking)


def test_slope_chart_labels_every_model_with_both_ranks_apart():
    from cfa_lib.report.comparison_figures import rank_slope_figure, spread

    assert spread([50, 51, 90], 5) == [50, 55, 90] and spread([51, 50], 5) == [55, 50]
    fig = rank_slope_figure(rank(THREE, n_resamples=50))
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts[:2] == ["#1  P  90.0%", "50.0%  #2"] and len(texts) == 6
    assert "n = 20 shared questions" in fig.axes[0].get_title()


def test_a_bootstrap_interval_on_a_handful_of_pairs_is_not_printed():
    from cfa_lib.report.comparison_tables import _bootstrap_pp

    assert _bootstrap_pp(0.0, [0.0, 0.0], 4) == "4 pairs: too few (needs 20)"
    assert _bootstrap_pp(0.041, [0.004, 0.08], 704) == "+4.1 [0.4, 8.0]"

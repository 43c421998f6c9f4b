"""items_frame across the original study's runs, and notebook 04's comparison built from it: the items give
back each run's own figures, and the comparison says in words what one run cannot give."""

from __future__ import annotations

import pandas as pd
import pytest

from cfa_lib import items_frame
from cfa_lib.compare.models import compare_items
from cfa_lib.compare.paired import memorization_gap, option_bias, paired_items
from cfa_lib.report import comparison_tables
from cfa_lib.report.format import pp
from cfa_lib.report.runs import collect_all


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return collect_all(tmp_path_factory.mktemp("no_results"), include_reference=True)


@pytest.fixture(scope="module")
def items(runs):
    return items_frame(comparison_tables.compared_runs(runs))


def summary(runs, experiment: str, model: str):
    return next(r.summary for r in runs[experiment] if r.label.startswith(model) and not r.as_published)


def test_one_row_per_run_question_and_condition(items):
    sizes = items.groupby(["subject", "experiment", "condition"]).size()
    assert sizes[("gpt-5-mini (reference)", "option_bias", "A")] == 1032
    assert sizes[("gpt-4o-mini (reference)", "three_tier", "open")] == 1032
    assert set(items["subject"]) == {"gpt-4o-mini (reference)", "gpt-5-mini (reference)"}
    assert items["imported"].all() and not items["as_published"].any()
    excluded = items[items["status"] == "excluded"]
    assert excluded["correct"].isna().all() and excluded["excluded"].notna().all()


def test_items_give_back_each_runs_figures(runs, items):
    for model in ("gpt-4o-mini", "gpt-5-mini"):
        subject = f"{model} (reference)"
        bias = paired_items(items, option_bias())
        mine = bias[bias["subject"] == subject].groupby("treated")["correct"].mean()
        headline = summary(runs, "option_bias", model).answerable
        assert mine[0] - mine[1] == pytest.approx(headline.option_bias)
        assert bias[bias["subject"] == subject]["question_id"].nunique() == headline.n_paired
        gap = paired_items(items, memorization_gap(1), 1)
        mine = gap[gap["subject"] == subject].groupby("treated")["correct"].mean()
        assert mine[0] - mine[1] == pytest.approx(summary(runs, "counterfactual", model)
                                                  .perturbation_levels["1"].memorization_gap)
        tiers = items[(items["subject"] == subject) & (items["experiment"] == "three_tier")]
        assert tiers["tier"].value_counts().to_dict() == {
            k: v for k, v in summary(runs, "three_tier", model).level_distribution.items() if v}


def test_comparative_table_has_a_row_per_model_with_the_runs_headlines(runs):
    table = comparison_tables.comparative_table(runs)
    assert list(table.index) == ["gpt-4o-mini (reference)", "gpt-5-mini (reference)"]
    headline = summary(runs, "option_bias", "gpt-4o-mini").answerable
    assert table.loc["gpt-4o-mini (reference)", "option bias (pp)"] == "+4.2 [0.4, 8.1]" == (  # audited keys
        f"{pp(headline.option_bias)} [{100 * headline.option_bias_ci[0]:.1f}, {100 * headline.option_bias_ci[1]:.1f}]")
    assert table.loc["gpt-4o-mini (reference)", "pairs"] == "693"
    assert table.loc["gpt-5-mini (reference)", "gap, level 1 (pp)"] == "+49.8 [44.4, 55.1]"
    assert "robust accuracy" in table.columns


def test_reference_runs_compared(items):
    bias, gap = compare_items(items)
    assert bias.compared and gap.compared and bias.problem is None
    assert [e.subject for e in bias.effects] == ["gpt-4o-mini (reference)", "gpt-5-mini (reference)"]
    assert gap.pairwise[0].difference < 0  # gpt-5-mini's gap is the larger
    text = comparison_tables.describe_comparisons([bias, gap])
    assert "Option bias: the effects in points" in text
    assert "Memorization gap (level 1): the effects in points differ" in text


def test_one_run_says_the_comparison_needs_two(items):
    one = items[items["subject"] == "gpt-5-mini (reference)"]
    comparisons = compare_items(one)
    assert all(not c.compared and len(c.effects) == 1 for c in comparisons)
    text = comparison_tables.describe_comparisons(comparisons)
    assert "only **gpt-5-mini (reference)** is fit: comparing models needs at least two." in text
    assert comparison_tables.pairwise_table(comparisons).empty
    assert isinstance(comparison_tables.effects_table(comparisons), pd.DataFrame)

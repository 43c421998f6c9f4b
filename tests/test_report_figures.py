"""The paper's figures: the right bars and groups for two models, the numbers printed on them, and files a
journal accepts (PNG and PDF)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402
from PIL import Image  # noqa: E402

from cfa_lib.report import figures  # noqa: E402
from cfa_lib.report.format import format_p  # noqa: E402

# The two reference runs' recomputed summaries (rounded), typed in so the figures are tested alone.
OPTION_BIAS = {
    "gpt-4o-mini (reference)": {
        "n_paired": 1032, "accuracy_with_options": 0.8256, "accuracy_without_options": 0.8062,
        "accuracy_with_options_ci": [0.8012, 0.8475], "accuracy_without_options_ci": [0.7809, 0.8292],
        "option_bias": 0.0194, "option_bias_ci": [-0.0126, 0.0514],
        "mcnemar_test": {"b": 147, "c": 127, "chi2": 1.3175, "p_value": 0.2510, "significant": False},
    },
    "gpt-5-mini (reference)": {
        "n_paired": 1032, "accuracy_with_options": 0.9283, "accuracy_without_options": 0.8634,
        "accuracy_with_options_ci": [0.9109, 0.9425], "accuracy_without_options_ci": [0.8411, 0.8830],
        "option_bias": 0.0649, "option_bias_ci": [0.0407, 0.0891],
        "mcnemar_test": {"b": 117, "c": 50, "chi2": 26.0838, "p_value": 3.3e-07, "significant": True},
    },
}
THREE_TIER = {
    "gpt-4o-mini (reference)": {
        "n_graded": 1032, "level_rates": {"exact": 0.2452, "directional": 0.2151, "incorrect": 0.5397},
        "strict_accuracy": 0.2452, "strict_accuracy_ci": [0.2199, 0.2723],
        "lenient_accuracy": 0.4603, "lenient_accuracy_ci": [0.4301, 0.4908],
        "error_categories": {"conceptual_error": 383, "incomplete_reasoning": 60, "assumption_error": 59,
                             "unknown": 35, "reading_error": 12, "arithmetic_error": 7, "formula_error": 1},
    },
    "local": {
        "n_graded": 8, "level_rates": {"exact": 0.125, "directional": 0.0, "incorrect": 0.875},
        "strict_accuracy": 0.125, "strict_accuracy_ci": [0.0224, 0.4709],
        "lenient_accuracy": 0.125, "lenient_accuracy_ci": [0.0224, 0.4709],
        "error_categories": {"conceptual_error": 5, "arithmetic_error": 2},
    },
}
COUNTERFACTUAL = {
    "local": {
        "accuracy_original": 0.5,
        "perturbation_levels": {
            "1": {"n_valid": 6, "accuracy": 0.1667, "accuracy_ci": [0.03, 0.56], "accuracy_original_on_valid": 0.5,
                  "memorization_gap": 0.3333},
            "2": {"n_valid": 4, "accuracy": 0.25, "accuracy_ci": [0.05, 0.7], "accuracy_original_on_valid": 0.5,
                  "memorization_gap": 0.25},
        },
    },
    "gpt-4o-mini (reference)": {
        "accuracy_original": 0.8236,
        "perturbation_levels": {"1": {"n_valid": 702, "accuracy": 0.6382, "memorization_gap": 0.1855}},
    },
}


def bars(fig) -> list:
    ax = fig.axes[0]
    return [bar for c in ax.containers if isinstance(c, BarContainer) for bar in c]


def texts(fig) -> str:
    return "\n".join(t.get_text() for t in fig.axes[0].texts)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_option_bias_figure_has_two_bars_per_model_with_their_accuracies_and_mcnemar_p():
    fig = figures.option_bias_figure(OPTION_BIAS)
    heights = [round(b.get_height(), 2) for b in bars(fig)]
    assert len(heights) == 4  # seaborn orders by hue: with options for both models, then without
    assert heights == [82.56, 92.83, 80.62, 86.34]
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["gpt-4o-mini\n(reference)\n(n = 1032)", "gpt-5-mini\n(reference)\n(n = 1032)"]  # wrapped
    assert "bias +1.9 pp\n95% CI [-1.3, 5.1]\nMcNemar p = 0.251" in texts(fig)
    assert "McNemar p < 0.001" in texts(fig)
    assert fig.axes[0].get_ylabel() == "Accuracy (%)"
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["with options", "without options"]


def test_three_tier_figure_stacks_three_levels_per_model_ending_at_strict_and_lenient():
    fig = figures.three_tier_figure(THREE_TIER)
    found = bars(fig)
    assert len(found) == 6
    exact, directional = found[0], found[2]  # level by level: exact (two models), directional, incorrect
    assert exact.get_width() == pytest.approx(24.52)
    assert directional.get_x() + directional.get_width() == pytest.approx(46.03)  # lenient accuracy
    assert "strict 24.5%\nlenient 46.0%" in texts(fig)
    assert "strict 12.5%\nlenient 12.5%" in texts(fig)
    assert len(fig.axes[0].get_yticklabels()) == 2


def test_counterfactual_figure_pairs_original_and_perturbed_per_level_and_says_when_originals_differ():
    fig = figures.counterfactual_figure(COUNTERFACTUAL)
    assert len(bars(fig)) == 6  # local: levels 1 and 2, reference: level 1; two bars each
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks[0] == "local\nlevel 1: one\nnumber\nchanged\n(n = 6)"
    assert ticks[2] == "gpt-4o-mini\n(reference)\nlevel 1: one\nnumber\nchanged\n(n = 702)"
    assert "gap\n+18.6 pp" in texts(fig) and "gap\n+33.3 pp" in texts(fig)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["original question (all questions)", "perturbed question"]


def test_error_categories_figure_has_one_bar_per_category_and_model_as_shares_of_level_c():
    fig = figures.error_categories_figure(THREE_TIER)
    found = bars(fig)
    assert len(found) == 7 * 2  # the union of categories, for both models
    widths = sorted(b.get_width() for b in found)
    assert widths[-2:] == pytest.approx([100 * 383 / 557, 100 * 5 / 7])  # conceptual errors of both models
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels[0] == "Conceptual error" and labels[-1] == "Unknown"  # uninformative bucket last
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["gpt-4o-mini (reference), n = 557", "local, n = 7"]


@pytest.mark.parametrize("draw, summaries", [
    (figures.option_bias_figure, OPTION_BIAS), (figures.three_tier_figure, THREE_TIER),
    (figures.counterfactual_figure, COUNTERFACTUAL), (figures.error_categories_figure, THREE_TIER),
])
def test_every_figure_is_saved_as_non_empty_png_and_pdf(tmp_path, draw, summaries):
    pdf, png = figures.save_figure(draw(summaries), "figure", tmp_path / "figures")
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 5000
    with Image.open(png) as image:
        assert image.format == "PNG"
        assert image.size[0] >= 900 and image.size[1] >= 300  # 300 dpi: sharp in print


def test_no_runs_is_a_clear_error_but_an_empty_run_says_why_it_is_empty():
    with pytest.raises(ValueError, match="No option-bias runs"):
        figures.option_bias_figure({})
    empty = figures.counterfactual_figure({"local": {"accuracy_original": 0.5, "perturbation_levels": {
        "1": {"n_valid": 0, "n_paired": 0, "accuracy": None}}}})
    assert "No valid perturbation" in empty.axes[0].texts[0].get_text()
    no_c = figures.error_categories_figure({"local": {"error_categories": {}}})
    assert "No Level C answers" in no_c.axes[0].texts[0].get_text()


def test_p_values_print_as_a_paper_prints_them():
    assert format_p(0.0446) == "p = 0.0446"
    assert format_p(3.3e-07) == "p < 0.001"
    assert format_p(None) == "p = n/a"


def test_counterfactual_figure_names_the_runs_it_cannot_show():
    fig = figures.counterfactual_figure({
        **COUNTERFACTUAL,
        "local": {"accuracy_original": 0.5, "perturbation_levels": {"1": {"n_valid": 0, "n_paired": 0}}},
    })
    assert fig.axes[0].get_xlabel() == "No valid perturbation answered: local (level 1)"


def test_three_tier_figure_draws_a_run_with_no_exact_answer() -> None:
    """0 of 3 exact: the Wilson interval starts exactly at 0, so its error bar is never negative."""
    from cfa_lib import stats
    from cfa_lib.report import figures as report_figures

    ci = list(stats.wilson_interval(0, 3))
    assert ci[0] == 0.0
    summary = {"n_graded": 3, "level_distribution": {"exact": 0, "directional": 0, "incorrect": 3},
               "level_rates": {"exact": 0.0, "directional": 0.0, "incorrect": 1.0},
               "strict_accuracy": 0.0, "strict_accuracy_ci": ci, "lenient_accuracy": 0.0, "lenient_accuracy_ci": ci}
    assert report_figures.three_tier_figure({"local": summary}) is not None


def test_option_bias_figure_says_why_a_run_without_pairs_has_no_bars() -> None:
    from cfa_lib.report import figures as report_figures

    empty = {"n_paired": 0, "accuracy_with_options": None, "accuracy_without_options": None,
             "accuracy_with_options_ci": None, "accuracy_without_options_ci": None, "mcnemar_test": {}}
    full = {"n_paired": 10, "accuracy_with_options": 0.8, "accuracy_without_options": 0.6,
            "accuracy_with_options_ci": [0.49, 0.94], "accuracy_without_options_ci": [0.31, 0.83],
            "option_bias": 0.2, "option_bias_ci": [0.0, 0.4], "mcnemar_test": {"p_value": 0.5}}
    assert report_figures.option_bias_figure({"local": empty}) is not None
    assert report_figures.option_bias_figure({"local": empty, "gpt": full}) is not None

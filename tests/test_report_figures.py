"""The paper's figures: the right bars and groups for two models, the numbers printed on them, and files a
journal accepts (PNG and PDF)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402
from PIL import Image  # noqa: E402

from cfa_lib import stats  # noqa: E402
from cfa_lib.experiments.counterfactual import COUNTERFACTUAL as COUNTERFACTUAL_EXPERIMENT  # noqa: E402
from cfa_lib.experiments.counterfactual_summary import summarize as summarize_counterfactual  # noqa: E402
from cfa_lib.experiments.loading import load_run  # noqa: E402
from cfa_lib.experiments.option_bias import OPTION_BIAS as OPTION_BIAS_EXPERIMENT  # noqa: E402
from cfa_lib.experiments.three_tier import THREE_TIER as THREE_TIER_EXPERIMENT  # noqa: E402
from cfa_lib.paths import REFERENCE_DIR  # noqa: E402
from cfa_lib.report import figures  # noqa: E402
from cfa_lib.report.format import format_p  # noqa: E402


def reference(experiment, file_name: str):
    """An original study's run, its summary recomputed from its own rows as published."""
    return load_run(experiment, REFERENCE_DIR / file_name).as_published


def three_tier_rows(levels: list[str], categories: list[str]) -> list:
    """Three-tier rows of these levels; each Level C answer takes the next error category."""
    causes = iter(categories)
    return [THREE_TIER_EXPERIMENT.Row(question_id=f"easy_{i}", level=level, evaluation={"auto_graded": True},
                                      error_attribution={"error_category": next(causes)} if level == "incorrect"
                                      else None) for i, level in enumerate(levels)]


def counterfactual_rows(originals: list[bool], *levels: dict[int, bool]) -> list:
    """Counterfactual rows: each question's original outcome and its answered perturbations by level."""
    return [COUNTERFACTUAL_EXPERIMENT.Row(original={"correct": original, "answer": "A"}, correct_answer="A",
                                          perturbations=[{"level": level, "valid": True, "correct": correct}
                                                         for level, correct in perturbed.items()])
            for original, perturbed in zip(originals, levels, strict=True)]


OPTION_BIAS = {
    "gpt-4o-mini (reference)": reference(OPTION_BIAS_EXPERIMENT, "A5_option_bias_gpt-4o-mini.json"),
    "gpt-5-mini (reference)": reference(OPTION_BIAS_EXPERIMENT, "A5_option_bias_gpt-5-mini.json"),
}
THREE_TIER = {
    "gpt-4o-mini (reference)": reference(THREE_TIER_EXPERIMENT, "A1_open_ended_gpt-4o-mini.json"),
    # 1 of 8 exact; the seven C answers: five conceptual errors, two arithmetic errors
    "local": THREE_TIER_EXPERIMENT.summarize(three_tier_rows(
        ["exact"] + ["incorrect"] * 7, ["conceptual_error"] * 5 + ["arithmetic_error"] * 2), {}),
}
COUNTERFACTUAL = {
    # level 1: six perturbations of originals half right, one still right; level 2: four, one still right
    "local": summarize_counterfactual(counterfactual_rows(
        [True, True, True, False, False, False],
        {1: True, 2: True}, {1: False, 2: False}, {1: False}, {1: False, 2: False}, {1: False, 2: False}, {1: False}),
        [1, 2]),
    "gpt-4o-mini (reference)": reference(COUNTERFACTUAL_EXPERIMENT, "I1_counterfactual_gpt-4o-mini.json"),
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
    assert exact.get_width() == pytest.approx(100 * 253 / 1032)
    assert directional.get_x() + directional.get_width() == pytest.approx(100 * 475 / 1032)  # lenient accuracy
    assert "strict 24.5%\nlenient 46.0%" in texts(fig)
    assert "strict 12.5%\nlenient 12.5%" in texts(fig)
    assert len(fig.axes[0].get_yticklabels()) == 2


def test_counterfactual_figure_pairs_original_and_perturbed_on_the_same_questions_per_level():
    fig = figures.counterfactual_figure(COUNTERFACTUAL)
    assert len(bars(fig)) == 6  # local: levels 1 and 2, reference: level 1; two bars each
    heights = [round(b.get_height(), 2) for b in bars(fig)]
    assert heights == [50.0, 50.0, 80.91, 16.67, 25.0, 63.82]  # originals, then perturbed, group by group
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks[0] == "local\nlevel 1: one\nnumber\nchanged\n(n = 6)"
    assert ticks[2] == "gpt-4o-mini\n(reference)\nlevel 1: one\nnumber\nchanged\n(n = 702)"
    # the study's file printed 18.6 pp against all originals; on the same questions the gap is 17.1 pp
    assert "gap\n+17.1 pp" in texts(fig)  # 702 pairs; the local run's 6 and 4 pairs are too few for a gap
    assert "6 pairs:\ntoo few" in texts(fig) and "4 pairs:\ntoo few" in texts(fig) and "+33.3" not in texts(fig)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["original question", "perturbed question"]


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


NO_VALID_PERTURBATION = summarize_counterfactual(counterfactual_rows([True], {}), [1])


def test_no_runs_is_a_clear_error_but_an_empty_run_says_why_it_is_empty():
    with pytest.raises(ValueError, match="No option-bias runs"):
        figures.option_bias_figure({})
    empty = figures.counterfactual_figure({"local": NO_VALID_PERTURBATION})
    assert "No valid perturbation" in empty.axes[0].texts[0].get_text()
    all_exact = THREE_TIER_EXPERIMENT.summarize(three_tier_rows(["exact", "exact"], []), {})
    no_c = figures.error_categories_figure({"local": all_exact})
    assert "No Level C answers" in no_c.axes[0].texts[0].get_text()


def test_p_values_print_as_a_paper_prints_them():
    assert format_p(0.0446) == "p = 0.0446"
    assert format_p(3.3e-07) == "p < 0.001"
    assert format_p(None) == "p = n/a"


def test_counterfactual_figure_names_the_runs_it_cannot_show():
    fig = figures.counterfactual_figure({**COUNTERFACTUAL, "local": NO_VALID_PERTURBATION})
    assert fig.axes[0].get_xlabel() == "No valid perturbation answered: local (level 1)"


def test_three_tier_figure_draws_a_run_with_no_exact_answer() -> None:
    """0 of 3 exact: the Wilson interval starts exactly at 0, so its error bar is never negative."""
    summary = THREE_TIER_EXPERIMENT.summarize(three_tier_rows(["incorrect"] * 3, ["conceptual_error"] * 3), {})
    assert summary.strict_accuracy_ci == stats.wilson_interval(0, 3) and summary.strict_accuracy_ci[0] == 0.0
    assert figures.three_tier_figure({"local": summary}) is not None


def test_option_bias_figure_says_why_a_run_without_pairs_has_no_bars() -> None:
    failed = OPTION_BIAS_EXPERIMENT.Row(question_id="easy_0", correct_with_options=True,
                                        correct_without_options=None, judge_verdict="MODEL_FAILED")
    empty = OPTION_BIAS_EXPERIMENT.summarize([failed], {})
    assert empty.n_paired == 0 and empty.excluded_reasons == {"MODEL_FAILED": 1}
    alone = figures.option_bias_figure({"local": empty})
    assert "No question of local has a graded answer in both formats" in alone.axes[0].texts[0].get_text()
    beside = figures.option_bias_figure({"local": empty, **OPTION_BIAS})
    assert len(bars(beside)) == 4  # the empty run has no bars, the others keep theirs

"""The shipped reviews of the reference runs: every row joins its run, and the README counts them right."""

from __future__ import annotations

import re

import pytest

from cfa_lib.experiments.registry import load_results
from cfa_lib.paths import REFERENCE_DIR, REVIEWS_DIR
from cfa_lib.review.files import review_file
from cfa_lib.review.scoring import score_review

STEMS = sorted(path.stem for path in REVIEWS_DIR.glob("*.csv"))


def test_every_reference_run_has_its_review():
    assert STEMS == sorted(path.stem for path in REFERENCE_DIR.glob("*.json"))


@pytest.mark.parametrize("stem", STEMS)
def test_the_shipped_review_scores_as_its_readme_says(stem):
    results = REFERENCE_DIR / f"{stem}.json"
    assert review_file(results) == REVIEWS_DIR / f"{stem}.csv"
    score = score_review(load_results(results, keys="original"), REVIEWS_DIR / f"{stem}.csv")  # made before the audit
    row = re.search(rf"\| {re.escape(stem)}\.csv \| (\d+) \| (\d+) \|", (REVIEWS_DIR / "README.md").read_text())
    assert row is not None
    assert (score.labels, score.cannot_tell, score.unlabelled) == (int(row[1]), int(row[2]), 0)
    assert score.overall.n == score.labels - score.cannot_tell


@pytest.mark.parametrize(("stem", "accuracy"), [
    ("A1_open_ended_gpt-4o-mini", "strict accuracy (A)"), ("A1_open_ended_gpt-5-mini", "strict accuracy (A)"),
    ("A5_option_bias_gpt-4o-mini", "open-answer accuracy"), ("A5_option_bias_gpt-5-mini", "open-answer accuracy")])
def test_the_abstract_gives_no_figure_corrected_by_a_models_labels(stem, accuracy):
    score = score_review(load_results(REFERENCE_DIR / f"{stem}.json", keys="original"), REVIEWS_DIR / f"{stem}.csv")
    assert not score.by_a_person and score.reviewer_kinds == ("model",)  # the shipped reviews are a model's
    found = next(a for a in score.accuracies if a.name == accuracy)
    text = " ".join((REVIEWS_DIR.parent.parent / "book" / "index.md").read_text(encoding="utf-8").split())
    corrected = f"{100 * found.corrected:.1f} % [{100 * found.ci[0]:.1f}, {100 * found.ci[1]:.1f}]"
    assert corrected not in text and "no corrected figure is given here" in text

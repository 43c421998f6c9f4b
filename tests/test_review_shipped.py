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
    score = score_review(load_results(results), REVIEWS_DIR / f"{stem}.csv")
    row = re.search(rf"\| {re.escape(stem)}\.csv \| (\d+) \| (\d+) \|", (REVIEWS_DIR / "README.md").read_text())
    assert row is not None
    assert (score.labels, score.cannot_tell, score.unlabelled) == (int(row[1]), int(row[2]), 0)
    assert score.overall.n == score.labels - score.cannot_tell

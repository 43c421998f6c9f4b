"""Where a run's review file is: beside its results, or (for the study's runs) in datasets/reviews/.

A review of `results/<experiment>/<run>/results.json` is `results.review.csv` in the same folder; a
review of a reference run `datasets/reference_runs/<stem>.json` ships as `datasets/reviews/<stem>.csv`.
"""

from __future__ import annotations

from pathlib import Path

from cfa_lib.paths import REFERENCE_DIR, REVIEWS_DIR

SUFFIX = ".review.csv"


def beside(results: Path | str) -> Path:
    """The review file a user makes for a results file: `<stem>.review.csv` in its folder."""
    results = Path(results)
    return results.with_name(results.stem + SUFFIX)


def review_file(results: Path | str) -> Path | None:
    """The review of a results file, if one exists (beside it first, then the shipped reviews)."""
    results = Path(results)
    candidates = [beside(results)]
    if results.resolve().parent == REFERENCE_DIR.resolve():
        candidates.append(REVIEWS_DIR / f"{results.stem}.csv")
    return next((path for path in candidates if path.is_file()), None)

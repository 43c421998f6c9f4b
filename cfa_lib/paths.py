"""Where the project's files are: the one place that knows the layout of the checkout.

A leaf module (it imports nothing of cfa_lib), so every other module can ask it for a folder without
pulling in results files, the registry or the models.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATASETS_DIR = PROJECT_ROOT / "datasets"
REFERENCE_DIR = DATASETS_DIR / "reference_runs"  # the original study's results files
REVIEWS_DIR = DATASETS_DIR / "reviews"  # the shipped human-check reviews of the reference runs
ANSWERABILITY_DIR = DATASETS_DIR / "answerability"  # the shipped classification and its reviewed exceptions
NOTEBOOKS_DIR = PROJECT_ROOT / "notebooks"
BUILD_DIR = PROJECT_ROOT / "build"


def results_root() -> Path:
    """Where runs are written: `$CFA_RESULTS_DIR`, else <project>/results."""
    return Path(os.environ.get("CFA_RESULTS_DIR", PROJECT_ROOT / "results"))


def resolve(path: str | Path) -> Path:
    """Relative paths are relative to the project root, so a notebook gives the same answer from any cwd."""
    path = Path(path)
    return path if path.is_absolute() else PROJECT_ROOT / path


def display_path(path: str | Path) -> str:
    """A path as a reader of the book should see it: relative to the project, never the build machine's."""
    try:
        return str(Path(path).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return Path(path).name

"""CFA reasoning toolkit.

The entry points most users need are importable from the top level (loaded on first use, so
`import cfa_lib` stays light):

* `load_dataset(name, limit=None, sample_seed=None)`: the FinEval CFA questions;
* `extract_choice(text, choices="ABC")`: the letter a multiple-choice response commits to;
* `grade_open_answer(question, response, finish_reason=None, tolerance=0.02)`: one verdict
  ("correct", "incorrect", "no_answer", "truncated", "judge") for one open answer;
* `grade_choice(question, response, finish_reason=None)`: the same for a multiple-choice answer;
* `load_results(path)`: any results file, ours or the original study's, as a `LoadedRun`: its typed rows,
  `summary` (recomputed under this toolkit's rules) beside `as_published` (the file's own verdicts) and the
  count of what changed (`regrade_changes`);
* `items_frame(paths_or_runs)`: one pandas row per run × question × condition (format, original or
  perturbation) across runs, with model, verdict, value read, reading path and exclusion: the ground of
  the comparisons between models (`cfa_lib.compare`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "load_dataset": "cfa_lib.data",
    "extract_choice": "cfa_lib.answers",
    "grade_open_answer": "cfa_lib.answers",
    "grade_choice": "cfa_lib.answers",
    "OpenGrade": "cfa_lib.answers",
    "load_results": "cfa_lib.experiments.registry",
    "items_frame": "cfa_lib.report.items_frame",
}
__all__ = ["OpenGrade", "__version__", "extract_choice", "grade_choice", "grade_open_answer", "items_frame",
           "load_dataset", "load_results"]

if TYPE_CHECKING:
    from cfa_lib.answers import OpenGrade, extract_choice, grade_choice, grade_open_answer
    from cfa_lib.data import load_dataset
    from cfa_lib.experiments.registry import load_results
    from cfa_lib.report.items_frame import items_frame


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cfa_lib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])

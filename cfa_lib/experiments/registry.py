"""The experiment registry: the one place that lists the study's experiments, as objects.

Everything that needs to know which experiments exist (reading results files, the paper's tables and
figures, the pipeline, the book) reads `EXPERIMENTS`. Adding an experiment is one module in this
package (an `Experiment` subclass: options, requests, grading, `Row`, `summarize`) and one entry below.
"""

from __future__ import annotations

from pathlib import Path

from cfa_lib.experiments.confidence import CONFIDENCE
from cfa_lib.experiments.contract import Experiment
from cfa_lib.experiments.counterfactual import COUNTERFACTUAL
from cfa_lib.experiments.loading import LoadedRun, load_run
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.experiments.three_tier import THREE_TIER
from cfa_lib.key_audit import Keys
from cfa_lib.results import ResultsFileError, read_results

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in (OPTION_BIAS, THREE_TIER, COUNTERFACTUAL, CONFIDENCE)}
FIGURES_NOTEBOOK = "04_paper_figures.ipynb"  # draws every experiment's runs into the paper's figures


def experiment(name: str) -> Experiment:
    """The registry entry, or an error naming the accepted experiments."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ValueError(f"experiment={name!r} is not valid: accepted values are {', '.join(EXPERIMENTS)}.") from None


def experiment_showing(item: str) -> Experiment:
    """The experiment whose runs a paper table or figure draws."""
    for entry in EXPERIMENTS.values():
        if item in entry.tables or item in entry.figures:
            return entry
    raise ValueError(f"{item!r} is no table or figure of the registry's experiments.")


def load_results(path: str | Path, keys: Keys = "audited") -> LoadedRun:
    """Any results file, ours or the original study's, loaded by its experiment's rules (`loading.load_run`):
    against the audited answer keys, or with `keys="original"` the keys it was graded against."""
    found = read_results(path)["metadata"].get("experiment")
    for entry in EXPERIMENTS.values():
        if found in entry.file_names:
            return load_run(entry, path, keys)
    raise ResultsFileError(f"{path} holds experiment {found!r}: accepted values are "
                           f"{', '.join(sorted(n for e in EXPERIMENTS.values() for n in e.file_names))}.")

"""The experiment registry: the one place that lists the study's experiments.

Everything that needs to know which experiments exist (reading results files, the paper's tables and
figures, the pipeline, the book) reads `EXPERIMENTS`. Adding an experiment is one module in this
package (its requests, grading, `Row` and `summarize`) and one entry below.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Experiment:
    name: str  # folder under results/, `metadata.experiment` in our files
    card_id: str  # the original study's experiment card: A5, A1, I1
    title: str
    notebook: str  # under notebooks/; executed into book/executed/
    file_names: frozenset[str]  # accepted `metadata.experiment` values (ours and the study's)
    reference_prefix: str  # the study's result files in datasets/reference_runs/
    tables: tuple[str, ...] = ()  # paper tables drawn from this experiment's runs (cfa_lib.report)
    figures: tuple[str, ...] = ()  # paper figures drawn from this experiment's runs (cfa_lib.report)

    @property
    def module(self) -> ModuleType:
        """The experiment's module (imported on first use, so the registry stays import-light)."""
        return importlib.import_module(f"{__name__}.{self.name}")


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment("option_bias", "A5", "Option bias", "01_option_bias.ipynb",
                   frozenset({"option_bias", "A5_option_bias"}), "A5_",
                   tables=("table_p1_option_bias",), figures=("fig1_option_bias",)),
        Experiment("three_tier", "A1", "Three-tier grading", "02_three_tier.ipynb",
                   frozenset({"three_tier", "A1_open_ended"}), "A1_",
                   tables=("table_p1_three_tier", "table_error_categories"),
                   figures=("fig2_three_tier", "fig4_error_categories")),
        Experiment("counterfactual", "I1", "Counterfactual testing", "03_counterfactual.ipynb",
                   frozenset({"counterfactual", "I1_counterfactual"}), "I1_",
                   tables=("table_counterfactual",), figures=("fig3_counterfactual",)),
    )
}
FIGURES_NOTEBOOK = "04_paper_figures.ipynb"  # draws every experiment's runs into the paper's figures


def load_results(path: str | Path) -> dict[str, Any]:
    """Any results file, ours or the original study's, loaded by its experiment's rules: rows read, the
    summary recomputed by this toolkit (`recomputed_summary`) beside the file's own verdicts
    (`recomputed_as_published`), and `regrade_changes` counting what the toolkit's rules changed."""
    from cfa_lib.results import ResultsFileError
    from cfa_lib.results import load_results as read

    found = read(path)["metadata"].get("experiment")
    for entry in EXPERIMENTS.values():
        if found in entry.file_names:
            return entry.module.load(path)
    raise ResultsFileError(f"{path} holds experiment {found!r}: accepted values are "
                           f"{', '.join(sorted(n for e in EXPERIMENTS.values() for n in e.file_names))}.")


def experiment(name: str) -> Experiment:
    """The registry entry, or an error naming the accepted experiments."""
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise ValueError(f"experiment={name!r} is not valid: accepted values are {', '.join(EXPERIMENTS)}.") from None

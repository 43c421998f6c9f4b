"""Which runs the report shows, under which label, from which source.

A figure or table must say where each number comes from, so every run carries a label that tells our
runs from the original study's ("gpt-4o-mini (reference)") and a source line. Tables and figures take
typed summaries by label: `summaries` of collected runs, or `by_model` of one loaded run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfa_lib.experiments.contract import Summary
from cfa_lib.experiments.loading import LoadedRun, latest_runs, load_run, reference_files
from cfa_lib.experiments.option_bias_summary import OptionBiasSummary
from cfa_lib.experiments.registry import EXPERIMENTS, experiment
from cfa_lib.experiments.variants import summarize_variants
from cfa_lib.paths import resolve

REFERENCE_SOURCE = "imported from the original study (taiwanfifi/CFA_essay)"
OWN_SOURCE = "this toolkit"


@dataclass(frozen=True)
class Run:
    """One results file as the report shows it."""

    experiment: str
    label: str
    loaded: LoadedRun
    reference: bool
    as_published: bool = False  # the file's own verdicts, shown beside this toolkit's re-grading

    @property
    def summary(self) -> Any:
        return self.loaded.as_published if self.as_published else self.loaded.summary

    @property
    def rows(self) -> list[Any]:
        """The file's rows, as written (the study's verdicts in an imported file)."""
        return self.loaded.rows

    @property
    def metadata(self) -> Any:
        return self.loaded.metadata

    @property
    def path(self) -> Path:
        return self.loaded.path

    @property
    def source(self) -> str:
        return REFERENCE_SOURCE if self.reference else OWN_SOURCE


def model_label(model: str) -> str:
    """A model name short enough for a legend: `local:/long/path/x.gguf` shows as `local:x.gguf`."""
    prefix, _, path = model.partition(":")
    return f"local:{Path(path).name}" if prefix == "local" and path else model


def collect_runs(name: str, results_dir: str | Path = "results", include_reference: bool = True) -> list[Run]:
    """Our latest run per model and dataset, then (optionally) the original study's runs."""
    entry = experiment(name)
    paths = [(p, False) for p in latest_runs(entry, resolve(results_dir))]
    if include_reference:
        paths += [(p, True) for p in reference_files(entry)]
    loaded = [(reference, load_run(entry, path)) for path, reference in paths]
    datasets = {run.dataset for _, run in loaded}
    runs = []
    for reference, run in loaded:
        label = model_label(run.model)
        if len(datasets) > 1:
            label += f" · {run.dataset}"
        if reference and run.regrade_changes:  # both figures, side by side
            runs.append(Run(name, f"{label} (reference, as published)", run, True, as_published=True))
            runs.append(Run(name, f"{label} (reference, re-graded)", run, True))
            continue
        if reference:
            label += " (reference)"
        runs.append(Run(name, label, run, reference))
    return runs


def collect_all(results_dir: str | Path = "results", include_reference: bool = True) -> dict[str, list[Run]]:
    """Every experiment's runs, in the registry's order."""
    runs = {name: collect_runs(name, results_dir, include_reference) for name in EXPERIMENTS}
    if not any(runs.values()):
        raise FileNotFoundError(
            f"No results files under {resolve(results_dir)} and include_reference=False: run notebooks 01-03 "
            "(make notebooks) or set include_reference=True."
        )
    return runs


def summaries(runs: Sequence[Run]) -> dict[str, Any]:
    """{label: summary} of collected runs, the shape every table and figure takes."""
    return {run.label: run.summary for run in runs}


def by_model(run: LoadedRun) -> dict[str, Summary]:
    """{model: summary} of one loaded run, the shape every table and figure takes."""
    return {model_label(run.model): run.summary}


def variants_by_model(run: LoadedRun) -> dict[str, OptionBiasSummary]:
    """`by_model` with the answer-format variants recomputed from the run's rows (none when the run asked
    none): the shape `figures.variants_figure` takes."""
    return {label: summary.with_facts(variants=summarize_variants(run.rows))
            for label, summary in by_model(run).items()}

"""Which runs the report shows, under which label, from which source.

A figure or table must say where each number comes from, so every run carries a label that tells our
runs from the original study's ("gpt-4o-mini (reference)") and a source line. Tables and figures take
plain summary dicts (label → summary): `summaries` of collected runs, or `by_model` of one loaded run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfa_lib.experiments import EXPERIMENTS, experiment
from cfa_lib.results import PROJECT_ROOT, latest_runs, reference_files

REFERENCE_SOURCE = "imported from the original study (taiwanfifi/CFA_essay)"
OWN_SOURCE = "this toolkit"

Summary = Mapping[str, Any]


@dataclass(frozen=True)
class Run:
    """One results file as the report shows it."""

    experiment: str
    label: str
    path: Path
    reference: bool
    data: dict[str, Any]
    as_published: bool = False  # the file's own verdicts, shown beside this toolkit's re-grading

    @property
    def summary(self) -> dict[str, Any]:
        if self.as_published:
            return self.data["recomputed_as_published"]
        return self.data.get("recomputed_summary") or self.data["summary"]

    @property
    def metadata(self) -> dict[str, Any]:
        return self.data["metadata"]

    @property
    def source(self) -> str:
        return REFERENCE_SOURCE if self.reference else OWN_SOURCE


def resolve(path: str | Path) -> Path:
    """Relative paths are relative to the project root, so a notebook gives the same answer from any cwd."""
    path = Path(path)
    return path if path.is_absolute() else PROJECT_ROOT / path


def load_run(name: str, path: Path) -> dict[str, Any]:
    """The experiment module's `load`: the file validated and its summary recomputed from the rows."""
    return experiment(name).module.load(path)


def experiment_showing(item: str) -> str:
    """The experiment whose runs a paper table or figure draws, as the registry lists it."""
    for entry in EXPERIMENTS.values():
        if item in entry.tables or item in entry.figures:
            return entry.name
    raise ValueError(f"{item!r} is no table or figure of the registry's experiments.")


def model_label(model: str) -> str:
    """A model name short enough for a legend: `local:/long/path/x.gguf` shows as `local:x.gguf`."""
    prefix, _, path = model.partition(":")
    return f"local:{Path(path).name}" if prefix == "local" and path else model


def collect_runs(name: str, results_dir: str | Path = "results", include_reference: bool = True) -> list[Run]:
    """Our latest run per model and dataset, then (optionally) the original study's runs."""
    paths = [(p, False) for p in latest_runs(name, resolve(results_dir))]
    if include_reference:
        paths += [(p, True) for p in reference_files(name)]
    loaded = [(path, reference, load_run(name, path)) for path, reference in paths]
    datasets = {str(data["metadata"].get("dataset")) for _, _, data in loaded}
    runs = []
    for path, reference, data in loaded:
        meta = data["metadata"]
        label = model_label(str(meta.get("model", path.parent.name)))
        if len(datasets) > 1:
            label += f" · {meta.get('dataset')}"
        if reference and data.get("regrade_changes"):  # both figures, side by side
            runs.append(Run(name, f"{label} (reference, as published)", path, True, data, as_published=True))
            runs.append(Run(name, f"{label} (reference, re-graded)", path, True, data))
            continue
        if reference:
            label += " (reference)"
        runs.append(Run(name, label, path, reference, data))
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


def summaries(runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    """{label: summary} of collected runs, the shape every table and figure takes."""
    return {run.label: run.summary for run in runs}


def by_model(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{model: summary} of one loaded run, the shape every table and figure takes."""
    return {model_label(str(data["metadata"]["model"])): data["recomputed_summary"]}


def variants_by_model(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`by_model` with the answer-format variants recomputed from the run's rows under "variants" ({} when
    the run asked none): the shape `figures.variants_figure` takes."""
    from cfa_lib.experiments.variants import recomputed

    return {label: {**summary, "variants": recomputed(data)} for label, summary in by_model(data).items()}

"""One tidy table of every graded item across runs (after inspect_ai's `samples_df()`).

A row is one run × question × condition: Format A or B of option bias, the open answer of three-tier
grading, the original or one perturbation of the counterfactual test. The comparisons across models
(`cfa_lib.compare`) stand on this table, and a researcher explores it in JupyterLab:

    from cfa_lib import items_frame
    items = items_frame(["results/option_bias/local/results.json"])   # paths, loaded runs or report runs
    items.groupby(["subject", "condition"])["correct"].mean()

Every item is the experiment's own `Sample` (`Experiment.samples`) with its `Outcome`, so `correct` is True/False
for a counted item (no answer is not correct) and None for an excluded one, whose reason is in `excluded`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from cfa_lib.answers import Number
from cfa_lib.experiments.contract import Sample
from cfa_lib.experiments.loading import LoadedRun
from cfa_lib.experiments.registry import load_results
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.report.runs import Run, model_label

COLUMNS = ["subject", "run", "experiment", "model", "dataset", "imported", "as_published", "question_id",
           "answerable", "condition", "perturbation_level", "perturbation", "valid", "perturbation_source",
           "status", "correct", "tier", "value", "source", "judged", "excluded", "decided_by", "reason", "response",
           "item"]

RunLike = str | Path | LoadedRun | Run


def subject_label(model: str, dataset: str, imported: bool, several_datasets: bool = False) -> str:
    """Who answered, as the comparisons name a model: the same across experiments, the study's runs
    marked "(reference)" (the re-graded verdicts; the as-published ones are a separate `run`)."""
    label = model_label(model) + (f" · {dataset}" if several_datasets else "")
    return label + (" (reference)" if imported else "")


def _is_reference(path: Path) -> bool:
    return path.resolve().parent == REFERENCE_DIR.resolve()


def _as_runs(items: RunLike | Iterable[RunLike] | Mapping[str, Iterable[RunLike]]) -> list[Run]:
    """Paths, loaded runs, report runs, or `collect_all`'s {experiment: runs}, as report runs."""
    if isinstance(items, Mapping):
        items = [run for group in items.values() for run in group]
    elif isinstance(items, str | Path | LoadedRun | Run):
        items = [items]
    runs = []
    for item in items:
        if isinstance(item, Run):
            runs.append(item)
            continue
        loaded = item if isinstance(item, LoadedRun) else load_results(item)
        reference = _is_reference(loaded.path)
        label = model_label(loaded.model) + (" (reference)" if reference else "")
        runs.append(Run(loaded.experiment, label, loaded, reference))
    return runs


def _value(value: Any) -> Any:
    return value.short() if isinstance(value, Number) else value


def _sample_fields(sample: Sample) -> dict[str, Any]:
    outcome = sample.outcome
    fields = {"question_id": sample.question_id, "answerable": sample.answerable, "condition": sample.condition,
              "tier": sample.tier, "perturbation_level": sample.perturbation_level,
              "perturbation": sample.perturbation, "valid": sample.valid,
              "perturbation_source": sample.perturbation_source, "response": sample.response, "item": sample.item}
    if outcome is not None:  # an invalid perturbation was never asked: no status, no verdict
        fields |= {"status": outcome.status, "correct": outcome.correct, "value": _value(outcome.value),
                   "source": outcome.source, "judged": outcome.judged, "excluded": outcome.excluded,
                   "decided_by": outcome.decided_by, "reason": outcome.reason}
    return fields


def items_frame(paths_or_runs: RunLike | Iterable[RunLike] | Mapping[str, Iterable[RunLike]]) -> pd.DataFrame:
    """Every item of every run, one row per run × question × condition (columns: `COLUMNS`).

    A run's items are its re-graded rows (this toolkit's rules), except a report run shown "as published",
    whose rows are the file's own verdicts (`as_published` True). `subject` names the model (and the dataset
    when the runs span several) the same way in every experiment; `imported` marks the original study's runs.
    """
    runs = _as_runs(paths_or_runs)
    several = len({run.loaded.dataset for run in runs}) > 1
    records = []
    for run in runs:
        loaded = run.loaded
        rows = loaded.rows if run.as_published else loaded.regraded_rows
        head = {"subject": subject_label(loaded.model, loaded.dataset, run.reference, several), "run": run.label,
                "experiment": loaded.experiment, "model": loaded.model, "dataset": loaded.dataset,
                "imported": run.reference, "as_published": run.as_published}
        records += [{**head, **_sample_fields(sample)} for sample in loaded.entry.samples(rows)]
    frame = pd.DataFrame.from_records(records, columns=COLUMNS)
    for column in ("correct", "valid", "judged"):
        frame[column] = frame[column].astype("boolean")
    frame["perturbation_level"] = frame["perturbation_level"].astype("Int64")
    frame["perturbation"] = frame["perturbation"].astype("Int64")
    return frame

"""A results file read back by its experiment's rules: typed rows, the summary recomputed from them.

What the book shows never depends on the summary a file claims. `as_published` keeps the file's own
verdicts; `summary` applies this toolkit's rules (`Experiment.regrade`) and `regrade_changes` counts the
rows each rule changed, so a reader sees both figures side by side and why they differ. For our own
files the two agree.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic

from cfa_lib.experiments.contract import Experiment, RowT, Sample, SummaryT
from cfa_lib.experiments.judging import JudgeAgreement, JudgeCalibration
from cfa_lib.key_audit import Keys, key_audit
from cfa_lib.paths import REFERENCE_DIR, results_root
from cfa_lib.results import ResultsFileError, read_results


@dataclass(frozen=True)
class LoadedRun(Generic[RowT, SummaryT]):
    """One results file, ours or the original study's, as the report and the notebooks use it."""

    experiment: str
    path: Path
    metadata: Mapping[str, Any]
    file_summary: Mapping[str, Any]  # the file's own summary: the run's facts (usage, coverage) as written
    rows: list[RowT]  # as in the file
    regraded_rows: list[RowT]  # this toolkit's rules applied (the same rows for our own files)
    summary: SummaryT  # recomputed from `regraded_rows`
    as_published: SummaryT  # recomputed from `rows`, the file's own verdicts
    regrade_changes: dict[str, int]
    entry: Experiment = field(repr=False)  # the registry entry that read the file: its samples, its review

    def samples(self) -> list[Sample]:
        """The run's graded items under this toolkit's rules, one per question and condition."""
        return list(self.entry.samples(self.regraded_rows))

    @property
    def model(self) -> str:
        return str(self.metadata.get("model", self.path.parent.name))

    @property
    def dataset(self) -> str:
        return str(self.metadata.get("dataset", "easy"))


def check_experiment(data: Mapping[str, Any], path: Path, experiment: Experiment) -> None:
    """The file holds `experiment`'s runs and every row carries what its summary needs."""
    found = data["metadata"].get("experiment")
    if found not in experiment.file_names:
        raise ResultsFileError(
            f"{path} holds experiment {found!r}, not {experiment.name!r}: pass a results file of that experiment.")
    required = experiment.Row.required_fields()
    for i, row in enumerate(data["results"]):
        missing = required - row.keys()
        if missing:
            raise ResultsFileError(f"{path}: results row {i} lacks {sorted(missing)} (corrupt or edited file?).")


def file_facts(file_summary: Mapping[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The run's facts rows cannot give back, from the file: the judge's calibration and agreement, who judged."""
    facts: dict[str, Any] = {}
    for name, kind in (("judge_calibration", JudgeCalibration), ("judge_agreement", JudgeAgreement)):
        if name in file_summary:
            facts[name] = None if file_summary[name] is None else kind.from_dict(file_summary[name])
    facts["self_judged"] = metadata.get("self_judged")
    return facts


def graded_keys(metadata: Mapping[str, Any]) -> str:
    """The answer keys a file was graded against: the metadata's `keys` (ours), else the dataset's (the study's)."""
    keys = metadata.get("keys")
    return keys.get("keys", "original") if isinstance(keys, Mapping) else "original"


def load_run(experiment: Experiment[Any, RowT, SummaryT], path: str | Path, keys: Keys = "audited"
             ) -> LoadedRun[RowT, SummaryT]:
    """A results file of `experiment` (ours or the original study's), its summary recomputed from its rows: this
    toolkit's rules, and with `keys="audited"` the key audit's keys on a file graded against the dataset's
    (`Experiment.audit`); "original" leaves the keys the file was graded against."""
    if keys not in ("audited", "original"):
        raise ValueError(f"keys={keys!r} is not valid: accepted values are 'audited' and 'original'")
    path = Path(path)
    data = read_results(path)
    check_experiment(data, path, experiment)
    metadata = data["metadata"]
    rows = [experiment.Row.from_dict(row) for row in data["results"]]
    regraded, changes = experiment.regrade(rows)
    if keys == "audited" and graded_keys(metadata) == "original":
        regraded, audited = experiment.audit(regraded, key_audit(metadata.get("dataset") or "easy"))
        changes = {**changes, **audited}
    facts = file_facts(data["summary"], metadata)
    as_published = experiment.summarize(rows, metadata).with_facts(**facts)
    summary = experiment.summarize(regraded, metadata).with_facts(**facts) if changes else as_published
    return LoadedRun(experiment.name, path, metadata, data["summary"], rows, regraded, summary, as_published,
                     changes, experiment)


def reference_files(experiment: Experiment) -> list[Path]:
    """The original study's files of this experiment (datasets/reference_runs/)."""
    if experiment.reference_prefix is None:
        return []  # an experiment the study did not run
    return sorted(REFERENCE_DIR.glob(f"{experiment.reference_prefix}*.json"))


def latest_runs(experiment: Experiment, root: Path | None = None) -> list[Path]:
    """The newest results file per (model, dataset) under results/<experiment>/; a damaged file is skipped
    with a warning naming it."""
    newest: dict[tuple[str, str], tuple[str, Path]] = {}
    for path in sorted((root or results_root()).glob(f"{experiment.name}/*/results.json")):
        try:
            data = read_results(path)
            check_experiment(data, path, experiment)
        except ResultsFileError as exc:
            warnings.warn(f"skipped: {exc}", stacklevel=2)
            continue
        meta = data["metadata"]
        key = (str(meta.get("model")), str(meta.get("dataset")))
        stamp = str(meta.get("timestamp", ""))
        if key not in newest or stamp >= newest[key][0]:
            newest[key] = (stamp, path)
    return [path for _, path in sorted(newest.values())]


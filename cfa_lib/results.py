"""Results files: written atomically, read back with validation.

A results file is the study's unit of evidence, so a half-written or foreign file must fail loudly
with its path, never feed a wrong number into a figure.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from cfa_lib import experiments as registry
from cfa_lib.paths import PROJECT_ROOT, REFERENCE_DIR, results_root  # noqa: F401


class ResultsFileError(ValueError):
    """A results file that is missing, corrupt, truncated or of another experiment."""


@dataclass
class ResultRow:
    """Base of every experiment's typed results row.

    Fields without a default are what the experiment's summary needs, so a file lacking one is refused;
    fields of the original study's files that we do not use are kept in `extra` and written back as they
    were, so `from_dict(row).to_dict() == row` for ours and theirs alike.
    """

    extra: dict[str, Any] = field(default_factory=dict, kw_only=True, repr=False)

    @classmethod
    def required_fields(cls) -> set[str]:
        return {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        known = {f.name for f in fields(cls)} - {"extra"}
        return cls(**{k: v for k, v in data.items() if k in known},
                   extra={k: v for k, v in data.items() if k not in known})

    def to_dict(self) -> dict[str, Any]:
        row = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return {**row, **self.extra}


def safe_name(model: str) -> str:
    """A model name as a folder name: 'ollama/llama3.1:8b' → 'ollama-llama3.1-8b'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") or "model"


def new_run_id(model: str, dataset: str) -> str:
    """UTC timestamp plus model and dataset, safe as a folder name."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}_{safe_name(model)}_{dataset}"


def write_json_atomic(data: Any, path: Path) -> Path:
    """Write to a temporary file in the same folder, then rename: a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False, allow_nan=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_results(experiment: str, run_id: str, data: dict[str, Any]) -> Path:
    return write_json_atomic(data, results_root() / experiment / run_id / "results.json")


def load_results(path: str | Path, experiment: str | None = None) -> dict[str, Any]:
    """Read a results file (ours or the original study's) and check its shape and experiment."""
    path = Path(path)
    if not path.is_file():
        raise ResultsFileError(f"results_path {str(path)!r} does not exist or is not a file.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultsFileError(f"{path} is not valid JSON (corrupt or truncated?): {exc}") from exc
    if not isinstance(data, dict) or not {"metadata", "summary", "results"} <= data.keys():
        raise ResultsFileError(f"{path} is not a results file: it needs 'metadata', 'summary' and 'results'.")
    if not isinstance(data["metadata"], dict):
        raise ResultsFileError(f"{path}: 'metadata' must be an object.")
    if not isinstance(data["results"], list):
        raise ResultsFileError(f"{path}: 'results' must be a list of rows.")
    for i, row in enumerate(data["results"]):
        if not isinstance(row, dict):
            raise ResultsFileError(f"{path}: results row {i} is not an object: {str(row)[:80]!r}.")
    if experiment is not None:
        entry = registry.experiment(experiment)
        found = data["metadata"].get("experiment")
        if found not in entry.file_names:
            raise ResultsFileError(
                f"{path} holds experiment {found!r}, not {experiment!r}: pass a results file of that experiment."
            )
        for i, row in enumerate(data["results"]):
            missing = entry.module.Row.required_fields() - row.keys()
            if missing:
                raise ResultsFileError(f"{path}: results row {i} lacks {sorted(missing)} (corrupt or edited file?).")
    return data


def reference_files(experiment: str) -> list[Path]:
    return sorted(REFERENCE_DIR.glob(f"{registry.experiment(experiment).reference_prefix}*.json"))


def latest_runs(experiment: str, root: Path | None = None) -> list[Path]:
    """The newest results file per (model, dataset) under results/<experiment>/."""
    newest: dict[tuple[str, str], tuple[str, Path]] = {}
    for path in sorted((root or results_root()).glob(f"{experiment}/*/results.json")):
        try:
            meta = load_results(path, experiment)["metadata"]
        except ResultsFileError as exc:
            warnings.warn(f"skipped: {exc}", stacklevel=2)
            continue
        key = (str(meta.get("model")), str(meta.get("dataset")))
        stamp = str(meta.get("timestamp", ""))
        if key not in newest or stamp >= newest[key][0]:
            newest[key] = (stamp, path)
    return [path for _, path in sorted(newest.values())]

"""Results files: written atomically, read back with their shape checked, and the typed-row base.

A results file is the study's unit of evidence, so a half-written or foreign file must fail loudly
with its path, never feed a wrong number into a figure. Which experiment a file holds, and whether its
rows carry what that experiment needs, is checked where the experiments are known
(`cfa_lib.experiments.loading`); this module knows files, not experiments.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self, TextIO

from cfa_lib.paths import results_root


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


def write_atomic(path: Path | str, write: Callable[[TextIO], Any]) -> Path:
    """`write(handle)` into a temporary file in the same folder, then rename: a crash never leaves half a file
    (a results file is streamed into it, a review sheet written at once)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(text: str, path: Path | str) -> Path:
    return write_atomic(path, lambda handle: handle.write(text))


def write_json_atomic(data: Any, path: Path) -> Path:
    return write_atomic(path, lambda handle: json.dump(data, handle, indent=2, ensure_ascii=False, allow_nan=False))


def write_results(experiment: str, run_id: str, data: dict[str, Any]) -> Path:
    return write_json_atomic(data, results_root() / experiment / run_id / "results.json")


def read_results(path: str | Path) -> dict[str, Any]:
    """Read a results file (ours or the original study's) and check its shape."""
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
    return data

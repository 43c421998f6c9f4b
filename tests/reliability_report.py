"""The measured figures of the reliability tests, written to build/reliability.json as they run.

Each check is recorded before its assertions, so a failed check shows up in the book as "no" with its
numbers rather than vanishing. `cfa_lib.publishing.pages.reliability_page` turns the file into the appendix page.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cfa_lib.results import write_json_atomic

ROOT = Path(__file__).resolve().parents[1]
REPORT_ENV = "CFA_RELIABILITY_JSON"  # lets a test of this module write elsewhere


# pytest's per-test folders ("/tmp/pytest-of-root/pytest-33/test_x0/...") mean nothing in the book.
TMP_PATH = re.compile(re.escape(tempfile.gettempdir()) + r"/pytest-of-[^/]+/pytest-\d+/(popen-gw\d+/)?[^/\s']+")


def _portable(value: Any) -> Any:
    if isinstance(value, str):
        return TMP_PATH.sub("$TMP", value)
    if isinstance(value, dict):
        return {k: _portable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_portable(v) for v in value]
    return value


def report_path() -> Path:
    return Path(os.environ.get(REPORT_ENV, ROOT / "build" / "reliability.json"))


def record(check: str, *, theme: str, title: str, passed: bool, figures: dict[str, Any]) -> None:
    """Merge one check into the report (read, update, atomic write: a crash never truncates it), under a
    lock: the test workers of `make test` (pytest-xdist) record at the same time."""
    path = report_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            report = {}
        if not isinstance(report.get("checks"), dict):
            report = {"checks": {}}
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        report["updated"] = now
        report["checks"][check] = {"theme": theme, "title": title, "passed": bool(passed), "measured": now,
                                   "figures": _portable(figures)}
        write_json_atomic(report, path)

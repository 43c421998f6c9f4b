"""The book's "Reliability" appendix: the figures the reliability tests measured, check by check.

The tests (tests/test_reliability_*.py) write build/reliability.json as they run; this module only
renders it, so the page always shows what was measured, failures included, and never a hand-typed claim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

THEMES = ("Bad input", "Faults during a run", "Files", "Security")
INTRO = (
    "Researchers run these notebooks overnight on thousands of paid calls. The checks below are run by "
    "`pytest tests/test_reliability_*.py` against a loopback fake OpenAI-compatible server that answers "
    "deterministically, injects faults (429 with Retry-After, 500, stalls, dropped connections) and counts "
    "every request and every answer per prompt, so \"duplicates paid\" is what the server counted, not what "
    "the client believes. Each row is one check with the figures it measured."
)


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k}: {_cell(v)}" for k, v in value.items()) or "none"
    elif isinstance(value, list | tuple):
        text = ", ".join(_cell(v) for v in value) or "none"
    elif value is None:
        text = "–"
    else:
        text = str(value)
    # "|" would end the table cell, "<" open HTML, and "$" start MyST's inline maths.
    return " ".join(text.replace("|", "\\|").replace("<", "&lt;").replace("$", "\\$").split())


def _figures(figures: Mapping[str, Any]) -> str:
    return "; ".join(f"{name.replace('_', ' ')}: {_cell(value)}" for name, value in figures.items())


def render(json_path: str | Path) -> str:
    """Markdown of the page; a missing or unreadable report gives a page that says how to produce it."""
    path = Path(json_path)
    lines = ["# Reliability", "", INTRO, ""]
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        checks = report["checks"]
        if not isinstance(checks, dict):
            raise TypeError("'checks' is not an object")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        lines += [f"No measurements yet ({path.name}: {type(exc).__name__}). Run "
                  "`pytest tests/test_reliability_*.py` to produce them.", ""]
        return "\n".join(lines)
    passed = sum(bool(c.get("passed")) for c in checks.values())
    lines += [f"**{passed} of {len(checks)} checks passed** (last measured {report.get('updated', 'unknown')}).", ""]
    themes = [*THEMES, *sorted({c.get("theme", "Other") for c in checks.values()} - set(THEMES))]
    for theme in themes:
        rows = [(name, c) for name, c in sorted(checks.items()) if c.get("theme", "Other") == theme]
        if not rows:
            continue
        lines += [f"## {theme}", "", "| check | passed | measured figures |", "| --- | --- | --- |"]
        for _, check in rows:
            lines.append(f"| {_cell(check.get('title'))} | {_cell(bool(check.get('passed')))} | "
                         f"{_figures(check.get('figures') or {})} |")
        lines.append("")
    return "\n".join(lines)

"""The blind review of generated items: the validity rate a referee can quote, with its Wilson interval.

`datasets/templates/review.jsonl` holds one row per reviewed item (`python -m cfa_lib.perturbation items`
dumps them without keys): question_id, dataset, level, seed, round, reviewer_answer (a letter or null),
verdict (valid | defective) and reason. Rounds follow fixes: only the last round describes the shipped
templates, so the rate is computed on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cfa_lib.jsonl import json_lines
from cfa_lib.perturbation.schema import TemplateError, templates_dir
from cfa_lib.stats import wilson_interval

REVIEW_FILE = "review.jsonl"
VERDICTS = ("valid", "defective")


@dataclass(frozen=True)
class ReviewRow:
    question_id: str
    dataset: str
    level: int
    seed: int
    round: int
    reviewer_answer: str | None
    verdict: Literal["valid", "defective"]
    reason: str
    from_memory: bool | None = None  # from round 5 (#32): would remembering the original question's answer do?
    options_point: bool | None = None  # ... and does the option set give the key away without computing?


def review_path(directory: Path | str | None = None) -> Path:
    return (Path(directory) if directory is not None else templates_dir()) / REVIEW_FILE


def read_review(path: Path | str) -> list[ReviewRow]:
    """Every row of a review file; a row that does not fit names the file and the line."""
    rows = []
    for where, raw in json_lines(path, TemplateError):
        try:
            row = ReviewRow(str(raw["question_id"]), str(raw["dataset"]), int(raw["level"]), int(raw["seed"]),
                            int(raw["round"]), raw.get("reviewer_answer"), raw["verdict"], str(raw.get("reason", "")),
                            raw.get("from_memory"), raw.get("options_point"))
        except (KeyError, TypeError, ValueError) as error:
            raise TemplateError(f"{where}: not a review row ({error})") from None
        if row.verdict not in VERDICTS:
            raise TemplateError(f"{where}: verdict {row.verdict!r} is not one of {', '.join(VERDICTS)}")
        rows.append(row)
    return rows


def reviewed_rate(rows: Sequence[ReviewRow], confidence: float = 0.95) -> dict[str, Any]:
    """The last round's share of valid items and its Wilson interval (an item reviewed twice in the round
    counts once, with its last verdict)."""
    if not rows:
        raise ValueError("no reviewed items")
    last = max(row.round for row in rows)
    latest = {(r.dataset, r.question_id, r.level, r.seed): r for r in rows if r.round == last}
    valid = sum(r.verdict == "valid" for r in latest.values())
    low, high = wilson_interval(valid, len(latest), confidence)
    rate = {"round": last, "items": len(latest), "valid": valid, "defective": len(latest) - valid,
            "rate": valid / len(latest), "ci_low": low, "ci_high": high, "confidence": confidence}
    for flag in ("from_memory", "options_point"):  # the memorizer's questions, where the round asked them
        asked = [getattr(r, flag) for r in latest.values() if getattr(r, flag) is not None]
        if asked:
            flagged_low, flagged_high = wilson_interval(sum(asked), len(asked), confidence)
            rate[flag] = {"items": len(asked), "flagged": sum(asked), "rate": sum(asked) / len(asked),
                          "ci_low": flagged_low, "ci_high": flagged_high}
    return rate


def rates_by_round(rows: Sequence[ReviewRow], confidence: float = 0.95) -> list[dict[str, Any]]:
    """`reviewed_rate` of every round, first to last: how the fixes moved the rate."""
    return [reviewed_rate([r for r in rows if r.round == number], confidence)
            for number in sorted({r.round for r in rows})]

"""The names and data shapes that tables and figures share, so both say the same thing the same way."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from cfa_lib.experiments.contract import Summary
from cfa_lib.experiments.three_tier_summary import LevelSummary

LEVEL_LABELS = {"exact": "A exact", "directional": "B directional", "incorrect": "C incorrect"}
PERTURBATION_NAMES = {"1": "one number changed", "2": "two numbers changed", "3": "unknown changed"}
VARIANT_LABELS = {"options_only": "options only", "none_of_the_above": "none of the above",
                  "shuffled": "shuffled", "reason_then_choose": "reason, then choose"}
UNINFORMATIVE_CATEGORIES = {"unknown", "unclassified", "other"}


def judge_line(summary: Summary) -> str | None:
    """Who judged the answers numbers could not decide, and whether that judge passed calibration."""
    calibration = summary.judge_calibration
    if summary.self_judged is None and calibration is None:
        return None
    who = "self-judged" if summary.self_judged else "another model"
    if calibration is None or not calibration.n:
        return f"{who}; not calibrated (no judged question)"
    verdict = "passed" if calibration.passed else "UNCALIBRATED"
    return (f"{who}; sensitivity {calibration.sensitivity:.2f}, specificity {calibration.specificity:.2f} "
            f"(n = {calibration.n}): {verdict}")


def pretty_category(name: str) -> str:
    return name.replace("_", " ").capitalize()


def error_category_shares(summaries: Mapping[str, LevelSummary]) -> pd.DataFrame:
    """Long table: model, category, count and share (%) of that model's categorised Level C answers."""
    rows = []
    for label, s in summaries.items():
        counts = {k: int(v) for k, v in s.error_categories.items()}
        total = sum(counts.values())
        for category, n in counts.items():
            rows.append({"model": label, "category": category, "count": n,
                         "share": 100 * n / total if total else math.nan, "n_level_c": total})
    return pd.DataFrame(rows, columns=["model", "category", "count", "share", "n_level_c"])


def category_order(shares: pd.DataFrame) -> list[str]:
    """Most frequent first; the uninformative buckets ('unknown', 'unclassified') last."""
    mean = shares.groupby("category")["share"].mean().sort_values(ascending=False)
    tail = [c for c in mean.index if c in UNINFORMATIVE_CATEGORIES]
    return [c for c in mean.index if c not in tail] + tail


def share_models(shares: pd.DataFrame) -> list[str]:
    """The models of a shares table, in the order their runs came."""
    return list(dict.fromkeys(shares["model"]))

"""The names and data shapes that tables and figures share, so both say the same thing the same way."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

Summary = Mapping[str, Any]

LEVEL_LABELS = {"exact": "A exact", "directional": "B directional", "incorrect": "C incorrect"}
PERTURBATION_NAMES = {"1": "one number changed", "2": "two numbers changed", "3": "unknown changed"}
UNINFORMATIVE_CATEGORIES = {"unknown", "unclassified", "other"}


def pretty_category(name: str) -> str:
    return name.replace("_", " ").capitalize()


def error_category_shares(summaries: Mapping[str, Summary]) -> pd.DataFrame:
    """Long table: model, category, count and share (%) of that model's categorised Level C answers."""
    rows = []
    for label, s in summaries.items():
        counts = {k: int(v) for k, v in (s.get("error_categories") or {}).items()}
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

"""The key audit in numbers: candidates per signal, reviewed questions per verdict, and the reviewers' agreement
(how often two independent reviews agree, and how often a reviewer calls an unflagged control's key wrong)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from cfa_lib.data import load_dataset
from cfa_lib.key_audit.records import VERDICTS, key_audit
from cfa_lib.key_audit.signals import SIGNALS

CONTROL = "control"  # an unflagged question reviewed blind beside the candidates


def census(dataset: str) -> dict[str, Any]:
    """The audit of `dataset` counted: questions, reviewed, flagged per signal, final verdicts, corrected keys,
    questions set aside, reviews that agreed, and the controls' verdicts."""
    records = key_audit(dataset)
    flagged = [r for r in records.values() if CONTROL not in r.signals]
    controls = [r for r in records.values() if CONTROL in r.signals]
    agreed = sum(len({(v.verdict, v.corrected) for v in r.reviews}) == 1 for r in records.values() if r.reviews)
    return {
        "dataset": dataset,
        "questions": len(load_dataset(dataset)),
        "reviewed": len(records),
        "candidates": len(flagged),
        "controls": len(controls),
        "per_signal": {name: sum(name in r.signals for r in flagged) for name in SIGNALS},
        # how precise each signal was: of its reviewed candidates, the keys found wrong and the questions set aside
        "signal_precision": {name: {"reviewed": len(mine := [r for r in flagged if name in r.signals]),
                                    "key_wrong": sum(r.verdict == "key_wrong" for r in mine),
                                    "set_aside": sum(r.key is None for r in mine)} for name in SIGNALS},
        "verdicts": {name: sum(r.verdict == name for r in records.values()) for name in VERDICTS},
        "corrected": {r.question_id: f"{r.original} -> {r.corrected}" for r in records.values() if r.corrected},
        "set_aside": {r.question_id: r.verdict for r in records.values() if r.key is None},
        "reviews_agreed": f"{agreed} of {sum(bool(r.reviews) for r in records.values())}",
        "control_verdicts": dict(Counter(r.verdict for r in controls)),
        "reviewers": sorted({f"{v.reviewer} ({v.kind})" for r in records.values() for v in r.reviews}),
    }

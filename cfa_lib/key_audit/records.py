"""The shipped key audit: one line per reviewed question in `datasets/key_audit/<dataset>.jsonl`.

A line records the final verdict (MMLU-Redux's taxonomy: the key right, the key wrong with its corrected letter,
several options right, no option right, the question unclear or incomplete), the signals that flagged the
question (or `control`: an unflagged question reviewed to measure how often reviewers call a right key wrong),
every independent review (who, a person or a model, the verdict and the reasoning) and, where the reviews
differ, the resolution in writing. A key changes only on two independent reviews (the rule is checked when the
file is read: a `key_wrong` line needs two reviews naming the same letter, or a written resolution).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from cfa_lib.data import DATASET_NAMES, load_dataset
from cfa_lib.jsonl import json_lines
from cfa_lib.paths import DATASETS_DIR

Verdict = Literal["key_right", "key_wrong", "several_right", "none_right", "unclear"]
VERDICTS: dict[str, str] = {
    "key_right": "the key is the best answer",
    "key_wrong": "another option is the answer (the corrected key)",
    "several_right": "several options are right",
    "none_right": "no option is right",
    "unclear": "the question is unclear or incomplete",
}
SET_ASIDE = frozenset({"several_right", "none_right", "unclear"})  # no key to grade against: set aside, counted
REVIEWER_KINDS = frozenset({"person", "model"})
AUDIT_DIR = DATASETS_DIR / "key_audit"


class KeyAuditError(ValueError):
    """A line of the shipped audit that breaks its rules (named by file and line)."""


@dataclass(frozen=True)
class Review:
    """One reviewer's label of one question."""

    reviewer: str
    kind: str  # "person" or "model"
    verdict: Verdict
    corrected: str | None
    reason: str


@dataclass(frozen=True)
class AuditRecord:
    """The audit's word on one question: `verdict`, and `corrected` (the right letter) when the key is wrong."""

    question_id: str
    original: str  # the dataset's key
    verdict: Verdict
    corrected: str | None
    signals: tuple[str, ...]  # what flagged it ("control": reviewed unflagged)
    reviews: tuple[Review, ...]
    resolution: str = ""  # the written resolution where the reviews differ

    @property
    def key(self) -> str | None:
        """The key to grade against: the corrected letter, the original, or None (set aside)."""
        if self.verdict in SET_ASIDE:
            return None
        return self.corrected or self.original

    @property
    def by_model(self) -> bool:
        return any(review.kind == "model" for review in self.reviews)


def _review(where: str, item: Mapping) -> Review:
    verdict, corrected = item.get("verdict"), item.get("corrected")
    if verdict not in VERDICTS:
        raise KeyAuditError(f"{where}: review verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    if item.get("kind") not in REVIEWER_KINDS:
        raise KeyAuditError(f"{where}: reviewer kind {item.get('kind')!r} is not person or model")
    if (verdict == "key_wrong") != (corrected is not None):
        raise KeyAuditError(f"{where}: a review names a corrected letter exactly when its verdict is key_wrong")
    return Review(str(item.get("reviewer", "")), item["kind"], verdict, corrected, str(item.get("reason", "")))


def read_audit(path: str, dataset: str) -> dict[str, AuditRecord]:
    """The audit file's records by question id, every rule checked against the dataset."""
    questions = {q.id: q for q in load_dataset(dataset)}
    records: dict[str, AuditRecord] = {}
    for where, item in json_lines(path, KeyAuditError):
        question = questions.get(item.get("question_id"))
        if question is None:
            raise KeyAuditError(f"{where}: {item.get('question_id')!r} is not a question of {dataset}")
        if question.id in records:
            raise KeyAuditError(f"{where}: {question.id} is listed twice")
        reviews = tuple(_review(f"{where} ({question.id})", r) for r in item.get("reviews", []))
        verdict, corrected = item.get("verdict"), item.get("corrected")
        if verdict not in VERDICTS:
            raise KeyAuditError(f"{where}: {question.id}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        if verdict == "key_wrong" and corrected not in set(question.choices) - {question.answer}:
            raise KeyAuditError(f"{where}: {question.id}: a wrong key needs a corrected letter among "
                                f"{', '.join(sorted(set(question.choices) - {question.answer}))}, not {corrected!r}")
        if verdict != "key_wrong" and corrected is not None:
            raise KeyAuditError(f"{where}: {question.id}: only a key_wrong line names a corrected letter")
        resolution = str(item.get("resolution", "")).strip()
        agreeing = [r for r in reviews if r.verdict == verdict and r.corrected == corrected]
        if verdict != "key_right" and len(agreeing) < 2 and not resolution:
            raise KeyAuditError(f"{where}: {question.id}: a verdict that changes or sets aside the key needs two "
                                "independent reviews that agree, or a written resolution")
        if len({(r.verdict, r.corrected) for r in reviews}) > 1 and not resolution:
            raise KeyAuditError(f"{where}: {question.id}: the reviews differ and no resolution is written")
        records[question.id] = AuditRecord(question.id, question.answer, verdict, corrected,
                                           tuple(item.get("signals", [])), reviews, resolution)
    return records


@functools.cache
def key_audit(dataset: str) -> dict[str, AuditRecord]:
    """`{question id: AuditRecord}` of the shipped audit of `dataset` (empty when none is shipped)."""
    if dataset not in DATASET_NAMES:
        raise KeyAuditError(f"dataset {dataset!r} is not one of {', '.join(DATASET_NAMES)}")
    path = AUDIT_DIR / f"{dataset}.jsonl"
    return read_audit(str(path), dataset) if path.is_file() else {}

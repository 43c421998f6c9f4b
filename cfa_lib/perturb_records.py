"""What a perturbation attempt leaves behind: its record, the trail of checks, and coverage counts.

A record is plain data (JSON via `to_dict`/`from_dict`) so results files can be read back, and a valid
one turns into a `Question` the experiment asks like any other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from cfa_lib.data import Question

__all__ = ["STATUSES", "Check", "PerturbationRecord", "Status", "coverage_counts", "finish"]

Status = Literal["valid", "not_perturbable", "not_verifiable", "rejected"]
STATUSES: tuple[str, ...] = ("valid", "not_perturbable", "not_verifiable", "rejected")


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class PerturbationRecord:
    """One perturbation attempt: what changed, the new question and answer, and how it was checked."""

    question_id: str
    level: int
    status: Status
    reason: str = ""
    parameters: list[dict[str, Any]] = field(default_factory=list)
    formula: str = ""
    asked_quantity: str = ""
    unit: str = ""
    original_values: dict[str, float] = field(default_factory=dict)
    new_values: dict[str, float] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)  # parameters changed (level 1/2), the unknown (level 3)
    original_answer_value: float | None = None  # formula output with the original values
    new_answer_value: float | None = None  # in the formula's units (a rate as 0.0798)
    question: str | None = None  # the perturbed question stem
    choices: dict[str, str] = field(default_factory=dict)
    correct_letter: str | None = None
    rewrite_path: Literal["generator", "substitution"] | None = None
    trail: list[Check] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    def as_question(self) -> Question:
        """The perturbed item as a `Question`, so the experiment can ask it like any other."""
        if not self.valid or self.question is None or self.correct_letter is None:
            raise ValueError(f"{self.question_id} level {self.level} is {self.status}, not a valid perturbation")
        dataset, _, index = self.question_id.rpartition("_")
        return Question(
            id=f"{self.question_id}_L{self.level}",
            dataset=dataset,
            index=int(index) if index.isdigit() else -1,
            stem=self.question,
            choices=dict(self.choices),
            answer=self.correct_letter,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PerturbationRecord:
        """Inverse of `to_dict` (for reading a results file back)."""
        known = {f.name for f in fields(cls)}
        values = {key: value for key, value in data.items() if key in known}
        values["trail"] = [Check(**check) for check in values.get("trail", [])]
        return cls(**values)


def finish(record: PerturbationRecord, status: Status, reason: str, check: str | None = None) -> PerturbationRecord:
    """Settle the record's status; with `check`, the trail also names the check that decided it."""
    record.status = status
    record.reason = reason
    if check:
        record.trail.append(Check(check, status == "valid", reason))
    return record


def coverage_counts(records: Iterable[PerturbationRecord]) -> dict[int, dict[str, int]]:
    """How many items of each level ended in each status (every status listed, zeros included)."""
    counts: dict[int, dict[str, int]] = {}
    for record in records:
        counts.setdefault(record.level, dict.fromkeys(STATUSES, 0))[record.status] += 1
    return dict(sorted(counts.items()))

"""What a perturbation attempt leaves behind: its record, the trail of checks, and coverage counts.

A record is plain data (JSON via `to_dict`/`from_dict`) so results files can be read back, and a valid
one turns into a `Question` the experiment asks like any other.
"""

from __future__ import annotations

from collections.abc import Iterable

from cfa_lib.perturbation.types import STATUSES, Check, PerturbationRecord, Status


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

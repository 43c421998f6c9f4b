"""Usable, not only verified: how many seeds out of ten give each template a valid item at each level.

A template that verifies against its question may still never produce an item: its inputs cannot move
far enough, its validity domain excludes every draw, its options cannot be rebuilt. Coverage counts only
templates that produce a valid item at some seed; the census and `verify` report these counts per template
and level, with the commonest reason where no seed does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfa_lib.data import load_dataset
from cfa_lib.perturbation.from_template import template_perturbations
from cfa_lib.perturbation.schema import load_templates
from cfa_lib.perturbation.templates import verify_template

SEEDS: tuple[int, ...] = tuple(range(10))
LEVELS: tuple[int, ...] = (1, 2, 3)


@dataclass
class Usability:
    """One template's valid seeds per level, and why a level never produced an item."""

    question_id: str
    valid: dict[int, list[int]] = field(default_factory=dict)  # level -> the seeds with a valid item
    reasons: dict[int, str] = field(default_factory=dict)  # level -> the commonest reason, where none is valid

    @property
    def usable(self) -> bool:
        return any(self.valid.values())


def usability(dataset: str, directory: Path | str | None = None, seeds: Sequence[int] = SEEDS,
              levels: Sequence[int] = LEVELS) -> dict[str, Usability]:
    """Every verified template's usability at `seeds` (offline; each template verified once)."""
    templates = load_templates(dataset, directory)
    questions = [q for q in load_dataset(dataset) if q.id in templates]
    checks = {q.id: verify_template(q, templates[q.id]) for q in questions}
    verified = [q for q in questions if checks[q.id].ok]
    result = {q.id: Usability(q.id, {level: [] for level in levels}) for q in verified}
    why: dict[tuple[str, int], Counter[str]] = {}
    for seed in seeds:
        for record in template_perturbations(verified, templates, levels, seed, checks=checks):
            if record.valid:
                result[record.question_id].valid[record.level].append(seed)
            else:
                why.setdefault((record.question_id, record.level), Counter())[record.reason] += 1
    for item in result.values():
        item.reasons = {level: why[item.question_id, level].most_common(1)[0][0]
                        for level in levels if not item.valid[level]}
    return result


def usable_report(report: dict[str, Usability], seeds: Sequence[int] = SEEDS) -> dict[str, Any]:
    """The JSON part of `verify`: usable templates per level and in all, valid items at the first seed, those
    never usable, and per template the number of seeds with a valid item and the reasons where none."""
    levels = sorted({level for item in report.values() for level in item.valid})
    return {
        "seeds": len(seeds),
        "usable": sum(item.usable for item in report.values()),
        "usable_per_level": {level: sum(bool(item.valid[level]) for item in report.values()) for level in levels},
        f"valid_at_seed_{seeds[0]}": {level: sum(seeds[0] in item.valid[level] for item in report.values())
                                      for level in levels},
        "never_usable": [item.question_id for item in report.values() if not item.usable],
        "per_template": {item.question_id: {"valid": {level: len(found) for level, found in item.valid.items()},
                                            "reasons": item.reasons} for item in report.values()},
    }

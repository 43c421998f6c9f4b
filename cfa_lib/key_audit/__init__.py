"""Are the dataset's answer keys right? The audit of FinEval's keys (issue #35).

* `signals`: what points at a key (the study's models agree on another option, the computation or the question's
  own data disagree with it, material the question lacks, negative discrimination) and the ranked candidates;
* `records`: the shipped audit, `datasets/key_audit/<dataset>.jsonl`, one reviewed question a line
  (`key_audit(dataset)`: question id -> `AuditRecord` with `verdict` and `corrected`);
* `apply_audit`: the questions with the audited keys (a corrected key where the audit says so; a question with no
  right or several right options, or unclear, set aside and counted), what every run grades against by default
  (`Settings.audited`; False keeps the dataset's keys, so the paper's figures are reproduced exactly).

`python -m cfa_lib.key_audit candidates|census` prints the candidates with their signals, or the audit's census.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from cfa_lib.data import Question
from cfa_lib.key_audit.records import SET_ASIDE, VERDICTS, AuditRecord, KeyAuditError, key_audit

Keys = Literal["audited", "original"]  # the answer keys a run is graded against

__all__ = ["SET_ASIDE", "VERDICTS", "AuditRecord", "KeyAuditError", "Keys", "KeyChanges", "apply_audit",
           "key_audit"]


@dataclass(frozen=True)
class KeyChanges:
    """What the audit changed in a set of questions: the corrected keys and the questions set aside."""

    keys: str
    corrected: dict[str, tuple[str, str]]  # question id -> (dataset's key, audited key)
    set_aside: dict[str, str]  # question id -> the audit's verdict

    def to_dict(self) -> dict:
        return {"keys": self.keys, "corrected": {q: list(k) for q, k in self.corrected.items()},
                "set_aside": self.set_aside}


def apply_audit(questions: Sequence[Question], keys: Keys = "audited") -> tuple[list[Question], KeyChanges]:
    """The questions as a run asks and grades them: with `keys="audited"`, a corrected key replaces the dataset's
    and a question the audit sets aside is left out (both listed in the `KeyChanges`); "original": unchanged."""
    if keys == "original":
        return list(questions), KeyChanges(keys, {}, {})
    kept, corrected, set_aside = [], {}, {}
    for question in questions:
        record = key_audit(question.dataset).get(question.id)
        if record is None or record.verdict == "key_right":
            kept.append(question)
        elif record.key is None:
            set_aside[question.id] = record.verdict
        else:
            corrected[question.id] = (question.answer, record.key)
            kept.append(replace(question, answer=record.key))
    return kept, KeyChanges(keys, corrected, set_aside)

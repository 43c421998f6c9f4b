"""The reviewed exceptions (datasets/answerability/exceptions.jsonl): the questions where the rules get it
wrong, each with its reason; `classify` gives the rules' verdict unless an exception overrides it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from cfa_lib.answerability.rules import EXCEPTION, Answerability, apply_rules
from cfa_lib.data import Question
from cfa_lib.jsonl import json_lines
from cfa_lib.paths import ANSWERABILITY_DIR

EXCEPTIONS_FILE = ANSWERABILITY_DIR / "exceptions.jsonl"


def load_exceptions(path: Path | str | None = None) -> dict[str, Answerability]:
    """The reviewed overrides, by question id; raises ValueError on a malformed or duplicated line."""
    path = Path(path) if path is not None else EXCEPTIONS_FILE
    if path == EXCEPTIONS_FILE:
        return dict(_load_default_exceptions())
    return _read_exceptions(path)


@cache
def _load_default_exceptions() -> tuple[tuple[str, Answerability], ...]:
    return tuple(_read_exceptions(EXCEPTIONS_FILE).items())


def _read_exceptions(path: Path) -> dict[str, Answerability]:
    out: dict[str, Answerability] = {}
    for where, row in json_lines(path):
        if not isinstance(row, dict) or set(row) != {"question_id", "open_answerable", "reason"}:
            raise ValueError(f"{where}: keys must be question_id, open_answerable, reason; got {sorted(row)}")
        qid, answerable, reason = row["question_id"], row["open_answerable"], row["reason"]
        if not isinstance(qid, str) or not re.fullmatch(r"(?:easy|challenge)_\d+", qid):
            raise ValueError(f"{where}: question_id {qid!r} is not a question id")
        if not isinstance(answerable, bool) or not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{where}: open_answerable must be true/false and reason a non-empty string")
        if qid in out:
            raise ValueError(f"{where}: {qid} is listed twice")
        out[qid] = Answerability(qid, answerable, reason.strip(), EXCEPTION)
    return out


def classify(question: Question, exceptions: Mapping[str, Answerability] | None = None) -> Answerability:
    """The rules' verdict, unless the reviewed exceptions (default: the shipped file) override it for this id."""
    exceptions = load_exceptions() if exceptions is None else exceptions
    override = exceptions.get(question.id)
    if override is not None:
        return override
    return apply_rules(question)

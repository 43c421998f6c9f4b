"""The shipped classification, datasets/answerability/{easy,challenge}.jsonl: written from the rules and the
reviewed exceptions (`python -m cfa_lib.answerability write`), read back by question id, and counted."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path

from cfa_lib.answerability.reviewed import classify, load_exceptions
from cfa_lib.answerability.rules import RULE_NAMES, Answerability
from cfa_lib.data import DATASET_NAMES, Question, dataset_of, load_dataset
from cfa_lib.paths import ANSWERABILITY_DIR


def _questions(dataset: str | Iterable[Question]) -> list[Question]:
    return load_dataset(dataset) if isinstance(dataset, str) else list(dataset)


def answerability_table(
    dataset: str | Iterable[Question], exceptions: Mapping[str, Answerability] | None = None
) -> dict[str, Answerability]:
    """Question id -> verdict for a dataset name ("easy", "challenge") or a list of questions."""
    exceptions = load_exceptions() if exceptions is None else exceptions
    return {q.id: classify(q, exceptions) for q in _questions(dataset)}


def counts(dataset: str | Iterable[Question], exceptions: Mapping[str, Answerability] | None = None) -> dict:
    """{"questions", "open_answerable", "option_dependent", "by_rule": {rule: n}} (rules in RULE_NAMES order)."""
    table = answerability_table(dataset, exceptions)
    answerable = sum(a.open_answerable for a in table.values())
    by_rule = Counter(a.rule for a in table.values())
    return {
        "questions": len(table),
        "open_answerable": answerable,
        "option_dependent": len(table) - answerable,
        "by_rule": {name: by_rule[name] for name in RULE_NAMES if by_rule[name]},
    }


def shipped_path(name: str) -> Path:
    return ANSWERABILITY_DIR / f"{name}.jsonl"


@functools.cache
def _shipped(name: str) -> dict[str, bool]:
    lines = shipped_path(name).read_text(encoding="utf-8").splitlines()
    return {item["question_id"]: bool(item["open_answerable"]) for item in map(json.loads, lines)}


def is_open_answerable(question_id: str) -> bool | None:
    """The shipped classification of a question (`easy_12`, `challenge_3`), or None for an unknown id:
    how rows of the original study's files, which never recorded it, are put in their subset."""
    dataset = dataset_of(question_id)
    return _shipped(dataset).get(question_id) if dataset else None


def shipped_lines(name: str) -> list[str]:
    """The lines of datasets/answerability/<name>.jsonl as this code produces them."""
    keys = ("question_id", "open_answerable", "rule", "reason")
    return [json.dumps({k: asdict(a)[k] for k in keys}, ensure_ascii=False) for a in answerability_table(name).values()]


def write_shipped() -> dict[str, dict]:
    """Regenerate datasets/answerability/{easy,challenge}.jsonl; returns the counts per dataset."""
    out = {}
    for name in DATASET_NAMES:
        shipped_path(name).write_text("\n".join(shipped_lines(name)) + "\n", encoding="utf-8")
        out[name] = counts(name)
    return out

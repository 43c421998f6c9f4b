"""Generated items for a blind review: the perturbed stem and options of every valid item, keys apart.

A reviewer answers each item as a candidate would and judges whether it is a sound CFA question; the keys
go to a separate file (or, with `with_key`, into each row) so the review can be blind and scored after.
Items are identified by (question_id, level, seed), the same triple `review.jsonl` rows carry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cfa_lib.data import load_dataset
from cfa_lib.perturbation.from_template import template_perturbations
from cfa_lib.perturbation.schema import load_templates


def generated_items(dataset: str, levels: Sequence[int] = (1, 2, 3), seeds: Iterable[int] = (0,),
                    directory: Path | str | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(item without its key, key row) for every valid item, by seed, then question, then level."""
    templates = load_templates(dataset, directory)
    questions = [q for q in load_dataset(dataset) if q.id in templates]
    rows = []
    for seed in seeds:
        for record in template_perturbations(questions, templates, levels, seed):
            if not record.valid:
                continue
            item = {"question_id": record.question_id, "dataset": dataset, "level": record.level, "seed": seed,
                    "stem": record.question, "choices": record.choices}
            key = {"question_id": record.question_id, "dataset": dataset, "level": record.level, "seed": seed,
                   "answer": record.correct_letter, "answer_value": record.new_answer_value}
            rows.append((item, key))
    return rows


def write_items(dataset: str, out: Path | str, levels: Sequence[int] = (1, 2, 3), seeds: Iterable[int] = (0,),
                with_key: bool = False, keys_out: Path | str | None = None, directory: Path | str | None = None
                ) -> int:
    """Write the items (one JSON object a line) and, if asked, their keys; the number of items written."""
    rows = generated_items(dataset, levels, seeds, directory)
    lines = [json.dumps(item | ({"answer": key["answer"]} if with_key else {}), ensure_ascii=False)
             for item, key in rows]
    Path(out).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if keys_out is not None:
        Path(keys_out).write_text("".join(json.dumps(key, ensure_ascii=False) + "\n" for _, key in rows),
                                  encoding="utf-8")
    return len(rows)

"""Which questions of a dataset the counterfactual test can reach, and why each other one is left out.

Every question falls in exactly one class, so the coverage a paper reports is a share of the whole
dataset, not of a convenient subset:

* **no number**: no digit in the stem or the options (nothing to perturb; decided mechanically);
* **not computational**: numbers appear, but no arithmetic on them decides the key (reviewed, each
  with its reason in `<dataset>_not_computational.jsonl`);
* **computational**: a template (`<dataset>.jsonl`, verified by code) or a reviewed reason why none can
  be written faithfully (`<dataset>_without_template.jsonl`, with a category from `CATEGORIES`).

A question with a digit that no file mentions is *unreviewed*: reported, never silently counted as
conceptual.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from cfa_lib.data import load_dataset
from cfa_lib.perturbation.from_template import template_perturbations
from cfa_lib.perturbation.templates import TemplateError, load_templates, template_coverage, templates_dir

# Why a computational question has no template: the closed set the coverage table groups by.
CATEGORIES = {
    "distractor": "a distractor within 0.5 % of the computed key",
    "rounded key": "the key rounded beyond the 0.5 % check",
    "key disagrees": "the textbook computation does not give the key",
    "inputs elsewhere": "inputs in another question or a missing exhibit",
    "language": "the formula language cannot express it",
    "options": "options that are not one number each",
    "does not move": "an answer that does not move with its inputs",
    "words": "inputs written only as words",
    "statements": "a choice between statements, not a computed quantity",
    "words decide": "a fact stated in words decides the key, not the numbers",
    "boundary": "the deciding value sits on a decision boundary",
}

_DIGIT = re.compile(r"\d")


def read_reasons(path: Path, categorised: bool = False) -> dict[str, dict[str, str]]:
    """`{"question_id", "reason"[, "category"]}` lines by question id; a bad line names file and line."""
    if not path.is_file():
        return {}
    items: dict[str, dict[str, str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            item = json.loads(line)
            question_id, reason = str(item["question_id"]), str(item["reason"]).strip()
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise TemplateError(f"{where}: needs question_id and reason ({error})") from None
        if not reason:
            raise TemplateError(f"{where}: {question_id}: the reason is empty")
        if question_id in items:
            raise TemplateError(f"{where}: {question_id} is listed twice")
        entry = {"reason": reason}
        if categorised:
            category = item.get("category")
            if category not in CATEGORIES:
                raise TemplateError(f"{where}: {question_id}: category {category!r} is not one of "
                                    f"{', '.join(CATEGORIES)}")
            entry["category"] = category
        items[question_id] = entry
    return items


def valid_per_level(dataset: str, levels: tuple[int, ...] = (1, 2, 3), seed: int = 0,
                    directory: Path | str | None = None) -> dict[int, int]:
    """How many questions the shipped templates perturb validly at each level with `seed` (offline, seconds):
    what a full counterfactual run on the dataset would test."""
    templates = load_templates(dataset, directory)
    questions = [q for q in load_dataset(dataset) if q.id in templates]
    counts = Counter(r.level for r in template_perturbations(questions, templates, levels, seed) if r.status == "valid")
    return {level: counts.get(level, 0) for level in levels}


def reviewed_without_template(dataset: str, directory: Path | str | None = None) -> dict[str, str]:
    """Computational questions reviewed and left without a template, with the reason. The experiment
    reports them as not perturbable with that reason; no generator is asked to guess them."""
    path = Path(directory or templates_dir()) / f"{dataset}_without_template.jsonl"
    return {question_id: item["reason"] for question_id, item in read_reasons(path, categorised=True).items()}


def dataset_census(dataset: str, directory: Path | str | None = None) -> dict[str, Any]:
    """The coverage report (`template_coverage`) plus every question's class; refuses a question listed
    in two classes or a listed id the dataset does not have."""
    folder = Path(directory) if directory is not None else templates_dir()
    report = template_coverage(dataset, folder)
    questions = load_dataset(dataset)
    known = {q.id for q in questions}
    without = read_reasons(folder / f"{dataset}_without_template.jsonl", categorised=True)
    conceptual = read_reasons(folder / f"{dataset}_not_computational.jsonl")
    templated = set(load_templates(dataset, folder))
    listed = [("a template", templated), ("without_template", set(without)), ("not_computational", set(conceptual))]
    for i, (name, ids) in enumerate(listed):
        unknown = sorted(ids - known)
        if unknown:
            raise TemplateError(f"{dataset}: {name} lists {unknown[0]}, which is not in the dataset")
        for other_name, other in listed[i + 1:]:
            both = sorted(ids & other)
            if both:
                raise TemplateError(f"{dataset}: {both[0]} has {name} and is in {other_name} too")
    no_number = [q.id for q in questions if not _DIGIT.search(" ".join([q.stem, *q.choices.values()]))]
    reviewed = templated | set(without) | set(conceptual) | set(no_number)
    return {
        **report,
        "no_number": len(set(no_number) - templated - set(without) - set(conceptual)),
        "not_computational": len(conceptual),
        "computational": len(templated) + len(without),
        "without_template": dict(Counter(CATEGORIES[item["category"]] for item in without.values())),
        "unreviewed": [q.id for q in questions if q.id not in reviewed],
    }


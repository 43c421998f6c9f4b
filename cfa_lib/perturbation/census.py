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

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfa_lib.data import load_dataset
from cfa_lib.jsonl import json_lines
from cfa_lib.perturbation.from_template import template_perturbations
from cfa_lib.perturbation.templates import TemplateError, load_templates, templates_dir, verify_template
from cfa_lib.perturbation.usable import usability, usable_report

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
    "no valid draw": "no draw gives an item a careful grader would accept (checked at seeds 0 to 9)",
    "source contradicts": "the question's own data break its premise or no-arbitrage (its validity domain)",
}

_DIGIT = re.compile(r"\d")


def read_reasons(path: Path, categorised: bool = False) -> dict[str, dict[str, str]]:
    """`{"question_id", "reason"[, "category"]}` lines by question id; a bad line names file and line."""
    if not path.is_file():
        return {}
    items: dict[str, dict[str, str]] = {}
    for where, item in json_lines(path, TemplateError):
        try:
            question_id, reason = str(item["question_id"]), str(item["reason"]).strip()
        except (KeyError, TypeError) as error:
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


def template_coverage(dataset: str, directory: Path | str | None = None) -> dict[str, Any]:
    """The coverage report of one dataset's templates (the `--json` object): verified, failed with why, and the
    decision templates that cannot flip with why (valid, reported apart from the flip rate)."""
    questions = {q.id: q for q in load_dataset(dataset)}
    templates = load_templates(dataset, directory)
    failed, cannot_flip = [], {}
    for question_id, template in templates.items():
        question = questions.get(question_id)
        if question is None:
            failed.append({"question_id": question_id, "reason": "no such question in the dataset"})
            continue
        check = verify_template(question, template)
        if not check.ok:
            failed.append({"question_id": question_id, "reason": f"{check.check}: {check.reason}"})
        elif template.decision is not None and template.decision.cannot_flip:
            cannot_flip[question_id] = template.decision.cannot_flip
    return {
        "dataset": dataset,
        "questions": len(questions),
        "templated": len(templates),
        "verified": len(templates) - len(failed),
        "failed": failed,
        "cannot_flip": cannot_flip,  # verified decision templates whose key no draw changes, with why
    }


# A question's class in the census (`question_classes`).
NO_NUMBER, NOT_COMPUTATIONAL, TEMPLATED, WITHOUT_TEMPLATE, UNREVIEWED = (
    "no number", "not computational", "templated", "without template", "unreviewed")


@dataclass(frozen=True)
class _Review:
    """The three reviewed files of a dataset, read once, and every question's class."""

    without_template: dict[str, dict[str, str]]
    not_computational: dict[str, dict[str, str]]
    classes: dict[str, str]


def _review(dataset: str, directory: Path | str | None) -> _Review:
    """Refuses a question listed in two classes or an id the dataset lacks."""
    folder = Path(directory) if directory is not None else templates_dir()
    questions = load_dataset(dataset)
    known = {q.id for q in questions}
    without = read_reasons(folder / f"{dataset}_without_template.jsonl", categorised=True)
    conceptual = read_reasons(folder / f"{dataset}_not_computational.jsonl")
    listed = {TEMPLATED: set(load_templates(dataset, folder)), WITHOUT_TEMPLATE: set(without),
              NOT_COMPUTATIONAL: set(conceptual)}
    names = list(listed)
    for i, name in enumerate(names):
        unknown = sorted(listed[name] - known)
        if unknown:
            raise TemplateError(f"{dataset}: {name} lists {unknown[0]}, which is not in the dataset")
        for other in names[i + 1:]:
            both = sorted(listed[name] & listed[other])
            if both:
                raise TemplateError(f"{dataset}: {both[0]} is {name} and {other} at once")
    classes = {}
    for q in questions:
        listed_as = [name for name in names if q.id in listed[name]]
        if listed_as:
            classes[q.id] = listed_as[0]
        else:
            classes[q.id] = UNREVIEWED if _DIGIT.search(" ".join([q.stem, *q.choices.values()])) else NO_NUMBER
    return _Review(without, conceptual, classes)


def question_classes(dataset: str, directory: Path | str | None = None) -> dict[str, str]:
    """Every question's class, by id; refuses a question listed in two classes or an id the dataset lacks."""
    return _review(dataset, directory).classes


def left_out(dataset: str, directory: Path | str | None = None) -> dict[str, str]:
    """Why each reviewed question without a template is not perturbed, by id: the experiment records it as
    not perturbable with this reason, and no generator is asked to guess it."""
    review = _review(dataset, directory)
    out = {}
    for question_id, kind in review.classes.items():
        if kind == NO_NUMBER:
            out[question_id] = "no number in the question"
        elif kind == WITHOUT_TEMPLATE:
            out[question_id] = f"computational, no faithful template: {review.without_template[question_id]['reason']}"
        elif kind == NOT_COMPUTATIONAL:
            out[question_id] = f"not computational: {review.not_computational[question_id]['reason']}"
    return out


def dataset_census(dataset: str, directory: Path | str | None = None, seeds: Sequence[int] | None = None
                   ) -> dict[str, Any]:
    """The coverage report (`template_coverage`) plus how many questions are in each class, and why the
    computational ones without a template have none (by category). With `seeds`, also how many of them give
    each template a valid item per level (`usable.usable_report`, under "usability"): coverage counts only
    templates that are usable."""
    review = _review(dataset, directory)
    counts = Counter(review.classes.values())
    usable = {"usability": usable_report(usability(dataset, directory, seeds), seeds)} if seeds else {}
    return {
        **template_coverage(dataset, directory),
        "no_number": counts[NO_NUMBER],
        "not_computational": counts[NOT_COMPUTATIONAL],
        "computational": counts[TEMPLATED] + counts[WITHOUT_TEMPLATE],
        "without_template": dict(Counter(CATEGORIES[item["category"]] for item in review.without_template.values())),
        "unreviewed": [question_id for question_id, kind in review.classes.items() if kind == UNREVIEWED],
    } | usable

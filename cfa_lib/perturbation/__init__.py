"""Verified counterfactual perturbations of CFA questions.

A question is described by its numeric inputs (named, with the exact text span as written) and a
formula over those names; everything that decides a number is code, one step per module:

* `verify`: the formula must reproduce the correct option before anything is perturbed (check 1);
* `values`: which inputs may move, seeded draws, solving for another unknown (level 3);
* `choices`: the choices, rebuilt with the original relative gaps and formats;
* `plan`: one level of one question settled, up to the prompt for the rewrite;
* `rewrite`: a rewrite is accepted only if every new value appears in it and no changed old value
  remains (levels 1/2 fall back to span substitution);
* `records`: each item ends in a `PerturbationRecord` whose trail lists every check;
* `build`: the entry point and its two model calls; `formula` (the restricted evaluator, the only
  place model output is evaluated) and `number_text` (numbers as a question writes them) are its tools;
* `types`: every type the steps hand to each other;
* `census`: every question's class (no number, not computational, templated, reviewed without a
  template), so coverage is a share of the whole dataset;
* `templates` and `from_template`: hand-written, code-verified templates (datasets/templates/, shape in
  `schema`) that drive the same steps offline, without the generator (`python -m cfa_lib.perturbation verify`);
* `accounting` (what every number of a templated question is), `domain` (where a formula holds), `rederive`
  (every emitted item's key re-derived from its own text), `usable` (valid seeds of ten per template and
  level), `items` and `review` (the blind review's dump and rate).

The prompts live in `cfa_lib.prompts` (PERTURB_*). The experiment needs only the names below.
"""

from cfa_lib.perturbation.build import build_perturbations, perturbation_steps
from cfa_lib.perturbation.census import (
    NO_NUMBER,
    NOT_COMPUTATIONAL,
    TEMPLATED,
    WITHOUT_TEMPLATE,
    dataset_census,
    left_out,
    question_classes,
    template_coverage,
    valid_per_level,
)
from cfa_lib.perturbation.from_template import template_perturbations
from cfa_lib.perturbation.records import coverage_counts
from cfa_lib.perturbation.templates import load_templates
from cfa_lib.perturbation.types import PerturbationRecord
from cfa_lib.perturbation.usable import SEEDS, usability

__all__ = [
    "NOT_COMPUTATIONAL",
    "NO_NUMBER",
    "TEMPLATED",
    "WITHOUT_TEMPLATE",
    "SEEDS",
    "PerturbationRecord",
    "build_perturbations",
    "perturbation_steps",
    "coverage_counts",
    "dataset_census",
    "left_out",
    "load_templates",
    "question_classes",
    "template_coverage",
    "template_perturbations",
    "usability",
    "valid_per_level",
]

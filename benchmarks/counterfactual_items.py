"""Do the counterfactual items tell a memorizer from a reasoner? The counts of issue #32.

    PYTHONPATH=. .venv/bin/python benchmarks/counterfactual_items.py [--seeds 5]

Generates every valid item of both datasets from the shipped templates, seeds 0 to N-1, levels 1 to 3,
offline, and prints (`cfa_lib.perturbation.separation`):

* numeric items whose key is within 0.5 % of the original key (target: at most 5 %);
* numeric items whose original key (level 3: also the asked unknown's original value) is graded correct against
  the new options, `grade_number` (target: none);
* level-3 items whose option nearest the asked unknown's original value is the key (target: none);
* numeric items whose key is written at a grain no distractor shares, or is the only option of its sign as in
  the original (target: none);
* decision items that flip or keep the original key, per template (target: 35 % to 65 % flip), and among the
  templates that can flip (those that cannot say why: `Decision.cannot_flip`, reported apart);
* level-3 questions whose stem is the same at every seed, and level-3 keys equal to a number of the
  original question (target: none);
* option sets that break the original's order rule, and option sets with two options within 0.5 % (none);
* numeric items keyed at the original's letter, whose option nearest the memorized value is the key, or whose key
  is the middle of an evenly spaced set (none);
* valid items per dataset and level (level 1 on Easy at seed 0: at least 80).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from cfa_lib.data import DATASET_NAMES, Question, load_dataset
from cfa_lib.perturbation.from_template import template_perturbations
from cfa_lib.perturbation.schema import load_templates
from cfa_lib.perturbation.separation import Separation, separation
from cfa_lib.perturbation.templates import verify_template
from cfa_lib.perturbation.types import PerturbationRecord


def cannot_flip() -> dict[str, str]:
    """The decision templates that declare why no draw changes their key (`Decision.cannot_flip`)."""
    return {qid: t.decision.cannot_flip for dataset in DATASET_NAMES for qid, t in load_templates(dataset).items()
            if t.decision is not None and t.decision.cannot_flip}


def items(seeds: int) -> Iterator[tuple[str, int, Question, PerturbationRecord]]:
    for dataset in DATASET_NAMES:
        templates = load_templates(dataset)
        questions = {q.id: q for q in load_dataset(dataset) if q.id in templates}
        checks = {qid: verify_template(q, templates[qid]) for qid, q in questions.items()}
        for seed in range(seeds):
            for record in template_perturbations(list(questions.values()), templates, (1, 2, 3), seed, checks=checks):
                yield dataset, seed, questions[record.question_id], record


def _share(part: int, whole: int) -> str:
    return f"{part} of {whole} ({part / whole:.1%})" if whole else f"{part} of 0"


def report(result: Separation, seeds: int) -> None:
    print(f"valid items, seeds 0-{seeds - 1}, levels 1-3 (all seeds; at seed 0):")
    for dataset in DATASET_NAMES:
        counts = "  ".join(f"L{level} {result.valid[dataset, level]:>4} ({result.valid_at_seed_0[dataset, level]:>3})"
                           for level in (1, 2, 3))
        print(f"  {dataset:<10} {counts}")
    print(f"numeric items with a key within 0.5 % of the original's: {_share(result.numeric_key_kept, result.numeric)}")
    passes = result.original_key_passes
    by_level = ", ".join(f"L{level} {passes[level]}" for level in (1, 2, 3))
    print(f"numeric items whose original key is graded correct against the new options: "
          f"{_share(passes.total(), result.numeric)} ({by_level})")
    nearest = result.nearest_is_key
    print(f"level-3 items whose option nearest the asked unknown's original value is the key: "
          f"{_share(nearest[3], result.level3)}")
    grains = result.grain_singles_out_key
    by_level = ", ".join(f"L{level} {grains[level]}" for level in (1, 2, 3))
    print(f"numeric items whose key is written at a grain no distractor shares (the only round or odd option): "
          f"{_share(grains.total(), result.numeric)} ({by_level})")
    print(f"numeric items whose key is the only option of its sign, as in the original: "
          f"{_share(result.sign_singles_out_key, result.numeric)}")
    fixed = cannot_flip()
    can = {qid: counts for qid, counts in result.decisions.items() if qid not in fixed}
    can_flipped, can_items = sum(c["flipped"] for c in can.values()), sum(c.total() for c in can.values())
    print(f"decision items that flip the original key: {_share(result.flipped, result.decision_items)}; "
          f"of templates that can flip: {_share(can_flipped, can_items)}")
    for question_id, counts in sorted(result.decisions.items()):
        why = f"  cannot flip: {fixed[question_id]}" if question_id in fixed else ""
        print(f"  {question_id:<14} flipped {counts['flipped']:>2}  kept {counts['kept']:>2}{why[:110]}")
    print(f"level-3 questions with one stem at every valid seed (of those valid at 2 seeds or more): "
          f"{_share(len(result.one_stem), sum(len(s) > 1 for s in result.level3_stems.values()))}")
    print(f"level-3 keys equal to a number of the original question: "
          f"{_share(result.level3_in_original, result.level3)}")
    broken = sum(result.order_broken.values())
    by_rule = ", ".join(f"{rule} {n}" for rule, n in sorted(result.order_broken.items())) or "none"
    print(f"option sets that break the original's order rule: {_share(broken, result.ordered_originals)} "
          f"of the ordered originals' items ({by_rule})")
    print(f"option sets with two options within 0.5 %: {_share(result.close, result.numeric)}")
    print(f"numeric items keyed at the original's letter: {_share(result.same_letter, result.numeric)}")
    by_level = ", ".join(f"L{level} {nearest[level]}" for level in (1, 2, 3))
    print(f"numeric items whose option nearest the memorized value (L1/2 the original key, L3 the asked unknown's "
          f"original value) is the key: {_share(nearest.total(), result.numeric)} ({by_level})")
    print(f"numeric items whose key is the middle of an evenly spaced set: "
          f"{_share(result.evenly_spaced_key, result.numeric)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    report(separation(items(args.seeds)), args.seeds)


if __name__ == "__main__":
    main()

"""Does the per-question model across runs recover a known effect, and do its intervals cover it?

    PYTHONPATH=. .venv/bin/python benchmarks/model_comparison_simulation.py [N_STUDIES] [N_QUESTIONS]
    (default: 200 studies of 300 questions, three models)

Each study draws question difficulties shared by all models and answers with a known per-model drop
(`cfa_lib.compare.simulate`), fits `cfa_lib.compare.models.compare` and checks whether each model's 95%
interval covers its true population-averaged effect, and whether each pairwise difference's interval covers
the true difference. Goal: coverage near 95% (with 200 studies, a binomial 95% band is about ±3 points),
the mean estimate near the truth. A second scenario gives the three models the same intercept and the same
drop (equal effects): the interaction test should then reject in about 5% of the studies (its size).
Prints the run time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from cfa_lib.compare.models import compare
from cfa_lib.compare.paired import option_bias
from cfa_lib.compare.simulate import Design, simulate_study, true_effects
from cfa_lib.stats import wilson_interval


def run(design: Design, n_studies: int = 200, seed: int = 0) -> dict[str, object]:
    """Coverage of the effects' and the differences' intervals, bias of the estimates, how often the
    interaction test rejects at 0.05."""
    truth = true_effects(design)
    rng = np.random.default_rng(seed)
    covered = {s: 0 for s in design.subjects}
    estimates = {s: [] for s in design.subjects}
    pairs_covered, pairs_total, rejected, failed = 0, 0, 0, 0
    for _ in range(n_studies):
        result = compare(simulate_study(design, rng), option_bias())
        if not result.compared:
            failed += 1
            continue
        for effect in result.effects:
            estimates[effect.subject].append(effect.effect)
            covered[effect.subject] += effect.ci[0] <= truth[effect.subject] <= effect.ci[1]
        for pair in result.pairwise:
            true_difference = truth[pair.first] - truth[pair.second]
            pairs_covered += pair.ci[0] <= true_difference <= pair.ci[1]
            pairs_total += 1
        rejected += result.interaction.p_value < 0.05
    fitted = n_studies - failed
    return {"truth": truth, "mean_estimate": {s: float(np.mean(v)) for s, v in estimates.items()},
            "coverage": {s: covered[s] / fitted for s in design.subjects},
            "pairwise_coverage": pairs_covered / pairs_total if pairs_total else None,
            "interaction_rejects": rejected / fitted if fitted else None, "fitted": fitted, "failed": failed}


def report(title: str, design: Design, n_studies: int) -> None:
    start = time.perf_counter()
    result = run(design, n_studies)
    elapsed = time.perf_counter() - start
    fitted = result["fitted"]
    print(f"{title}: {n_studies} simulated studies of {design.n_questions} questions, 3 models; fitted {fitted}, "
          f"failed {result['failed']}; {elapsed:.1f} s ({elapsed / n_studies:.3f} s per study)")
    for subject, truth in result["truth"].items():
        coverage = result["coverage"][subject]
        low, high = wilson_interval(round(coverage * fitted), fitted)
        print(f"  {subject}: true effect {100 * truth:+.2f} pp, mean estimate "
              f"{100 * result['mean_estimate'][subject]:+.2f} pp, 95% CI coverage {coverage:.1%} "
              f"(Wilson [{low:.1%}, {high:.1%}])")
    print(f"  pairwise differences: 95% CI coverage {result['pairwise_coverage']:.1%}")
    print(f"  interaction test (effects differ) rejected at 0.05 in {result['interaction_rejects']:.1%} of studies")


def main(argv: list[str]) -> None:
    n_studies = int(argv[0]) if argv else 200
    n_questions = int(argv[1]) if len(argv) > 1 else 300
    report("different effects", Design(n_questions=n_questions), n_studies)
    report("equal effects (the test's size)", Design(intercepts=(0.6, 0.6, 0.6), drops=(0.5, 0.5, 0.5),
                                                     n_questions=n_questions), n_studies)


if __name__ == "__main__":
    main(sys.argv[1:])

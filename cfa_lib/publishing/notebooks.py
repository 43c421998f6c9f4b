"""Write the study's four notebooks from this readable source (outputs stripped): the experiment notebooks
here, notebook 04 in `paper_notebook`, their building blocks in `notebook_cells`.

    python -m cfa_lib.publishing.notebooks   # → notebooks/*.ipynb

Run it after editing; the notebooks stay plain narrative and calls into cfa_lib, and their `parameters`
cell is what papermill overrides. A test fails when a committed notebook differs from what this writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from cfa_lib.experiments.registry import EXPERIMENTS, FIGURES_NOTEBOOK
from cfa_lib.paths import NOTEBOOKS_DIR
from cfa_lib.publishing.notebook_cells import (
    JUDGE_CORRECTION,
    JUDGED_SETTINGS,
    VALIDITY,
    code,
    human_check,
    md,
    notebook,
    parameters,
    setup,
)
from cfa_lib.publishing.paper_notebook import PAPER_FIGURES

OPTION_BIAS = [
    md("""
# Option bias: do the answer choices help the model?

Every question is asked twice of the same model: **Format A** with its choices (A/B/C) and **Format B**
with the choices removed. A question is *option-biased* when the model is right with the choices and
wrong without them. Option bias = accuracy with options − accuracy without, tested with McNemar's test
on the paired outcomes. Format B answers are graded against the correct option: by number when the
option carries one (±tolerance, and never closer to a distractor than to the gold), otherwise by an
LLM judge. Failed model or judge calls are excluded from the pairs and reported, never counted wrong.
"""),
    parameters("""
judge_model = None       # None: gpt-4o-mini for OpenAI models, else the model itself
tolerance = 0.02         # relative tolerance of the numeric grading
variants = []            # any of "options_only", "none_of_the_above", "shuffled", "reason_then_choose"
"""),
    setup("from IPython.display import Markdown, display", "from cfa_lib.experiments.option_bias import OPTION_BIAS",
          "from cfa_lib.report.runs import by_model, variants_by_model"),
    md("## Run\n\nThe cost estimate comes first; completions are cached, so a rerun is free and an "
       "interrupted run resumes where it stopped."),
    code(JUDGED_SETTINGS + "run = run_or_load(OPTION_BIAS, settings, results_path, variants=variants)"),
    md("## Summary"),
    code("notebook_tables.option_bias_summary(run)"),
    md("## The paired outcomes and McNemar's test"),
    code("display(notebook_tables.option_bias_contingency(run))\nMarkdown(notebook_tables.describe_mcnemar(run))"),
    code("figures.option_bias_figure(by_model(run))"),
    md("## The option-biased questions\n\nRight with the choices, wrong without them: the extracted open "
       "answer and the end of the response show why."),
    code("notebook_tables.option_biased_questions(run)"),
    md("""
## Where the inflation comes from

Two formats show *that* the options raise the score, not *how*. The variants ask the same questions in
other forms, each paired with Format A on the same questions (McNemar's test, and a paired bootstrap
interval of the difference); they are asked only when the parameter `variants` names them.

* **Options only**: the choices without the question. Accuracy above chance (the dashed line: one over
  the number of options) can only come from the answer set itself, such as an option that sounds like
  the textbook. It cannot say whether the model leans on those cues when it does see the question.
* **None of the above**: the correct option's text is replaced by "None of the above." on the same
  letter, which stays the key. A model that found the answer by recognising the familiar option, or by
  eliminating the others towards a known text, loses here. It cannot tell those two apart, and a model may
  avoid the unusual option for its own sake, so a drop is an upper bound on the options' help.
* **Shuffled**: the same options in another order (every option moves, seeded by the question), the key
  following its text. A drop in accuracy, answers piling on one letter against the keys' letters, or a
  different option chosen after the reorder show position bias and unstable choices; this variant says
  nothing about what the model knows.
* **Reason, then choose**: the open conversation continued: Format B's own answer stays in the
  conversation, then the choices come with "Now choose the option that matches your answer". Near
  Format A, the reasoning already held the answer (or the choices confirm a near miss); near Format B, the
  choices were doing the work. It cannot tell recall from computation, and a choice may still be
  corrected by the options.
"""),
    code("display(notebook_tables.option_bias_variants(run))\nfigures.variants_figure(variants_by_model(run))"),
    *human_check("option_bias", JUDGE_CORRECTION, "correction_table"),
]

THREE_TIER = [
    md("""
# Three-tier grading of open answers

Multiple choice is both too lenient (the options leak the answer) and too strict (a defensible
different assumption is marked wrong). The open answers are graded on three levels: **A exact**
(within tolerance), **B directional** (right approach and magnitude, a different defensible assumption)
and **C incorrect**, and every C gets an error category. Numbers decide what numbers can; the judge
decides the band between the tolerance and a factor of 2, and answers in words.
"""),
    parameters("""
judge_model = None       # None: gpt-4o-mini for OpenAI models, else the model itself
gold_model = None        # None: the judge model derives the gold answers that options do not carry
tolerance = 0.02         # relative tolerance of the numeric grading
"""),
    setup("from IPython.display import display", "from cfa_lib.experiments.three_tier import THREE_TIER"),
    md("## Run"),
    code(JUDGED_SETTINGS + "run = run_or_load(THREE_TIER, settings, results_path, gold_model=gold_model)"),
    md("## Level distribution"),
    code("display(notebook_tables.three_tier_levels(run))\nnotebook_tables.three_tier_accuracy(run)"),
    code("figures.three_tier_figure(by_model(run))"),
    md("## Why the C answers are wrong"),
    code("figures.error_categories_figure(by_model(run))"),
    md("## Worked examples, level by level"),
    code("notebook_tables.three_tier_examples(run)"),
    *human_check("three_tier", JUDGE_CORRECTION, "correction_table"),
]

COUNTERFACTUAL = [
    md("""
# Counterfactual testing: reasoning or memory?

The numbers of a question are changed (level 1: one, level 2: two) or it asks for a different unknown
(level 3), and the model is asked again. The computational questions of CFA-Easy and CFA-Challenge that
the formula language can express faithfully have a template written question by question
(`datasets/templates/`; the coverage table below counts them and says why the other questions have none):
its inputs as written in the stem and the textbook formula over them, verified by code against the key.
`cfa_lib` draws new values that look like the originals, computes the new answer itself, rewrites the stem
and rebuilds the choices, all offline. For a decision question (the key is "daily", "greater than the lump
sum") a draw may change the correct option: whether the model follows the new key or keeps the old one is
the sharpest memorization test. Every other question of the two datasets is left out with its reviewed
reason (the census below); only a question of another dataset goes to a generator model that proposes a
formula, under the same checks. Nothing a model says about the new answer is trusted.
"""),
    parameters("""
generator_model = None   # None: gpt-4o for OpenAI models (as in the study), else the model itself
perturbation_levels = [1, 2, 3]  # any of 1, 2, 3
"""),
    setup("from IPython.display import display", "from cfa_lib.experiments.counterfactual import COUNTERFACTUAL"),
    md("## Run"),
    code("""
settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed,
                    max_concurrency=max_concurrency, batch=batch, max_cost_usd=max_cost_usd,
                    retry_failed=retry_failed)
run = run_or_load(COUNTERFACTUAL, settings, results_path, generator_model=generator_model,
                  perturbation_levels=perturbation_levels)
"""),
    md("""
## Coverage: which questions could be perturbed and verified

The first table places the whole dataset: questions with no number, questions whose numbers decide
nothing (each reviewed, with its reason in `datasets/templates/`), and the computational ones, with a
verified template or the reason none could be written faithfully. The last rows count this run's valid
perturbations. The next two tables give this run's status per level and why items were not valid.
"""),
    code("display(notebook_tables.template_coverage(dataset, run))\n"
         "display(notebook_tables.counterfactual_coverage(run))\nnotebook_tables.counterfactual_reasons(run)"),
    md("""
## Are the generated items right? A blind review

Code verifies each template against the original key and re-derives every emitted item from its own
text, but a referee will ask whether a person agrees. Generated items (both datasets, levels 1-3; rounds 0-4
at seeds 0-9, round 5 at seeds 10-14) were given, without their keys, to reviewers who had seen neither the
code nor the keys (assistants acting as careful CFA graders, not human charterholders). Each reviewer
worked the answer and called the item valid (one option right) or defective (contradictory, impossible,
or no single right option); an answer other than the generator's key counts as defective. Every defect
was fixed as a class (a rule in the templates' validity domains or in the re-derivation) and the review
was redone on fresh draws. From round 5 the reviewers also said whether the item could be answered from
memory of the original question and whether its options point at the key. Round 6 (seeds 15-19) counted a
kept key letter as memory: 62 of its 160 items kept the original's letter, so since then a numeric key
moves to another letter, the option nearest the remembered answer is never the key, and no key sits in the
middle of evenly spaced options. Rounds 7 to 9 (seeds 20-34) reviewed those items: most items answerable
from memory are decisions that kept their key, as half the decision draws do by design (round 9: 8 of its
12). The defects of rounds 7 and 8 were fixed as classes: challenge_88 at level 3 (a 530 call that broke
put-call parity) and easy_360 (a cost of equity below the cost of the firm's debt) by domain conditions;
easy_9 (a rebuilt '15.7% compounded daily' was right for its own convention beside the key) has no template
since. Round 9 found one: challenge_87 at level 3 asked for a 510 call below the 510 put with the stock above
the strike (put-call parity broken); its domain now keeps C - P above S - K, and a level-3 item checks the
domain at the unknown its stated answer implies, not only at the drawn one. Round 10 (seeds 35-39, after
that fix) found no defect; 7 of its 8 items answerable from memory are decisions that kept their key (4
from templates whose decision cannot flip: challenge_30, easy_280), the eighth easy_193, whose two-part
options left the key the only option sharing an amount with both others (one distractor now makes both
mistakes). Interval: 95% Wilson. The rows are in `datasets/templates/review.jsonl`.
"""),
    code("notebook_tables.template_review()"),
    md("## Where the perturbations came from, and the flipped keys"),
    code("notebook_tables.counterfactual_flips(run)"),
    md("## Accuracy on the originals and on their perturbations\n\nBoth on the same questions; the "
       "memorization gap is their difference, tested with McNemar's test on the pairs."),
    code("notebook_tables.counterfactual_accuracy(run)"),
    code("figures.counterfactual_figure(by_model(run))"),
    md("## Memorization suspects\n\nRight on the original, wrong once its numbers changed."),
    code("notebook_tables.counterfactual_suspects(run)"),
    *human_check("counterfactual", VALIDITY, "validity_table"),
]
# The cells of each notebook, by the file name the registry gives it.
SOURCES = {
    EXPERIMENTS["option_bias"].notebook: OPTION_BIAS,
    EXPERIMENTS["three_tier"].notebook: THREE_TIER,
    EXPERIMENTS["counterfactual"].notebook: COUNTERFACTUAL,
    FIGURES_NOTEBOOK: PAPER_FIGURES,
}


def render(file_name: str) -> str:
    """The text of one notebook file, exactly as it is written (and committed)."""
    cells = [dict(entry) for entry in SOURCES[file_name]]  # ids are set on copies: the sources stay as written
    return json.dumps(notebook(file_name, cells), indent=1, ensure_ascii=False) + "\n"


def write_all(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Write every notebook of the registry, plus the figures notebook; return their paths."""
    missing = {e.notebook for e in EXPERIMENTS.values()} - set(SOURCES)
    if missing:
        raise KeyError(f"no notebook source for {sorted(missing)}: add its cells to {__name__}.")
    paths = []
    for file_name in SOURCES:
        path = directory / file_name
        path.write_text(render(file_name), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all():
        print(f"wrote {written}")

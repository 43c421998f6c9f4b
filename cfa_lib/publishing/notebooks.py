"""Write the study's four notebooks from this one readable source (outputs stripped).

    python -m cfa_lib.publishing.notebooks   # → notebooks/*.ipynb

Run it after editing; the notebooks stay plain narrative and calls into cfa_lib, and their `parameters`
cell is what papermill overrides. A test fails when a committed notebook differs from what this writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from cfa_lib.experiments.registry import EXPERIMENTS, FIGURES_NOTEBOOK
from cfa_lib.paths import NOTEBOOKS_DIR


def cell(kind: str, source: str, tags: list[str] | None = None) -> dict:
    base = {"cell_type": kind, "metadata": {"tags": tags} if tags else {}, "source": source.strip("\n")}
    if kind == "code":
        base.update(execution_count=None, outputs=[])
    return base


def notebook(name: str, cells: list[dict]) -> dict:
    for number, entry in enumerate(cells):
        entry["id"] = f"{name[:2]}-{number:02d}"  # stable ids: regenerating leaves no diff
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def md(text: str) -> dict:
    return cell("markdown", text)


def code(text: str, tags: list[str] | None = None) -> dict:
    return cell("code", text, tags)


def setup(*imports: str) -> dict:
    """The import cell: the experiment's module and what its cells display with."""
    ipython = [line for line in imports if line.startswith("from IPython")]
    own = [line for line in imports if line not in ipython]
    shared = ["from cfa_lib.experiments.execute import run_or_load",
              "from cfa_lib.experiments.settings import Settings",
              "from cfa_lib.report import figures, notebook_tables", "from cfa_lib.report.runs import by_model"]
    ours = sorted(own + [line for line in shared if not any(o.startswith(line) for o in own)])
    return code("\n\n".join("\n".join(block) for block in (ipython, ours) if block) + "\n\nfigures.use_style()")


JUDGED_SETTINGS = (  # notebooks 01 and 02: the shared parameters, a judge and a tolerance
    "settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed, "
    "judge_model=judge_model,\n"
    "                    tolerance=tolerance, max_concurrency=max_concurrency, batch=batch, "
    "max_cost_usd=max_cost_usd,\n"
    "                    retry_failed=retry_failed)\n"
)


def parameters(own: str) -> dict:
    """The papermill parameters cell: what every experiment notebook takes, and the notebook's own."""
    return code(f"""model = "local"          # "local", "gpt-4o-mini", "ollama/llama3.1:8b", "local:/path/model.gguf"
dataset = "easy"         # "easy" (1032 questions) or "challenge" (90)
limit = 20               # None: the whole dataset
sample_seed = None       # None: the first `limit` questions; an integer: a reproducible random sample
{own.strip()}
max_concurrency = None          # a ceiling (None: CFA_MAX_CONCURRENCY, else 64); the engine adapts below it
batch = None                    # True: OpenAI's Batch API, half the price, results within 24 h (None: CFA_BATCH)
max_cost_usd = None             # stop cleanly before spending more than this (None: CFA_MAX_COST_USD, else none)
retry_failed = None             # True: send again the failures the embedded model gave (None: CFA_RETRY_FAILED)
results_path = None      # a results.json to analyse instead of running
""", ["parameters"])


HUMAN_CHECK_TEXT = """
## Human check

How often do the rules and the judge agree with a person? A blind review answers it for a run: a seeded
sample of its verdicts, stratified by the verdict and by the path that decided it (the final line, the
heuristic reader, the numbers, the judge), is shown to a reviewer with the question, the key and the
response, never with the toolkit's verdict (`python -m cfa_lib.review export`, or one item at a time in
JupyterLab with `cfa_lib.review.widget.review_widget`). The tables give the agreement with 95% Wilson
intervals, Cohen's κ and Scott's π with 95% bootstrap intervals, per path and per verdict, and the
confusion matrix. {extra} A "cannot tell" is counted and left out, never guessed.

The reviews shipped with the original study's runs (`datasets/reviews/`) are a worked example: they were
labelled by a blind LLM reviewer session acting as a careful CFA grader, without access to the code or the
toolkit's verdicts, not by a human, and on what the study's files store: responses cut to a few hundred
characters, so many items could not be told and the figures rest on the rest.
"""
JUDGE_CORRECTION = ("The judge's sensitivity and specificity against the person correct every judge-based "
                    "accuracy of the run (θ of Lee et al. 2025, weighted back to the run over the sample's strata; "
                    "the interval covers both the run's and the review's samples; the rules' verdicts are kept).")
VALIDITY = ("For the generated items, the reviewed validity rate of the items the run held valid comes with its "
            "95% Wilson interval.")


def human_check(experiment: str, extra: str, last: str) -> list[dict]:
    """The "Human check" section of an experiment notebook: the run's review, or how to make one, beside the
    shipped reviews of the study's runs."""
    return [md(HUMAN_CHECK_TEXT.format(extra=extra)), code(f"""
from IPython.display import Markdown, display

from cfa_lib.report import human_check

reviewed = human_check.reviewed_runs(run, "{experiment}")
display(Markdown(human_check.describe(run, reviewed)))
if reviewed:
    display(human_check.agreement_table(reviewed), human_check.by_path_table(reviewed),
            human_check.confusion_tables(reviewed), human_check.{last}(reviewed))
    display(human_check.figure(reviewed))
""")]


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
text, but a referee will ask whether a person agrees. Generated items (every template at least once, both
datasets, levels 1-3, seeds 0-9) were given, without their keys, to reviewers who had seen neither the
code nor the keys (assistants acting as careful CFA graders, not human charterholders). Each reviewer
worked the answer and called the item valid (one option right) or defective (contradictory, impossible,
or no single right option); an answer other than the generator's key counts as defective. Every defect
was fixed as a class (a rule in the templates' validity domains or in the re-derivation) and the review
was redone on fresh draws; only the last round describes the templates shipped here. Interval: 95%
Wilson. The rows are in `datasets/templates/review.jsonl`.
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

PAPER_FIGURES = [
    md("""
# Paper figures and tables

This notebook assembles the paper's tables and figures from every results file it finds: the latest run
per experiment, model and dataset under `results_dir` (written by notebooks 01–03), and, when
`include_reference` is true, the original study's runs in `datasets/reference_runs/`, which are
**imported from the original study (taiwanfifi/CFA_essay)** and labelled "(reference)".

Every number is recomputed from the rows of the results files by the experiment modules of `cfa_lib`;
the figures are drawn by `cfa_lib.report.figures` and the tables by `cfa_lib.report.paper_tables`. Figures are
saved as PDF (for the paper) and PNG in `figures_dir`; the raw values of each table are saved as CSV in
`tables_dir`.
"""),
    code("""
results_dir = "results"
include_reference = True
figures_dir = "book/figures"
tables_dir = "book/tables"
""", ["parameters"]),
    md("""
## The runs behind the figures

One row per results file: the label used in the tables and figures, where the file comes from, and how
many questions it holds.
"""),
    code("""
from cfa_lib.report import figures, paper_tables
from cfa_lib.report.runs import collect_all

figures.use_style()
runs = collect_all(results_dir, include_reference)
paper_tables.runs_overview(runs)
"""),
    md("""
## The original study's runs, as published and re-graded

The study's files are shown twice: *as published* (their own verdicts, recomputed from their rows) and
*re-graded* by this toolkit's rules. Only what the stored rows still show is re-read: a refusal ("please
provide the options") is not a correct answer; an empty answer or a missing letter is excluded, not
counted; a gold number that is not the key's is replaced by the key's or its row excluded; a perturbation
that recorded no change is not valid. The table counts the rows each rule changed.
"""),
    code("paper_tables.regrade_changes(runs)"),
    md("""
## Option bias (Table P1a, Figure 1)

The same questions were asked with their answer choices (Format A) and without them (Format B).
*Option bias* is the accuracy with options minus the accuracy without them, on the questions where both
answers were obtained; its interval is a paired bootstrap. *b* counts the questions answered correctly
only with the options, *c* those answered correctly only without them; McNemar's test asks whether
*b* and *c* differ by more than chance (χ² with continuity correction, and the exact binomial p).
"""),
    code('paper_tables.table("table_p1_option_bias", runs, tables_dir)'),
    code('figures.figure("fig1_option_bias", runs, figures_dir)'),
    md("""
**Figure 1.** Accuracy with and without the answer choices, per model (n: paired questions). Error
bars: 95% Wilson intervals. Above each pair: the option bias in percentage points with its 95% paired
bootstrap interval, and the p-value of McNemar's test.
"""),
    md("""
## Three-tier grading (Table P1b, Figure 2)

The open answers (Format B) are graded on three levels: **A** exact (within tolerance), **B**
directional (right approach and magnitude under a different defensible assumption) and **C**
incorrect. Strict accuracy counts A only; lenient accuracy counts A and B.
"""),
    code('paper_tables.table("table_p1_three_tier", runs, tables_dir)'),
    code('figures.figure("fig2_three_tier", runs, figures_dir)'),
    md("""
**Figure 2.** Share of open answers at each level, per model (n: graded answers). The right edge of
the green segment is strict accuracy, the right edge of the yellow segment lenient accuracy; the error
bars on those edges are their 95% Wilson intervals.
"""),
    md("""
## Counterfactual questions (Figure 3)

The numbers (level 1: one number, level 2: two numbers) or the unknown (level 3) of a question are
changed and the new correct answer is computed and verified. The memorization gap is the accuracy on
the original questions minus the accuracy on their perturbed versions, over the questions whose
perturbation was valid.
"""),
    code('paper_tables.table("table_counterfactual", runs, tables_dir)'),
    md("""
**How much of CFA-Easy the test reaches.** The original study's generator changed the numbers of 702 (and
638) questions at level 1. For a third of those "valid" perturbations it recorded no change or said nothing
changed; most of the rest fell on questions with no number at all or whose numbers decide nothing, and no
new answer was checked by code ("unchecked" below). This toolkit perturbs only the questions with a
verified template and computes every new answer itself; notebook 03's census says why each other question
is left out. None of the study's perturbed items was reviewed; this toolkit's were, blind (notebook 03),
and the row "items valid in a blind review" gives the last round over both datasets with its 95% Wilson
interval.
"""),
    code("paper_tables.counterfactual_reach(runs)"),
    code('figures.figure("fig3_counterfactual", runs, figures_dir)'),
    md("""
**Figure 3.** Accuracy on the original questions and on their perturbed versions, per model and
perturbation level (n: valid perturbations with both answers graded), with 95% Wilson intervals; the
original accuracy is taken on the same questions as the perturbed one. Above each pair: the memorization
gap in percentage points.
"""),
    md("""
## Error categories of the incorrect answers (Figure 4)

Every Level C answer is given one error category by the judge. The table gives counts and, in
parentheses, the share of that model's categorised Level C answers.
"""),
    code('paper_tables.table("table_error_categories", runs, tables_dir)'),
    code('figures.figure("fig4_error_categories", runs, figures_dir)'),
    md("""
**Figure 4.** What went wrong in the incorrect (Level C) answers: share of each error category per
model (n: categorised Level C answers). "Unknown" and "unclassified" are answers the error judge could
not or did not categorise.
"""),
    md("""
## Option-biased questions, in the models' own words

A few questions per run that were answered correctly with the choices and incorrectly without them,
with the beginning of the answer given without the choices. The original study stored these answers cut
short.
"""),
    code('paper_tables.biased_examples(runs["option_bias"])'),
    md("""
## Comparing models

One row per model with its headline figures and their 95% intervals (paired bootstrap for the differences,
Wilson for the accuracies), as notebooks 01-03 compute them; the original study's runs re-graded. Beneath
it, the differences between models are tested on every item of every run, `cfa_lib.items_frame(runs)`
(one row per run × question × condition, to explore in JupyterLab).
"""),
    code("""
from IPython.display import Markdown, display

from cfa_lib import items_frame
from cfa_lib.compare.models import compare_items
from cfa_lib.compare.rankings import rank_items
from cfa_lib.report import comparison_figures, comparison_tables

items = items_frame(comparison_tables.compared_runs(runs))
comparison_tables.comparative_table(runs)
"""),
    md("""
### Is one model's effect different from another's, questions shared?

A hard question counts against every model, so the models' answers are not independent. A GEE (logit link,
exchangeable correlation among all answers to one question, robust covariance) fits correct ~ model ×
condition: option bias (Format A − Format B) on the open-answerable questions, and the memorization gap
(original − perturbed) on the valid pairs of each level. Each effect is a difference of probabilities in
percentage points with a delta-method 95% interval; the first test asks whether the effects differ at all
(Wald χ²), the pairwise differences carry Holm's correction. When some questions were answered by one model
only, the fit weights questions a little differently from the plain rates above (a few tenths of a point).
A model with fewer than 20 paired questions, or all right or all wrong in one condition, is left out and
named. A simulation of 200 studies checks the intervals' coverage (`benchmarks/model_comparison_simulation.py`).
"""),
    code("""
comparisons = compare_items(items)
effects = comparison_tables.effects_table(comparisons)
pairwise = comparison_tables.pairwise_table(comparisons)
display(*(table for table in (effects, pairwise) if not table.empty))
Markdown(comparison_tables.describe_comparisons(comparisons))
"""),
    md("""
### Does the ranking change without the options?

Each model's accuracy and rank with the options and without them, on the questions every ranked model
answered in both formats, and Kendall's τ between the two orders with a bootstrap interval over questions.
With two models τ is +1 or −1 by construction; it says more from three models on.
"""),
    code("""
ranking = rank_items(items)
if ranking.ranked:
    display(comparison_tables.ranking_table(ranking))
display(Markdown(comparison_tables.describe_ranking(ranking)))
comparison_figures.rank_slope_figure(ranking)
"""),
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

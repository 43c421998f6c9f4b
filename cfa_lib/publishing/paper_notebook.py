"""Notebook 04's source: the paper's tables and figures from every run, and the comparison of models."""

from __future__ import annotations

from cfa_lib.publishing.notebook_cells import code, md

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
from cfa_lib.publishing.notebook_errors import show_user_errors_briefly
from cfa_lib.report import explorer, figures, paper_tables
from cfa_lib.report.runs import collect_all

figures.use_style()
show_user_errors_briefly()  # a results file that cannot be read: one sentence
runs = collect_all(results_dir, include_reference)
paper_tables.runs_overview(runs)
"""),
    md("""
## The original study's runs, as published and re-graded

The study's files are shown twice: *as published* (their own verdicts, recomputed from their rows) and
*re-graded* by this toolkit's rules. Only what the stored rows still show is re-read: a refusal ("please
provide the options") is not a correct answer; an empty answer or a missing letter is excluded, not
counted; a gold number that is not the key's is replaced by the key's or its row excluded; a perturbation
that recorded no change is not valid; and the keys are the audited ones ({doc}`../keys`: a letter re-graded against
a corrected key, an answer judged against the old key or to a question set aside excluded). The table counts the
rows each rule changed.
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
    code("paper_tables.biased_examples(runs)"),
    md("""
## Where two models disagree, item by item

Every item the first two option-bias runs both counted and graded differently (the two reference runs,
unless this build ran other models), with both verdicts, the values read and the responses side by side.
Search, or filter a column below the table; each notebook's *Every item* section shows all items of its run.
"""),
    code("explorer.show(explorer.first_two_disagree(runs))"),
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

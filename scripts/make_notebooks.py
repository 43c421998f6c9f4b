"""Write the experiment notebooks 01-03 from this one readable source (outputs stripped).

Run `python scripts/make_notebooks.py` after editing; the notebooks stay plain narrative and calls
into cfa_lib, and their `parameters` cell is what papermill overrides.
"""

from __future__ import annotations

import json
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


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
    ours = sorted([line for line in imports if line not in ipython] + [
        "from cfa_lib.experiments.common import Settings, run_or_load",
        "from cfa_lib.report import figures, tables",
        "from cfa_lib.report.runs import by_model",
    ])
    return code("\n\n".join("\n".join(block) for block in (ipython, ours) if block) + "\n\nfigures.use_style()")


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
    code("""
model = "local"          # "local", "gpt-4o-mini", "ollama/llama3.1:8b", "local:/path/model.gguf"
dataset = "easy"         # "easy" (1032 questions) or "challenge" (90)
limit = 20               # None: the whole dataset
sample_seed = None       # None: the first `limit` questions; an integer: a reproducible random sample
judge_model = None       # None: gpt-4o-mini for OpenAI models, else the model itself
tolerance = 0.02         # relative tolerance of the numeric grading
max_concurrency = 8
results_path = None      # a results.json to analyse instead of running
""", ["parameters"]),
    setup("from IPython.display import Markdown, display", "from cfa_lib.experiments import option_bias"),
    md("## Run\n\nThe cost estimate comes first; completions are cached, so a rerun is free and an "
       "interrupted run resumes where it stopped."),
    code("""
settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed, judge_model=judge_model,
                    tolerance=tolerance, max_concurrency=max_concurrency)
data, path = run_or_load(option_bias, settings, results_path)
"""),
    md("## Summary"),
    code("tables.option_bias_summary(data)"),
    md("## The paired outcomes and McNemar's test"),
    code("display(tables.option_bias_contingency(data))\nMarkdown(tables.describe_mcnemar(data))"),
    code("figures.option_bias_figure(by_model(data))"),
    md("## The option-biased questions\n\nRight with the choices, wrong without them: the extracted open "
       "answer and the end of the response show why."),
    code("tables.option_biased_questions(data)"),
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
    code("""
model = "local"
dataset = "easy"
limit = 20
sample_seed = None
judge_model = None       # None: gpt-4o-mini for OpenAI models, else the model itself
gold_model = None        # None: the judge model derives the gold answers that options do not carry
tolerance = 0.02
max_concurrency = 8
results_path = None
""", ["parameters"]),
    setup("from IPython.display import display", "from cfa_lib.experiments import three_tier"),
    md("## Run"),
    code("""
settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed, judge_model=judge_model,
                    tolerance=tolerance, max_concurrency=max_concurrency)
data, path = run_or_load(three_tier, settings, results_path, gold_model=gold_model)
"""),
    md("## Level distribution"),
    code("display(tables.three_tier_levels(data))\ntables.three_tier_accuracy(data)"),
    code("figures.three_tier_figure(by_model(data))"),
    md("## Why the C answers are wrong"),
    code("figures.error_categories_figure(by_model(data))"),
    md("## Worked examples, level by level"),
    code("tables.three_tier_examples(data)"),
]

COUNTERFACTUAL = [
    md("""
# Counterfactual testing: reasoning or memory?

The numbers of a question are changed (level 1: one, level 2: two) or it asks for a different unknown
(level 3), and the model is asked again. A generator model proposes the question's parameters and a
formula; `cfa_lib` evaluates the formula itself, checks that it reproduces the correct option, draws
the new values, computes the new answer, checks the rewritten text and rebuilds the choices. Nothing a
model says about the new answer is trusted. The coverage table shows what share of the dataset
survives these checks.
"""),
    code("""
model = "local"
generator_model = None         # None: gpt-4o for OpenAI models (as in the study), else the model itself
dataset = "easy"
limit = 20
sample_seed = None
perturbation_levels = [1]      # any of 1, 2, 3
max_concurrency = 8
results_path = None
""", ["parameters"]),
    setup("from IPython.display import display", "from cfa_lib.experiments import counterfactual"),
    md("## Run"),
    code("""
settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed,
                    max_concurrency=max_concurrency)
data, path = run_or_load(counterfactual, settings, results_path, generator_model=generator_model,
                         perturbation_levels=perturbation_levels)
"""),
    md("## Coverage: which questions could be perturbed and verified"),
    code("display(tables.counterfactual_coverage(data))\ntables.counterfactual_reasons(data)"),
    md("## Accuracy on the originals and on their perturbations\n\nBoth on the same questions; the "
       "memorization gap is their difference, tested with McNemar's test on the pairs."),
    code("tables.counterfactual_accuracy(data)"),
    code("figures.counterfactual_figure(by_model(data))"),
    md("## Memorization suspects\n\nRight on the original, wrong once its numbers changed."),
    code("tables.counterfactual_suspects(data)"),
]

if __name__ == "__main__":
    notebooks = {"01_option_bias": OPTION_BIAS, "02_three_tier": THREE_TIER, "03_counterfactual": COUNTERFACTUAL}
    for name, cells in notebooks.items():
        path = NOTEBOOKS / f"{name}.ipynb"
        path.write_text(json.dumps(notebook(name, cells), indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path}")

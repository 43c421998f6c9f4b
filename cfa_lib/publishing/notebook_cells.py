"""The building blocks of the study's notebooks: cells, the shared parameters and setup, the Human check.

`notebooks` (the experiment notebooks) and `paper_notebook` (notebook 04) are written from these.
"""

from __future__ import annotations


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


def setup(*imports: str, uses: str = "by_model(") -> dict:
    """The import cell: the experiment's module and what its cells display with (`by_model` only when the
    notebook's code, `uses`, calls it)."""
    ipython = [line for line in imports if line.startswith("from IPython")]
    own = [line for line in imports if line not in ipython]
    shared = ["from cfa_lib.experiments.execute import run_or_load",
              "from cfa_lib.experiments.settings import Settings",
              "from cfa_lib.report import explorer, figures, notebook_tables",
              *(["from cfa_lib.report.runs import by_model"] if "by_model(" in uses else []),
              "from cfa_lib.publishing.notebook_errors import show_user_errors_briefly"]
    ours = sorted(own + [line for line in shared if not any(o.startswith(line) for o in own)])
    imports = "\n\n".join("\n".join(block) for block in (ipython, ours) if block)
    return code(f"{imports}\n\nfigures.use_style()\nshow_user_errors_briefly()  # a bad parameter: one sentence")


JUDGED_SETTINGS = (  # notebooks 01 and 02: the shared parameters, a judge and a tolerance
    "settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed, audited=audited,\n"
    "                    judge_model=judge_model, tolerance=tolerance, max_concurrency=max_concurrency, batch=batch,\n"
    "                    max_cost_usd=max_cost_usd, retry_failed=retry_failed)\n"
)


def parameters(own: str) -> dict:
    """The papermill parameters cell: what every experiment notebook takes, and the notebook's own."""
    return code(f"""model = "local"          # "local", "gpt-4o-mini", "ollama/llama3.1:8b", "local:/path/model.gguf"
dataset = "easy"         # "easy" (1032 questions) or "challenge" (90)
limit = 20               # None: the whole dataset
sample_seed = None       # None: the first `limit` questions; an integer: a reproducible random sample
audited = True           # grade against the audited answer keys (cfa_lib.key_audit); False: the dataset's, as the paper
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
    shipped reviews of the study's runs (`experiment`: the name the notebook imports the experiment by)."""
    return [md(HUMAN_CHECK_TEXT.format(extra=extra)), code(f"""
from IPython.display import Markdown, display

from cfa_lib.report import human_check

reviewed = human_check.reviewed_runs(run, {experiment})
display(Markdown(human_check.describe(run, reviewed)))
if reviewed:
    display(human_check.agreement_table(reviewed), human_check.by_path_table(reviewed),
            human_check.confusion_tables(reviewed), human_check.{last}(reviewed))
    display(human_check.figure(reviewed))
""")]

"""Write the study's four notebooks from this readable source (outputs stripped): the experiment notebooks
here, notebook 04 in `paper_notebook`, their building blocks in `notebook_cells`.

    python -m cfa_lib.publishing.notebooks   # → notebooks/*.ipynb

Run it after editing; the notebooks stay plain narrative and calls into cfa_lib, and their `parameters`
cell is what papermill overrides. A test fails when a committed notebook differs from what this writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cfa_lib.experiments.contract import Experiment
from cfa_lib.experiments.page import Page
from cfa_lib.experiments.page import code as page_code
from cfa_lib.experiments.page import md as page_md
from cfa_lib.experiments.registry import EXPERIMENTS, FIGURES_NOTEBOOK
from cfa_lib.paths import NOTEBOOKS_DIR
from cfa_lib.publishing.notebook_cells import (
    JUDGE_CORRECTION,
    JUDGED_SETTINGS,
    VALIDITY,
    cell,
    code,
    human_check,
    md,
    notebook,
    parameters,
    setup,
)
from cfa_lib.publishing.paper_notebook import PAPER_FIGURES

SETTINGS = (  # notebook 03 and any experiment without a judge: the shared parameters only
    "settings = Settings(model=model, dataset=dataset, limit=limit, sample_seed=sample_seed, audited=audited,\n"
    "                    max_concurrency=max_concurrency, batch=batch, max_cost_usd=max_cost_usd,\n"
    "                    retry_failed=retry_failed)\n"
)
DEFAULT_SECTIONS = (page_md("## Summary"), page_code("notebook_tables.summary_table(run)"))
EXPLORER = [md("""
## Every item

One row per question and condition: the prompt as the model saw it, the whole response as the results file
stores it, the value read, the verdict (or why the item is excluded) and the path that decided it, with the
grader's or the judge's reason. Type in the search box, or in a column's filter below the table (a verdict, a
path, a format or level); click a header to sort. Each count just below (and in option bias's paired outcomes)
shows its items: click it and the table keeps those rows (its filters say which; clear them for every item).
"""), code("explorer.show(explorer.items(run), counts=True)")]


def _constant(entry: Experiment) -> tuple[str, str]:
    """The module that defines the experiment and the name the registry's object has there."""
    module = type(entry).__module__
    return module, next(name for name, value in vars(sys.modules[module]).items() if value is entry)


def _call(head: str, arguments: list[str], width: int = 110) -> str:
    """`head(arg, arg, ...)` with its arguments wrapped under the first, as the notebooks write calls."""
    lines, line = [], f"{head}("
    for i, argument in enumerate(arguments):
        piece = argument + (", " if i < len(arguments) - 1 else ")")
        if len(line) + len(piece.rstrip()) > width and line.strip() != f"{head}(":
            lines.append(line.rstrip())
            line = " " * (len(head) + 1)
        line += piece
    return "\n".join([*lines, line])


def _review_section(entry: Experiment, name: str) -> list[dict]:
    """The Human check: what the review corrects (the judge's accuracies, or the items' validity)."""
    if entry.reviewed is None:
        return []
    if entry.judged:
        return human_check(name, JUDGE_CORRECTION, "correction_table")
    return human_check(name, VALIDITY if entry.reviewed[1] == "item" else "", "validity_table")


def experiment_cells(entry: Experiment) -> list[dict]:
    """An experiment notebook from the registry entry: its page's text around the shared parameters, setup,
    run cell and Human check."""
    page = entry.page or Page(f"# {entry.title}")
    module, name = _constant(entry)
    own = [n for n in page.parameter_names() if n in entry.Options.model_fields]
    run = _call("run = run_or_load", [name, "settings", "results_path", *(f"{n}={n}" for n in own)])
    run_md = "## Run" + (f"\n\n{page.run_note}" if page.run_note else "")
    sections = page.sections or DEFAULT_SECTIONS
    imports = setup(*page.imports, f"from {module} import {name}", uses="\n".join(text for _, text in sections))
    return [md(page.intro), parameters(page.parameters), imports, md(run_md),
            code((JUDGED_SETTINGS if entry.judged else SETTINGS) + run),
            *(cell(kind, text) for kind, text in sections), *EXPLORER, *_review_section(entry, name)]


def sources() -> dict[str, list[dict]]:
    """The cells of each notebook, by file name: one per registry entry, then the figures notebook."""
    return {**{e.notebook: experiment_cells(e) for e in EXPERIMENTS.values()}, FIGURES_NOTEBOOK: PAPER_FIGURES}


def render(file_name: str) -> str:
    """The text of one notebook file, exactly as it is written (and committed)."""
    cells = [dict(entry) for entry in sources()[file_name]]  # ids are set on copies: the sources stay as written
    return json.dumps(notebook(file_name, cells), indent=1, ensure_ascii=False) + "\n"


def write_all(directory: Path = NOTEBOOKS_DIR) -> list[Path]:
    """Write every notebook of the registry, plus the figures notebook; return their paths."""
    paths = []
    for file_name in sources():
        path = directory / file_name
        path.write_text(render(file_name), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all():
        print(f"wrote {written}")

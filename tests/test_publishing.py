"""What is published follows the experiment registry and the library: the committed notebooks and
_toc.yml are exactly what their generators write, and every table, figure and notebook the registry names
exists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cfa_lib.experiments.registry import EXPERIMENTS, FIGURES_NOTEBOOK
from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.publishing import notebooks, pages, pipeline, toc
from cfa_lib.report import figures, paper_tables


@pytest.mark.parametrize("file_name", sorted(notebooks.sources()))
def test_committed_notebook_is_what_the_generator_writes(file_name):
    committed = (PROJECT_ROOT / "notebooks" / file_name).read_text(encoding="utf-8")
    assert committed == notebooks.render(file_name), (
        f"notebooks/{file_name} differs from its source: run `python -m cfa_lib.publishing.notebooks`.")


def test_the_generator_writes_every_notebook_of_the_registry_and_only_those(tmp_path: Path):
    written = {p.name for p in notebooks.write_all(tmp_path)}
    assert written == {e.notebook for e in EXPERIMENTS.values()} | {FIGURES_NOTEBOOK}
    assert written == {p.name for p in (PROJECT_ROOT / "notebooks").glob("*.ipynb")}


def test_committed_toc_is_what_the_generator_writes():
    assert toc.TOC_PATH.read_text(encoding="utf-8") == toc.toc_yaml(), (
        "_toc.yml differs from the registry: run `python -m cfa_lib.publishing.toc`.")


def test_every_table_and_figure_of_the_registry_is_drawn_and_nothing_else():
    assert {t for e in EXPERIMENTS.values() for t in e.tables} == set(paper_tables.TABLES)
    assert {f for e in EXPERIMENTS.values() for f in e.figures} == set(figures.FIGURES)


def test_pipeline_and_book_take_their_notebooks_from_the_registry(tmp_path: Path):
    jobs = pipeline.plan(["local"], "easy", 2, None, None, tmp_path, tmp_path / "results", include_reference=True)
    assert [job.notebook.name for job in jobs] == [e.notebook for e in EXPERIMENTS.values()] + [FIGURES_NOTEBOOK]
    assert pages.EXECUTED == tuple(Path(job.notebook.name).stem for job in jobs)


def test_pipeline_passes_batch_and_the_spend_cap_to_every_experiment_notebook(tmp_path: Path):
    jobs = pipeline.plan(["gpt-4o-mini"], "easy", 10, None, None, tmp_path, tmp_path / "results", True,
                         batch=True, max_cost_usd=5.0)
    experiment_jobs = [job for job in jobs if job.notebook.name != FIGURES_NOTEBOOK]
    assert len(experiment_jobs) == len(EXPERIMENTS)
    assert all(job.parameters["batch"] is True and job.parameters["max_cost_usd"] == 5.0 for job in experiment_jobs)
    plain = pipeline.plan(["local"], "easy", 10, None, None, tmp_path, tmp_path / "results", True)
    assert not any("batch" in job.parameters or "max_cost_usd" in job.parameters for job in plain)
    assert not any("retry_failed" in job.parameters for job in plain)
    again = pipeline.plan(["local"], "easy", 10, None, None, tmp_path, tmp_path / "results", True, retry_failed=True)
    assert [job.parameters.get("retry_failed") for job in again] == [True] * len(EXPERIMENTS) + [None]


def test_notebooks_of_in_process_models_run_one_per_core_and_servers_one_at_a_time():
    assert pipeline.default_workers(["local", "local:/m.gguf"]) == (os.cpu_count() or 1)
    assert pipeline.default_workers(["local", "gpt-4o-mini"]) == 1
    assert pipeline.default_workers(["ollama/llama3.1:8b"]) == 1


@pytest.mark.parametrize("text", ["0", "-3", "inf", "five"])
def test_a_spend_cap_that_is_not_a_positive_amount_is_refused_by_name(text: str):
    with pytest.raises(Exception, match="--max-cost-usd"):
        pipeline.parse_cost(text)


def test_pipeline_asks_the_answer_format_variants_in_notebook_01_only(tmp_path: Path):
    jobs = pipeline.plan(["local"], "easy", 4, None, None, tmp_path, tmp_path / "results", True,
                         variants=["options_only", "shuffled"])
    with_variants = [job.notebook.name for job in jobs if "variants" in job.parameters]
    assert with_variants == [EXPERIMENTS["option_bias"].notebook]
    with pytest.raises(SystemExit):
        pipeline.main(["--models", "local", "--variants", "options_first"])

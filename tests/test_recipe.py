"""ARCHITECTURE.md's recipe for a new experiment, built as written: its module, its registry entry and its
notebook cell, run end to end (a scripted model passed in here, the embedded model in the slow test), and
its notebook generated from the declaration."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cfa_lib.data import load_dataset
from cfa_lib.experiments.execute import run_or_load
from cfa_lib.experiments.registry import EXPERIMENTS, load_results
from cfa_lib.experiments.settings import Settings
from cfa_lib.models import Completion
from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.publishing.notebooks import experiment_cells


def recipe_blocks() -> list[str]:
    """The Python blocks of the recipe section: the module, the registry entry, the notebook cell."""
    text = (PROJECT_ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Adding an experiment", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def recipe_module(folder: Path) -> ModuleType:
    """The recipe's module, written to a file and imported as it stands."""
    path = folder / "first_answer.py"
    path.write_text(recipe_blocks()[0], encoding="utf-8")
    spec = importlib.util.spec_from_file_location("first_answer_recipe", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The recipe's experiment, registered as its registry entry says, with results and cache in tmp_path."""
    module = recipe_module(tmp_path)
    assert "FIRST_ANSWER" in recipe_blocks()[1]  # the entry registers the module's object
    monkeypatch.setitem(EXPERIMENTS, module.FIRST_ANSWER.name, module.FIRST_ANSWER)
    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))
    yield module
    sys.modules.pop("first_answer_recipe", None)


def run_cell(module: ModuleType) -> dict:
    """The recipe's notebook cell, executed with the module's experiment in scope."""
    scope = {"FIRST_ANSWER": module.FIRST_ANSWER}
    exec(recipe_blocks()[2], scope)  # noqa: S102 - the documentation's own code is what is tested
    return scope


class AnswersC:
    """A client that answers every question "ANSWER: C" and costs nothing."""

    def __init__(self, name: str) -> None:
        self.name = name

    def check(self) -> None:
        pass

    def estimate(self, requests: list) -> str:
        return f"{len(requests)} requests, free"

    def complete_many(self, requests: list, **_: object) -> list[Completion]:
        return [Completion(text="Reasoning.\nANSWER: C", model=self.name, finish_reason="stop") for _ in requests]

    def engine_stats(self) -> dict:
        return {}


def test_the_recipe_runs_on_a_scripted_model_and_its_file_reads_back(recipe: ModuleType,
                                                                      capsys: pytest.CaptureFixture) -> None:
    run = run_or_load(recipe.FIRST_ANSWER, Settings(model="local", limit=2), clients={"local": AnswersC("local")})
    keys = [q.answer for q in load_dataset("easy", limit=2)]
    assert run.summary == recipe.FirstAnswerSummary(2, 2, keys.count("C") / 2, facts=run.summary.facts)
    assert [row.letter for row in run.rows] == ["C", "C"]
    assert "2 requests, free" in capsys.readouterr().out  # the estimate came first
    again = load_results(run.path)  # the registry finds the new experiment by the file's name
    assert again.experiment == "first_answer" and again.summary.to_dict() == run.summary.to_dict()
    assert run.metadata["experiment"] == "first_answer" and "judge_model" not in run.metadata


def test_the_recipe_gets_its_notebook_from_its_declaration(recipe: ModuleType) -> None:
    cells = experiment_cells(recipe.FIRST_ANSWER)
    sources = [cell["source"] for cell in cells]
    assert sources[0] == "# First answer\n\nEach question once, with its options."
    assert "from first_answer_recipe import FIRST_ANSWER" in sources[2]
    assert "run = run_or_load(FIRST_ANSWER, settings, results_path)" in sources[4]
    assert sources[-4:-2] == ["## Summary", "notebook_tables.summary_table(run)"]  # the default section
    # every item (and their counts); no review declared: no Human check
    assert sources[-1] == "explorer.show(explorer.items(run), counts=True)"


@pytest.mark.slow
def test_the_recipe_runs_on_the_embedded_model(recipe: ModuleType) -> None:
    run = run_cell(recipe)["run"]
    assert run.metadata["model"] == "local" and len(run.rows) == 2
    assert run.summary.n_questions == 2 and 0 <= run.summary.n_graded <= 2
    assert run.file_summary["usage"]["subject"]["n_calls"] == 2

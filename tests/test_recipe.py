"""ARCHITECTURE.md's recipe for a fourth experiment, built as written: its module, its registry entry and
its notebook cell, run end to end (scripted replies here, the embedded model in the slow test)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cfa_lib.data import load_dataset
from cfa_lib.experiments import execute, session
from cfa_lib.experiments.registry import EXPERIMENTS, load_results
from cfa_lib.models import Completion
from cfa_lib.paths import PROJECT_ROOT


def recipe_blocks() -> list[str]:
    """The Python blocks of the recipe section: the module, the registry entry, the notebook cell."""
    text = (PROJECT_ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Adding a fourth experiment", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def recipe_module(folder: Path) -> ModuleType:
    """The recipe's module, written to a file and imported as it stands."""
    path = folder / "calibration.py"
    path.write_text(recipe_blocks()[0], encoding="utf-8")
    spec = importlib.util.spec_from_file_location("calibration_recipe", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def calibration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The recipe's experiment, registered as its registry entry says, with results and cache in tmp_path."""
    module = recipe_module(tmp_path)
    assert "CALIBRATION" in recipe_blocks()[1]  # the entry registers the module's object
    monkeypatch.setitem(EXPERIMENTS, module.CALIBRATION.name, module.CALIBRATION)
    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))
    yield module
    sys.modules.pop("calibration_recipe", None)


def run_cell(module: ModuleType) -> dict:
    """The recipe's notebook cell, executed with the module's experiment in scope."""
    scope = {"CALIBRATION": module.CALIBRATION}
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


def test_the_recipe_runs_and_its_file_reads_back(calibration: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(session, "get_client", AnswersC)
    monkeypatch.setattr(execute, "get_client", AnswersC)
    run = run_cell(calibration)["run"]
    keys = [q.answer for q in load_dataset("easy", limit=2)]
    assert run.summary == calibration.CalibrationSummary(2, 2, keys.count("C") / 2, facts=run.summary.facts)
    assert [row.letter for row in run.rows] == ["C", "C"]
    assert "2 requests, free" in capsys.readouterr().out  # the estimate came first
    again = load_results(run.path)  # the registry finds the new experiment by the file's name
    assert again.experiment == "calibration" and again.summary.to_dict() == run.summary.to_dict()
    assert run.metadata["experiment"] == "calibration" and "judge_model" not in run.metadata


@pytest.mark.slow
def test_the_recipe_runs_on_the_embedded_model(calibration: ModuleType) -> None:
    run = run_cell(calibration)["run"]
    assert run.metadata["model"] == "local" and len(run.rows) == 2
    assert run.summary.n_questions == 2 and 0 <= run.summary.n_graded <= 2
    assert run.file_summary["usage"]["subject"]["n_calls"] == 2

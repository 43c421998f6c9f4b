"""The experiment notebooks run as a user runs them: papermill on the embedded model, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_plugin import run_papermill

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# One model cache for every end-to-end run of the embedded model (these notebooks, the variants, the book):
# their requests overlap (Formats A and B of the first questions, the judge's calibration items), and two
# runs at once on parallel test workers split the shared requests through the cache's claims.
MODEL_CACHE = ROOT / ".cache" / "test-notebooks"


def papermill(notebook: str, out: Path, env: dict[str, str], *params: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "papermill", str(NOTEBOOKS / notebook), str(out), "--cwd", str(ROOT),
            "-k", "python3"]
    for pair in params:
        name, value = pair.split("=", 1)
        args += ["-p", name, value]
    return run_papermill(args, env, 1500)


@pytest.fixture()
def run_env(tmp_path: Path) -> dict[str, str]:
    """A private results folder and a cache shared by the notebook tests (a rerun must be free)."""
    env = dict(os.environ)
    env["CFA_RESULTS_DIR"] = str(tmp_path / "results")
    env.setdefault("CFA_CACHE_DIR", str(MODEL_CACHE))
    return env


def outputs_text(path: Path) -> str:
    nb = json.loads(path.read_text())
    chunks = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            chunks.append(json.dumps(output))
    return "\n".join(chunks)


def only_results(env: dict[str, str], experiment: str) -> Path:
    files = sorted(Path(env["CFA_RESULTS_DIR"]).glob(f"{experiment}/*/results.json"))
    assert len(files) >= 1, f"no results file for {experiment}"
    return files[-1]


def test_every_notebook_has_a_parameters_cell_and_no_outputs() -> None:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        tags = [c["metadata"].get("tags", []) for c in nb["cells"]]
        assert any("parameters" in t for t in tags), path.name
        assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), path.name


@pytest.mark.slow
def test_option_bias_notebook_on_the_embedded_model(tmp_path: Path, run_env: dict[str, str]) -> None:
    out = tmp_path / "01.ipynb"
    done = papermill("01_option_bias.ipynb", out, run_env, "model=local", "limit=4")
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(only_results(run_env, "option_bias").read_text())
    assert data["metadata"]["model"] == "local" and data["metadata"]["n_questions"] == 4
    assert [r["question_id"] for r in data["results"]] == ["easy_0", "easy_1", "easy_2", "easy_3"]
    summary = data["summary"]
    assert summary["n_paired"] + summary["n_excluded"] == 4
    assert 0 <= summary["accuracy_with_options"] <= 1 and "p_exact" in summary["mcnemar_test"]
    assert all(r["response_with"] and r["response_without"] is not None for r in data["results"])
    text = outputs_text(out)
    assert "Traceback" not in text and "McNemar" in text

    # A rerun is served from the cache: every subject call is a hit.
    again = papermill("01_option_bias.ipynb", tmp_path / "01b.ipynb", run_env, "model=local", "limit=4")
    assert again.returncode == 0, again.stderr[-3000:]
    files = sorted(Path(run_env["CFA_RESULTS_DIR"]).glob("option_bias/*/results.json"))
    rerun = json.loads(files[-1].read_text())
    assert rerun["summary"]["usage"]["subject"]["cache_hits"] == 8
    assert [r["response_with"] for r in rerun["results"]] == [r["response_with"] for r in data["results"]]


@pytest.mark.slow
def test_three_tier_notebook_on_the_embedded_model(tmp_path: Path, run_env: dict[str, str]) -> None:
    out = tmp_path / "02.ipynb"
    done = papermill("02_three_tier.ipynb", out, run_env, "model=local", "limit=4")
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(only_results(run_env, "three_tier").read_text())
    summary = data["summary"]
    assert summary["n_graded"] + summary["n_excluded"] == 4
    assert sum(summary["level_distribution"].values()) == summary["n_graded"]
    for row in data["results"]:
        assert row["gold_answer"]["source"] in {"option", "text"}
        if row["level"] == "incorrect":
            assert row["error_attribution"]["error_category"] in {
                "conceptual_error", "formula_error", "assumption_error", "arithmetic_error", "reading_error",
                "incomplete_reasoning", "unclassified"}
    assert "Traceback" not in outputs_text(out)


@pytest.mark.slow
def test_counterfactual_notebook_on_the_embedded_model(tmp_path: Path, run_env: dict[str, str]) -> None:
    """The tiny model fails most formula extractions: that must show as honest counts, not a crash."""
    out = tmp_path / "03.ipynb"
    done = papermill("03_counterfactual.ipynb", out, run_env, "model=local", "limit=4")
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(only_results(run_env, "counterfactual").read_text())
    coverage = data["summary"]["coverage"]["1"]
    assert sum(coverage.values()) == 4  # every question accounted for at level 1
    assert set(coverage) == {"valid", "not_perturbable", "not_verifiable", "rejected"}
    assert coverage["not_perturbable"] >= 3  # easy_0..2 are conceptual; easy_3 is a compound-growth question
    assert all(r["original"]["answer"] in {"A", "B", "C", None} for r in data["results"])
    text = outputs_text(out)
    assert "Traceback" not in text and "level 1" in text

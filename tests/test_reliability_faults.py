"""A notebook run against a server failing 20% of requests (429, 500, stalls, dropped connections)
answers every question and writes the same results as a fault-free run."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from reliability_plugin import (
    FAKE_MODEL,
    cache_figures,
    comparable,
    fake_server,
    papermill,
    results_file,
    run_env,
    server_figures,
)
from reliability_report import record

FAULT_RATE = 0.2
LIMIT = 10
# A "hang" stalls 1.5 s: the engine's 120 s HTTP timeout cannot be shortened from a notebook parameter.
FAULTS = {"rate": FAULT_RATE, "hang_s": 1.5, "retry_after_s": 0.05}
NOTEBOOKS = {"01_option_bias.ipynb": "option_bias", "02_three_tier.ipynb": "three_tier"}


def failed_questions(data: dict) -> int:
    """Rows a failed model or judge call left without a grade (not the rows set aside on purpose, such as
    the verdicts of the fake judge, which fails its calibration: it answers every item the same way)."""
    summary = data["summary"]
    failed_rows = sum(n for reason, n in summary["excluded_reasons"].items() if "FAILED" in reason)
    return failed_rows + sum(u["failed"] for u in summary["usage"].values() if isinstance(u, dict) and "failed" in u)


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_a_run_with_injected_faults_equals_a_fault_free_run(tmp_path: Path, notebook: str) -> None:
    experiment = NOTEBOOKS[notebook]
    parameters = {"model": FAKE_MODEL, "judge_model": FAKE_MODEL, "limit": LIMIT}
    with fake_server() as (clean_url, clean_app), fake_server(**FAULTS) as (faulty_url, faulty_app):
        runs = {"clean": clean_url, "faulty": faulty_url}

        def run(name: str):
            env = run_env(tmp_path / name, runs[name])
            return papermill(notebook, tmp_path / f"{name}.ipynb", env, parameters)

        with ThreadPoolExecutor(2) as pool:
            done = dict(zip(runs, pool.map(run, runs), strict=True))
        clean_stats, faulty_stats = clean_app.stats(), faulty_app.stats()

    clean_file = results_file(tmp_path / "clean" / "results", experiment)
    faulty_file = results_file(tmp_path / "faulty" / "results", experiment)
    faulty_data = json.loads(faulty_file.read_text())
    equal = comparable(clean_file) == comparable(faulty_file)
    figures = {
        "questions": LIMIT,
        **server_figures(faulty_stats),
        "retries": cache_figures(tmp_path / "faulty" / "cache")["retries"],
        "failed questions": failed_questions(faulty_data),
        "requests of the fault-free run": clean_stats["requests"],
        "results equal": equal,
    }
    passed = (all(d.returncode == 0 for d in done.values()) and equal and figures["failed questions"] == 0
              and figures["injected_faults"] > 0 and figures["duplicates_paid"] == 0)
    record(f"faults/{experiment}", theme="Faults during a run",
           title=f"notebook {notebook[:2]} with {FAULT_RATE:.0%} of requests failing", passed=passed, figures=figures)

    for name, completed in done.items():
        assert completed.returncode == 0, f"{name} run: {completed.stderr[-3000:]}"
    assert figures["injected_faults"] >= 3, faulty_stats["faults"]
    assert figures["failed questions"] == 0
    assert figures["retries"] >= figures["requests"] - figures["answered"] > 0
    assert figures["duplicates_paid"] == 0
    assert faulty_stats["answered"] == clean_stats["answered"]  # the same completions, each paid once
    assert equal

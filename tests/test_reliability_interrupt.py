"""`kill -9` of a papermill run halfway, then the same command again: it finishes, no completion is paid
twice (the server counts answers per prompt), and the results equal those of an uninterrupted run."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from reliability_plugin import (
    FAKE_MODEL,
    comparable,
    control,
    fake_server,
    papermill,
    results_file,
    run_env,
    server_figures,
    start_papermill,
    wait_until,
)
from reliability_report import record

KERNEL_EXIT_S = 15.0  # ipykernel polls its parent once a second and exits when papermill is gone


@dataclass(frozen=True)
class Interrupted:
    notebook: str
    experiment: str
    params: dict
    answered_before_kill: int  # the server answers this many requests, then holds the rest in flight


CASES = [
    Interrupted("01_option_bias.ipynb", "option_bias",
                {"model": FAKE_MODEL, "judge_model": FAKE_MODEL, "limit": 10, "max_concurrency": 4}, 10),
    Interrupted("03_counterfactual.ipynb", "counterfactual",
                {"model": FAKE_MODEL, "generator_model": FAKE_MODEL, "limit": 10, "max_concurrency": 4}, 7),
]


def cached(cache_dir: Path) -> int:
    path = cache_dir / "completions.sqlite"
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM completions").fetchone()[0]
        except sqlite3.OperationalError:  # table not created yet
            return 0


def kill_9(run: subprocess.Popen) -> float:
    """SIGKILL papermill, as a researcher would; return how long its kernel took to notice and exit."""
    kernels = psutil.Process(run.pid).children(recursive=True)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(10)
    start = time.monotonic()
    _, alive = psutil.wait_procs(kernels, timeout=KERNEL_EXIT_S)
    for process in alive:  # a kernel that outlives papermill would go on paying: fail, but clean up
        process.kill()
    assert not alive, f"kernel {[p.pid for p in alive]} kept running {KERNEL_EXIT_S:.0f} s after papermill died"
    return time.monotonic() - start


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.experiment for c in CASES])
def test_kill_9_halfway_then_rerun_pays_nothing_twice(tmp_path: Path, case: Interrupted) -> None:
    with fake_server() as (reference_url, reference_app), fake_server(delay_s=0.02) as (url, app):
        reference = start_papermill(case.notebook, tmp_path / "reference.ipynb",
                                    run_env(tmp_path / "reference", reference_url), case.params,
                                    tmp_path / "reference.log")
        control(url, hold_after=case.answered_before_kill)
        env = run_env(tmp_path / "resumed", url)
        cache = Path(env["CFA_CACHE_DIR"])
        first = start_papermill(case.notebook, tmp_path / "killed.ipynb", env, case.params, tmp_path / "killed.log")
        try:
            wait_until(lambda: app.stats()["answered"] == case.answered_before_kill, "the first answers")
            wait_until(lambda: cached(cache) == case.answered_before_kill, "the answers to reach the cache")
            wait_until(lambda: app.stats()["requests"] > case.answered_before_kill, "requests held in flight")
            time.sleep(0.3)  # let the whole batch queue up behind the hold
        finally:
            kernel_exit_s = kill_9(first)
        in_flight = app.stats()["requests"] - case.answered_before_kill
        wait_until(lambda: app.stats()["aborted"] == in_flight, "the server to see the dead client hang up", 30)
        control(url, hold_after=None)
        rerun = papermill(case.notebook, tmp_path / "rerun.ipynb", env, case.params)
        reference.wait(300)
        stats, reference_stats = app.stats(), reference_app.stats()

    resumed_file = results_file(tmp_path / "resumed" / "results", case.experiment)
    equal = comparable(resumed_file) == comparable(results_file(tmp_path / "reference" / "results", case.experiment))
    served = server_figures(stats)
    figures = {
        "requests of an uninterrupted run": reference_stats["answered"],
        "answered before kill -9": case.answered_before_kill,
        "requests cut off in flight": in_flight,
        "kernel exited after papermill died (s)": round(kernel_exit_s, 1),
        "answered after the rerun": served["answered"] - case.answered_before_kill,
        "requests": served["requests"],
        "duplicates_paid": served["duplicates_paid"],
        "results equal": equal,
    }
    passed = rerun.returncode == reference.returncode == 0 and equal and served["duplicates_paid"] == 0 \
        and served["answered"] == reference_stats["answered"]
    record(f"interrupt/{case.experiment}", theme="Faults during a run",
           title=f"kill -9 of notebook {case.notebook[:2]} halfway, then the same command again", passed=passed,
           figures=figures)

    assert case.answered_before_kill < reference_stats["answered"], "the kill must come before the end"
    assert in_flight > 0
    assert served["duplicates_paid"] == 0
    assert all(p["answered"] <= 1 for p in stats["prompts"].values())
    assert served["answered"] == reference_stats["answered"]  # every completion paid exactly once overall
    assert equal
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert reference.returncode == 0, (tmp_path / "reference.log").read_text()[-3000:]
